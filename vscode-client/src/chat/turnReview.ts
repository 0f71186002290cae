/**
 * Reviewing what a turn changed (docs/design.md §6.4), the VS Code side.
 *
 * After a turn that changed files the chat shows a review card (`relavium/turnChanges`). A
 * file opens in the native diff editor: on the left the file as it was before the turn (a
 * read-only `relavium-checkpoint:` document from `relavium/checkpointContent`), on the right
 * the file itself, editable. Keep / Undo — on the card, per file or for all, and as labelled
 * buttons in that diff editor's title bar — send `relavium/reviewChanges`; undo puts files
 * back through the editor (undoable), and a file the user changed since is left alone and
 * reported.
 */

import * as vscode from 'vscode';
import {
  Methods,
  type CheckpointContentResult,
  type ReviewChangesResult,
  type ReviewDecision,
  type TurnChangesResult,
} from '../protocol';
import { ServerRequestError } from '../server/relaviumServer';
import type { ChatController } from './chatController';
import { describeError } from './chatController';

/** JSON-RPC "method not found": a server from before the review requests. */
const METHOD_NOT_FOUND = -32601;

export const CHECKPOINT_SCHEME = 'relavium-checkpoint';
/** True while the active editor is a review diff (its title offers Keep / Undo). */
const REVIEW_CONTEXT = 'relavium.reviewDiff';

/** Which file of which turn a checkpoint document shows. */
interface CheckpointRef {
  sessionId: string;
  userSequence: number;
  path: string;
  /** An empty document (the right side of a file the turn deleted). */
  empty?: boolean;
}

function checkpointUri(ref: CheckpointRef): vscode.Uri {
  return vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: `/${ref.path}`, query: JSON.stringify(ref) });
}

function refOf(uri: vscode.Uri | undefined): CheckpointRef | undefined {
  if (uri?.scheme !== CHECKPOINT_SCHEME) {
    return undefined;
  }
  try {
    const ref = JSON.parse(uri.query) as Partial<CheckpointRef>;
    return typeof ref.sessionId === 'string' &&
      typeof ref.userSequence === 'number' &&
      typeof ref.path === 'string'
      ? {
          sessionId: ref.sessionId,
          userSequence: ref.userSequence,
          path: ref.path,
          empty: ref.empty === true,
        }
      : undefined;
  } catch {
    return undefined;
  }
}

function fileUri(path: string): vscode.Uri | undefined {
  if (path.startsWith('/')) {
    return vscode.Uri.file(path);
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder === undefined ? undefined : vscode.Uri.joinPath(folder.uri, path);
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

/** What a review did, in one sentence (undefined when there is nothing worth a message). */
function describeReview(result: ReviewChangesResult): string | undefined {
  const parts: string[] = [];
  if (result.conflicts.length > 0) {
    parts.push(
      `left as you have them (changed after the agent): ${result.conflicts.map((c) => c.path).join(', ')}`,
    );
  }
  if (result.failed.length > 0) {
    parts.push(`not undone: ${result.failed.map((f) => `${f.path} (${f.reason})`).join(', ')}`);
  }
  return parts.length === 0 ? undefined : `Relavium: ${parts.join('; ')}.`;
}

export class TurnReview implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly controller: ChatController) {
    this.subscriptions = [
      vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, this),
      vscode.window.tabGroups.onDidChangeTabs(() => {
        this.updateContext();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.updateContext();
      }),
    ];
  }

  /** The left side of a review diff: the file before the turn. */
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const ref = refOf(uri);
    if (ref === undefined || ref.empty === true) {
      return '';
    }
    const result = await this.controller.server.request<CheckpointContentResult>(Methods.checkpointContent, {
      sessionId: ref.sessionId,
      userSequence: ref.userSequence,
      path: ref.path,
    });
    return result.content ?? '';
  }

  /** Show (or refresh) the review card of a turn; the latest turn that changed files by default. */
  async fetch(sessionId: string, userSequence?: number): Promise<void> {
    try {
      const result = await this.controller.server.request<TurnChangesResult>(Methods.turnChanges, {
        sessionId,
        ...(userSequence === undefined ? {} : { userSequence }),
      });
      const turn = result.userSequence ?? userSequence;
      if (turn !== undefined && this.controller.model.sessionId === sessionId) {
        this.controller.model.showChanges(turn, result.files);
        this.controller.changed();
      }
    } catch (error) {
      // An older server without the request: no card. Anything else is said, once per turn.
      if (
        !(error instanceof ServerRequestError && error.rpcCode === METHOD_NOT_FOUND) &&
        this.controller.model.sessionId === sessionId
      ) {
        const { message } = describeError(error);
        this.controller.model.pushNotice(
          `Could not list the files this turn changed: ${message}`,
          'warning',
          `changes-failed:${userSequence ?? 'latest'}`,
        );
        this.controller.changed();
      }
    }
  }

  /** Open one changed file's diff against the turn's checkpoint. */
  async open(userSequence: number, path: string): Promise<void> {
    const sessionId = this.controller.model.sessionId;
    const target = fileUri(path);
    if (sessionId === undefined || target === undefined) {
      return;
    }
    const ref: CheckpointRef = { sessionId, userSequence, path };
    const right = (await exists(target)) ? target : checkpointUri({ ...ref, empty: true });
    await vscode.commands.executeCommand(
      'vscode.diff',
      checkpointUri(ref),
      right,
      `${path} (before the turn ↔ now)`,
      { preview: true },
    );
    this.updateContext();
  }

  /** Keep or undo a turn's changes: one file, or every file of the turn. */
  async decide(userSequence: number, decision: ReviewDecision, path?: string): Promise<void> {
    const sessionId = this.controller.model.sessionId;
    if (sessionId === undefined) {
      return;
    }
    this.controller.model.setChangesBusy(userSequence, true);
    this.controller.changed();
    try {
      const result = await this.controller.server.request<ReviewChangesResult>(Methods.reviewChanges, {
        sessionId,
        userSequence,
        decision,
        ...(path === undefined ? {} : { paths: [path] }),
      });
      const message = describeReview(result);
      if (message !== undefined) {
        void vscode.window.showWarningMessage(message);
      }
      if (decision === 'undo') {
        this.closeDiffs(sessionId, userSequence, [
          ...result.restored,
          ...result.deleted,
          ...result.unchanged,
        ]);
      }
    } catch (error) {
      const { code, message } = describeError(error);
      void vscode.window.showErrorMessage(`Relavium: ${decision} failed (${code}): ${message}`);
    }
    // The card refreshes from the server (the event does too; this covers an older server).
    await this.fetch(sessionId, userSequence);
  }

  /** Keep / Undo from the diff editor's title: the file of the active review diff. */
  async decideActive(decision: ReviewDecision): Promise<void> {
    const ref = this.activeRef();
    if (ref === undefined) {
      void vscode.window.showInformationMessage(
        'Relavium: open a changed file from the chat’s review card first.',
      );
      return;
    }
    if (ref.sessionId !== this.controller.model.sessionId) {
      void vscode.window.showInformationMessage(
        'Relavium: this diff belongs to another chat; open that chat first.',
      );
      return;
    }
    await this.decide(ref.userSequence, decision, ref.path);
    if (decision === 'keep') {
      this.closeDiffs(ref.sessionId, ref.userSequence, [ref.path]);
    }
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
  }

  private reviewTabs(): { tab: vscode.Tab; ref: CheckpointRef }[] {
    const found: { tab: vscode.Tab; ref: CheckpointRef }[] = [];
    for (const tab of vscode.window.tabGroups.all.flatMap((group) => group.tabs)) {
      if (tab.input instanceof vscode.TabInputTextDiff) {
        const ref = refOf(tab.input.original);
        if (ref !== undefined) {
          found.push({ tab, ref });
        }
      }
    }
    return found;
  }

  private activeRef(): CheckpointRef | undefined {
    const active = vscode.window.tabGroups.activeTabGroup.activeTab;
    return this.reviewTabs().find(({ tab }) => tab === active)?.ref;
  }

  private closeDiffs(sessionId: string, userSequence: number, paths: readonly string[]): void {
    const tabs = this.reviewTabs()
      .filter(
        ({ ref }) =>
          ref.sessionId === sessionId && ref.userSequence === userSequence && paths.includes(ref.path),
      )
      .map(({ tab }) => tab);
    if (tabs.length > 0) {
      void vscode.window.tabGroups.close(tabs);
    }
  }

  private updateContext(): void {
    void vscode.commands.executeCommand('setContext', REVIEW_CONTEXT, this.activeRef() !== undefined);
  }
}
