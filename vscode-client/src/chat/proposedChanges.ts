/**
 * A proposed file change in VS Code's native diff editor, while its approval waits.
 *
 * The proposed text is a virtual document (scheme `relavium-proposed`, the call id in the
 * query) rebuilt from the editor's text and the unified diff of the approval request; the
 * diff editor's title offers Accept / Reject (`relavium.acceptChange` / `relavium.rejectChange`),
 * which answer the same request as the chat card's buttons.
 */

import * as vscode from 'vscode';
import { applyUnifiedDiff } from '../model/unifiedDiff';
import type { RequestApprovalParams } from '../protocol';

export const PROPOSED_SCHEME = 'relavium-proposed';

function fileUri(path: string): vscode.Uri | undefined {
  if (path.startsWith('/')) {
    return vscode.Uri.file(path);
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder === undefined ? undefined : vscode.Uri.joinPath(folder.uri, path);
}

export class ProposedChanges implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? '';
  }

  /** The call a proposed document belongs to. */
  callIdOf(uri: vscode.Uri | undefined): string | undefined {
    return uri?.scheme === PROPOSED_SCHEME && uri.query !== '' ? uri.query : undefined;
  }

  /** Open the change of an approval request beside the file; false when it cannot be shown. */
  async open(params: RequestApprovalParams): Promise<boolean> {
    const diff = params.diff;
    const target = diff === undefined ? undefined : fileUri(diff.path);
    if (diff === undefined || diff.truncated || target === undefined) {
      void vscode.window.showInformationMessage('Relavium: this change is too large to open as a diff.');
      return false;
    }
    const original = diff.created ? '' : (await vscode.workspace.openTextDocument(target)).getText();
    const proposed = applyUnifiedDiff(original, diff.unified);
    if (proposed === undefined) {
      void vscode.window.showWarningMessage(
        `Relavium: ${diff.path} changed since the agent proposed this edit; the diff no longer applies.`,
      );
      return false;
    }
    this.texts.set(params.callId, proposed);
    const right = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: '/' + diff.path, query: params.callId });
    const left = diff.created ? vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: '/' + diff.path }) : target;
    await vscode.commands.executeCommand('vscode.diff', left, right, `${diff.path} ↔ proposed by Relavium`);
    return true;
  }

  /** The call was answered: close its diff editor and drop its text. */
  forget(callId: string): void {
    if (!this.texts.delete(callId)) {
      return;
    }
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter(
        (tab) => tab.input instanceof vscode.TabInputTextDiff && this.callIdOf(tab.input.modified) === callId,
      );
    if (tabs.length > 0) {
      void vscode.window.tabGroups.close(tabs);
    }
  }

  dispose(): void {
    this.registration.dispose();
    this.texts.clear();
  }
}
