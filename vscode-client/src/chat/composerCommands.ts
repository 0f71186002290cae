/**
 * What the composer's text asks for beyond a plain message: `/` slash commands, `#selection`
 * and `#file` mentions, `@` file attachments; and the message actions "Retry" and "Edit".
 */

import * as vscode from 'vscode';
import { Methods } from '../protocol';
import type { UserItem } from '../shared/viewState';
import type { ChatController } from './chatController';
import { describeError } from './chatController';
import { attachmentOf, exportCurrent, forkFromItem, workspacePath } from './sessionActions';

/** The slash commands, with what the completion list says about them. */
export const SLASH_COMMANDS: Readonly<Record<string, string>> = {
  new: 'Start a new chat',
  fork: 'Fork this chat at its last message',
  compact: 'Summarise older messages for the model (nothing is deleted)',
  export: 'Export this chat as a workflow',
  markdown: 'Export this chat as a Markdown transcript',
  clear: 'Start over: new chat, no attachments, default agent and model',
};

const MAX_FILE_RESULTS = 30;
const EXCLUDE = '{**/node_modules/**,**/.git/**,**/.venv/**,**/dist/**,**/out/**}';

/** Workspace files whose path contains `query` (for `@` completion). */
export async function findFiles(query: string): Promise<string[]> {
  const safe = query.replace(/[{}[\]*?!\\]/g, '');
  const uris = await vscode.workspace.findFiles(
    safe === '' ? '**/*' : `**/*${safe}*`,
    EXCLUDE,
    MAX_FILE_RESULTS * 4,
  );
  const paths = uris.map((uri) => workspacePath(uri));
  const lower = safe.toLowerCase();
  // Names that start with the query first, then shorter paths.
  const score = (path: string): number =>
    (path.split('/').at(-1)?.toLowerCase().startsWith(lower) === true ? 0 : 1000) + path.length;
  return paths.sort((a, b) => score(a) - score(b)).slice(0, MAX_FILE_RESULTS);
}

/** `@path`: attach a workspace file. */
export async function attachFile(controller: ChatController, relative: string): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  if (folder === undefined) {
    return;
  }
  try {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder, relative));
    controller.attach({
      id: `file-${Date.now().toString(36)}-${relative}`,
      kind: 'file',
      path: workspacePath(document.uri),
      language: document.languageId,
      text: document.getText(),
    });
  } catch (error) {
    void vscode.window.showWarningMessage(
      `Relavium: could not attach ${relative}: ${describeError(error).message}`,
    );
  }
}

async function runSlash(controller: ChatController, name: string): Promise<void> {
  const sessionId = controller.model.sessionId;
  switch (name) {
    case 'new':
      await controller.newChat();
      return;
    case 'clear':
      controller.model.takeAttachments();
      await controller.newChat();
      controller.model.header = { ...controller.model.header, nextAgent: undefined, nextModel: undefined };
      controller.changed();
      return;
    case 'export':
      await exportCurrent(controller, 'workflow');
      return;
    case 'markdown':
      await exportCurrent(controller, 'markdown');
      return;
    case 'fork': {
      const last = [...controller.model.items]
        .reverse()
        .find((item) => (item.kind === 'user' || item.kind === 'assistant') && item.sequence !== undefined);
      if (last === undefined) {
        void vscode.window.showInformationMessage('Relavium: nothing to fork yet.');
        return;
      }
      await forkFromItem(controller, last.id);
      return;
    }
    case 'compact':
      if (sessionId === undefined) {
        void vscode.window.showInformationMessage('Relavium: nothing to compact yet.');
        return;
      }
      try {
        await controller.server.request(Methods.compactSession, { sessionId, mode: 'summarize' });
      } catch (error) {
        const { code, message } = describeError(error);
        controller.model.pushError(code, `Could not compact: ${message}`, false);
        controller.changed();
      }
      return;
  }
}

/**
 * Handle what the user sent: a slash command runs; otherwise `#selection` / `#file` attach
 * the last active editor's selection / file, and the text goes out as a message.
 */
export async function submitComposer(
  controller: ChatController,
  editor: vscode.TextEditor | undefined,
  text: string,
): Promise<void> {
  const slash = /^\/(\w+)\s*$/.exec(text.trim());
  if (slash?.[1] !== undefined && slash[1] in SLASH_COMMANDS) {
    await runSlash(controller, slash[1]);
    return;
  }
  if (editor !== undefined && !editor.document.isClosed) {
    if (/(^|\s)#selection\b/.test(text) && !editor.selection.isEmpty) {
      controller.model.addAttachment(attachmentOf(editor));
    }
    if (/(^|\s)#file\b/.test(text)) {
      controller.model.addAttachment(attachmentOf(editor, true));
    }
  }
  await controller.send(text);
}

/** The sequence to fork at so that `user` and everything after it is left out (undefined: none). */
function sequenceBefore(controller: ChatController, user: UserItem): number | undefined {
  let before: number | undefined;
  for (const item of controller.model.items) {
    if ((item.kind === 'user' || item.kind === 'assistant') && item.sequence !== undefined) {
      if (user.sequence !== undefined && item.sequence < user.sequence) {
        before = Math.max(before ?? 0, item.sequence);
      }
    }
  }
  return before;
}

/**
 * Continue from just before a user message in a fork (the original chat stays in the list):
 * the fork holds everything before the message; a first message gets a fresh chat with the
 * same agent. Returns false when nothing happened.
 */
async function branchBefore(controller: ChatController, user: UserItem): Promise<boolean> {
  const sessionId = controller.model.sessionId;
  if (sessionId === undefined || user.sequence === undefined || controller.model.turnRunning) {
    return false;
  }
  const at = sequenceBefore(controller, user);
  const agent = controller.model.header.agentRef;
  if (at === undefined) {
    await controller.newChat();
    controller.model.setNext({ agent });
    controller.model.pushNotice('A new chat: the earlier one stays in the sessions list.');
    controller.changed();
    return true;
  }
  try {
    const fork = await controller.server.request<{ sessionId: string }>(Methods.forkSession, {
      sessionId,
      atSequence: at,
    });
    await controller.openSession(fork.sessionId);
    controller.model.pushNotice(
      'Forked before your message: the earlier version stays in the sessions list.',
    );
    controller.changed();
    return true;
  } catch (error) {
    const { code, message } = describeError(error);
    void vscode.window.showErrorMessage(`Relavium: fork failed (${code}): ${message}`);
    return false;
  }
}

function userItem(controller: ChatController, itemId: string): UserItem | undefined {
  const item = controller.model.findItem(itemId);
  if (item?.kind === 'user') {
    return item;
  }
  // An assistant message: the user message it answers.
  const index = controller.model.items.findIndex((candidate) => candidate.id === itemId);
  return controller.model.items
    .slice(0, Math.max(0, index))
    .reverse()
    .find((candidate): candidate is UserItem => candidate.kind === 'user');
}

/** "Edit": fork before the message and put its text back in the composer. */
export async function editMessage(controller: ChatController, itemId: string): Promise<void> {
  const user = userItem(controller, itemId);
  if (user !== undefined && (await branchBefore(controller, user))) {
    controller.setDraft(user.text);
  }
}

/** "Retry": the same message again, in a fork before it (the first answer stays reachable). */
export async function retryTurn(controller: ChatController, itemId: string): Promise<void> {
  const user = userItem(controller, itemId);
  if (user !== undefined && (await branchBefore(controller, user))) {
    await controller.send(user.text);
  }
}
