/** VS Code's side of {@link BroadWorkingDirConsent}: a modal, and "Open Folder…". */

import * as vscode from 'vscode';
import type { BroadDirAnswer, BroadDirPrompt } from '../model/broadWorkingDir';

const OPEN_FOLDER = 'Open a Project Folder…';
const ALLOW = 'Allow for This Window';

export const broadDirPrompt: BroadDirPrompt = {
  async ask(workingDir: string, reason: string): Promise<BroadDirAnswer> {
    const answer = await vscode.window.showWarningMessage(
      `Start a Relavium session in ${workingDir}?`,
      {
        modal: true,
        detail:
          `This is ${reason}: the agent could read and change every file under it. ` +
          'Open a project folder instead, or allow it (remembered for this workspace).',
      },
      OPEN_FOLDER,
      ALLOW,
    );
    return answer === ALLOW ? 'allow' : answer === OPEN_FOLDER ? 'openFolder' : undefined;
  },
  openFolder(): Thenable<unknown> {
    return vscode.commands.executeCommand('vscode.openFolder');
  },
};
