/** Routes validated webview messages to the controller and the session actions. */

import * as vscode from 'vscode';
import { isSafeExternalLink, type WebviewToHost } from '../shared/webviewMessages';
import { applyCodeBlock } from './applyCode';
import { attachFile, editMessage, findFiles, retryTurn, submitComposer } from './composerCommands';
import type { ApprovalBroker } from './approvals';
import type { ServerSetup } from '../install/serverSetup';
import { setUpModel } from './modelSetup';
import { pickAgent, pickModel } from './pickers';
import type { ChatController } from './chatController';
import { deleteSession, exportCurrent, forkFromItem, renameSession, rewindToItem } from './sessionActions';

/** What the router needs besides the controller. */
export interface RouterDeps {
  controller: ChatController;
  approvals: ApprovalBroker;
  /** Getting a server: the banner's Install…, Choose executable… and Show log. */
  setup: ServerSetup;
  /** The text editor "Insert at cursor" writes into. */
  lastEditor(): vscode.TextEditor | undefined;
}

async function insertAtCursor(editor: vscode.TextEditor | undefined, text: string): Promise<void> {
  if (editor === undefined || editor.document.isClosed) {
    void vscode.window.showInformationMessage('Relavium: open an editor to insert the code into.');
    return;
  }
  await vscode.window.showTextDocument(editor.document, editor.viewColumn);
  await editor.edit((builder) => {
    for (const selection of editor.selections) {
      builder.replace(selection, text);
    }
  });
}

/** Handle one message from the chat webview. */
export async function routeWebviewMessage(deps: RouterDeps, message: WebviewToHost): Promise<void> {
  const { controller } = deps;
  switch (message.type) {
    case 'ready':
      controller.onViewReady();
      return;
    case 'send':
      controller.tookSend();
      await submitComposer(controller, deps.lastEditor(), message.text);
      return;
    case 'dismissImplicit':
      controller.implicit.dismiss();
      return;
    case 'openChange':
      await controller.review.open(message.userSequence, message.path);
      return;
    case 'reviewChanges':
      await controller.review.decide(message.userSequence, message.decision, message.path);
      return;
    case 'noticeAction':
      await controller.noticeAction(message.itemId);
      return;
    case 'findFiles':
      controller.post({ type: 'files', query: message.query, files: await findFiles(message.query) });
      return;
    case 'attachFile':
      await attachFile(controller, message.path);
      return;
    case 'editMessage':
      await editMessage(controller, message.itemId);
      return;
    case 'retryTurn':
      await retryTurn(controller, message.itemId);
      return;
    case 'abort':
      await controller.abort();
      return;
    case 'approval':
      deps.approvals.decide(message.callId, message.decision);
      return;
    case 'openDiff':
      await deps.approvals.openDiff(message.callId);
      return;
    case 'openTerminal':
      controller.outputTerminals.show(message.callId);
      return;
    case 'retry': {
      const item = controller.model.findItem(message.itemId);
      if (item?.kind === 'error' && item.retryText !== undefined) {
        await controller.send(item.retryText);
      }
      return;
    }
    case 'fork':
      await forkFromItem(controller, message.itemId);
      return;
    case 'rewind':
      await rewindToItem(controller, message.itemId);
      return;
    case 'copy':
      await vscode.env.clipboard.writeText(message.text);
      void vscode.window.setStatusBarMessage('Relavium: copied', 2000);
      return;
    case 'insert':
      await insertAtCursor(deps.lastEditor(), message.text);
      return;
    case 'apply':
      await applyCodeBlock(controller, deps.lastEditor(), message.text, message.lang);
      return;
    case 'openLink':
      if (isSafeExternalLink(message.href)) {
        await vscode.env.openExternal(vscode.Uri.parse(message.href));
      }
      return;
    case 'listSessions':
      await controller.listSessions(message.query);
      return;
    case 'resume':
      await controller.openSession(message.sessionId);
      return;
    case 'rename':
      await renameSession(controller, message.sessionId);
      return;
    case 'delete':
      await deleteSession(controller, message.sessionId);
      return;
    case 'newChat':
      await controller.newChat();
      return;
    case 'export':
      await exportCurrent(controller, 'workflow');
      return;
    case 'loadEarlier':
      await controller.loadEarlier();
      return;
    case 'detach':
      controller.detach(message.id);
      return;
    case 'pickAgent':
      await pickAgent(controller);
      return;
    case 'pickModel':
      await pickModel(controller);
      return;
    case 'restartServer':
      await controller.server.restart();
      return;
    case 'installServer':
      await deps.setup.installAndStart(false);
      return;
    case 'chooseExecutable':
      await deps.setup.chooseExecutable();
      return;
    case 'showLog':
      deps.setup.showLog();
      return;
    case 'setupModel':
      await setUpModel(controller);
      return;
  }
}
