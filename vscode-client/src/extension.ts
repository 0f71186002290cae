/**
 * Extension entry point: wires the server connection, the chat controller, the sidebar view,
 * the editor-state reporter and the commands together.
 */

import * as vscode from 'vscode';
import type { RequestApprovalResult } from './protocol';
import { ApprovalBroker } from './chat/approvals';
import { ChatController } from './chat/chatController';
import { MemoryFileSystem, editWorkspaceMemory } from './chat/memoryFileSystem';
import { MemoryProposalReview } from './chat/memoryProposals';
import { ProposedChanges } from './chat/proposedChanges';
import { setUpModel } from './chat/modelSetup';
import {
  askAboutSelection,
  exportCurrent,
  openUntitled,
  pickAndResume,
  renameSession,
  replayCurrent,
} from './chat/sessionActions';
import { ServerInstaller } from './install/serverInstaller';
import { ServerSetup } from './install/serverSetup';
import { unsupportedPlatform } from './install/platforms';
import { EditorStateReporter } from './server/editorState';
import { RelaviumServer } from './server/relaviumServer';
import { publishTestDiagnostic } from './server/testDiagnostic';
import { MEMORY_SCHEME } from './model/workspaceMemory';
import { CHAT_VIEW_ID, ChatViewProvider } from './view/chatViewProvider';

let server: RelaviumServer | undefined;

/** Called by VS Code when the extension activates. */
export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Relavium');
  const unsupported = unsupportedPlatform(process.platform);
  if (unsupported !== undefined) {
    output.appendLine(unsupported);
    void vscode.window.showErrorMessage(unsupported);
    context.subscriptions.push(output);
    return;
  }
  publishTestDiagnostic(context);
  const setup = new ServerSetup(output, new ServerInstaller(context, output));
  // The handlers run only after start(), by which time `chat` and `approvals` exist.
  const relavium: RelaviumServer = new RelaviumServer(
    output,
    {
      onSessionEvent: (event) => {
        chat.onSessionEvent(event);
        proposals.onSessionEvent(event);
      },
      onSessionsChanged: (params) => {
        chat.onSessionsChanged(params);
      },
      onWorkspaceMemoryChanged: (params) => {
        memory.onMemoryChanged(params);
      },
      requestApproval: (params, token): Promise<RequestApprovalResult> => approvals.request(params, token),
      openUntitled,
    },
    setup.hooks,
  );
  setup.attach(relavium);
  server = relavium;
  const chat: ChatController = new ChatController(relavium, context.workspaceState);
  const memory: MemoryFileSystem = new MemoryFileSystem(relavium);
  const proposals: MemoryProposalReview = new MemoryProposalReview(relavium);
  const proposed = new ProposedChanges();
  const answerFromDiff = (decision: 'approve' | 'reject') => (uri?: vscode.Uri) => {
    const callId = proposed.callIdOf(uri ?? vscode.window.activeTextEditor?.document.uri);
    if (callId === undefined || !approvals.decide(callId, decision)) {
      void vscode.window.showInformationMessage('Relavium: no approval is waiting for this change.');
    }
  };
  const approvals: ApprovalBroker = new ApprovalBroker(
    {
      canShowInline: (sessionId): boolean => chat.showsSession(sessionId),
      opened: (params) => {
        chat.model.openApproval(params);
        chat.changed();
      },
      decided: (callId, decision) => {
        chat.model.approvalDecided(callId, decision);
        chat.changed();
      },
      withdrawn: (callId) => {
        chat.model.approvalWithdrawn(callId);
        chat.changed();
      },
    },
    proposed,
  );
  const editorState = new EditorStateReporter((method, params) => {
    relavium.notify(method, params);
  });
  const provider = new ChatViewProvider(
    context.extensionUri,
    { controller: chat, approvals: approvals, setup, lastEditor: () => editorState.editor },
    () => {
      approvals.escalateAll();
    },
  );

  context.subscriptions.push(
    output,
    relavium,
    chat,
    editorState,
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, provider),
    relavium.onDidChangeState((state) => {
      if (state.state !== 'running') {
        // The server that asked is gone: its questions can no longer be answered.
        approvals.dropAll();
      }
      chat.onConnectionChanged();
    }),
    relavium.onDidBecomeReady(() => {
      editorState.flush(true);
      void chat.onServerReady();
    }),
    vscode.commands.registerCommand('relavium.newChat', async () => {
      await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
      await chat.newChat();
    }),
    vscode.commands.registerCommand('relavium.resumeChat', () => pickAndResume(chat)),
    vscode.commands.registerCommand('relavium.exportChat', () => exportCurrent(chat, 'workflow')),
    vscode.commands.registerCommand('relavium.exportChatMarkdown', () => exportCurrent(chat, 'markdown')),
    vscode.commands.registerCommand('relavium.renameChat', () => renameSession(chat)),
    vscode.commands.registerCommand('relavium.replayChat', () => replayCurrent(chat)),
    vscode.commands.registerCommand('relavium.showHistory', async () => {
      await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
      chat.showHistory();
    }),
    vscode.commands.registerCommand('relavium.keepFileChange', () => chat.review.decideActive('keep')),
    vscode.commands.registerCommand('relavium.undoFileChange', () => chat.review.decideActive('undo')),
    vscode.commands.registerCommand('relavium.abortTurn', () => chat.abort()),
    vscode.commands.registerCommand('relavium.askAboutSelection', () => {
      editorState.flush(true);
      return askAboutSelection(chat, vscode.window.activeTextEditor ?? editorState.editor);
    }),
    vscode.commands.registerCommand('relavium.restartServer', () => relavium.restart()),
    vscode.commands.registerCommand('relavium.reinstallServer', () => setup.installAndStart(true)),
    vscode.commands.registerCommand('relavium.showSetup', () => {
      setup.showSetup();
    }),
    vscode.commands.registerCommand('relavium.setupModel', () => setUpModel(chat)),
    memory,
    vscode.workspace.registerFileSystemProvider(MEMORY_SCHEME, memory, { isCaseSensitive: true }),
    vscode.commands.registerCommand('relavium.editWorkspaceMemory', () => editWorkspaceMemory()),
    vscode.commands.registerCommand('relavium.reviewMemoryProposals', () => proposals.review()),
    proposed,
    vscode.commands.registerCommand('relavium.acceptChange', answerFromDiff('approve')),
    vscode.commands.registerCommand('relavium.rejectChange', answerFromDiff('reject')),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration('relavium')) {
        return;
      }
      if (event.affectsConfiguration('relavium.server') && relavium.state.state === 'stopped') {
        // Nothing runs that a restart would interrupt: start with the new command at once
        // (also what a remote window needs when its machine settings arrive after activation).
        await relavium.start();
        return;
      }
      const choice = await vscode.window.showInformationMessage(
        'Relavium settings changed. Restart the server to apply them?',
        'Restart',
      );
      if (choice === 'Restart') {
        await relavium.restart();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      if (relavium.state.state === 'stopped') {
        void relavium.restart();
      }
    }),
  );
  void relavium.start();
}

/** Called by VS Code on shutdown: stop the server cleanly. */
export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
