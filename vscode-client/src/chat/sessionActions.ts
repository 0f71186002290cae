/**
 * Session-level actions shared by the command palette and the chat view: the resume picker,
 * rename, delete, fork, export, "ask about selection", and opening untitled documents for the
 * server.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  Methods,
  type ExportFormat,
  type ExportSessionResult,
  type ForkSessionResult,
  type ListReplaysResult,
  type ListSessionsResult,
  type OpenUntitledParams,
  type OpenUntitledResult,
  type ReplaySessionParams,
  type ReplaySessionResult,
  type RewindResult,
  type ToolReplayMode,
} from '../protocol';
import type { ContextAttachment } from '../model/contextParts';
import type { ChatController } from './chatController';
import { describeError } from './chatController';
import { describeRewind } from '../model/format';
import { REPLAY_REPORT_NOTICE } from '../model/turnEvents';
import { sessionFacts } from '../model/sessionFacts';

const PICKER_DEBOUNCE_MS = 200;

function showFailure(action: string, error: unknown): void {
  const { code, message } = describeError(error);
  void vscode.window.showErrorMessage(`Relavium: ${action} failed (${code}): ${message}`);
}

/** A file name that is safe as the last segment of an untitled editor's path. */
export function untitledName(title: string): string {
  const base = path
    .basename(title.replace(/\\/g, '/'))
    .replace(/[^\w.\- ]+/g, '-')
    .trim();
  return base === '' || base === '.' || base === '..' ? 'relavium-export' : base.slice(0, 120);
}

/**
 * `relavium/openUntitled`: open `content` in a new, unsaved editor. With a title the editor is
 * named after it (in the workspace folder, so Save suggests that name) instead of
 * "Untitled-1"; exporting the same chat again reuses that editor with the new content.
 */
export async function openUntitled(params: OpenUntitledParams): Promise<OpenUntitledResult> {
  try {
    let document: vscode.TextDocument;
    if (params.title === undefined) {
      document = await vscode.workspace.openTextDocument({
        language: params.language,
        content: params.content,
      });
    } else {
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      const name = untitledName(params.title);
      const target =
        folder === undefined
          ? vscode.Uri.from({ scheme: 'untitled', path: name })
          : vscode.Uri.joinPath(folder, name).with({ scheme: 'untitled' });
      document = await vscode.workspace.openTextDocument(target);
      const edit = new vscode.WorkspaceEdit();
      const end = document.lineAt(Math.max(0, document.lineCount - 1)).range.end;
      edit.replace(document.uri, new vscode.Range(new vscode.Position(0, 0), end), params.content);
      await vscode.workspace.applyEdit(edit);
      if (document.languageId !== params.language) {
        document = await vscode.languages.setTextDocumentLanguage(document, params.language);
      }
    }
    await vscode.window.showTextDocument(document, { preview: false });
    return { opened: true };
  } catch {
    return { opened: false };
  }
}

/** "Resume Chat…": a quick pick that searches sessions as you type. */
export async function pickAndResume(controller: ChatController): Promise<void> {
  const picker = vscode.window.createQuickPick<vscode.QuickPickItem & { sessionId: string }>();
  picker.placeholder = 'Search chats (full text)';
  picker.matchOnDescription = true;
  picker.matchOnDetail = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const search = async (query: string): Promise<void> => {
    picker.busy = true;
    try {
      const result = await controller.server.request<ListSessionsResult>(Methods.listSessions, {
        query: query === '' ? undefined : query,
        limit: 50,
      });
      picker.items = result.sessions.map((session) => ({
        label: session.title ?? session.preview ?? 'Untitled chat',
        description: sessionFacts(session),
        detail: `${session.workingDir} · ${new Date(session.updatedAt).toLocaleString()}`,
        sessionId: session.id,
      }));
    } catch (error) {
      picker.items = [];
      picker.placeholder = `Search failed: ${describeError(error).message}`;
    } finally {
      picker.busy = false;
    }
  };
  picker.onDidChangeValue((value) => {
    clearTimeout(timer);
    timer = setTimeout(() => void search(value.trim()), PICKER_DEBOUNCE_MS);
  });
  const chosen = new Promise<string | undefined>((resolve) => {
    picker.onDidAccept(() => {
      resolve(picker.selectedItems[0]?.sessionId);
      picker.hide();
    });
    picker.onDidHide(() => {
      resolve(undefined);
    });
  });
  picker.show();
  void search('');
  const sessionId = await chosen;
  clearTimeout(timer);
  picker.dispose();
  if (sessionId !== undefined) {
    await vscode.commands.executeCommand('relavium.chat.focus');
    await controller.openSession(sessionId);
  }
}

/** Rename a session (the current one when no id is given). */
export async function renameSession(
  controller: ChatController,
  sessionId = controller.model.sessionId,
): Promise<void> {
  if (sessionId === undefined) {
    void vscode.window.showInformationMessage('Relavium: there is no chat to rename yet.');
    return;
  }
  const current = sessionId === controller.model.sessionId ? controller.model.header.title : undefined;
  const title = await vscode.window.showInputBox({
    prompt: 'New chat title',
    value: current ?? '',
    validateInput: (value) => (value.trim() === '' ? 'The title cannot be empty.' : undefined),
  });
  if (title === undefined) {
    return;
  }
  try {
    await controller.server.request(Methods.renameSession, { sessionId, title: title.trim() });
    if (sessionId === controller.model.sessionId) {
      controller.model.setTitle(title.trim());
      controller.changed();
    }
  } catch (error) {
    showFailure('rename', error);
  }
}

const REPLAY_MODES: { label: ToolReplayMode; detail: string }[] = [
  { label: 'auto', detail: 'Run pure and read-only tools again; serve the rest from the recording' },
  { label: 'recorded', detail: 'Serve every tool call from the recording' },
  { label: 'live', detail: 'Also run tools that read the editor or a remote server' },
  { label: 'mixed', detail: 'Run the tools you name; serve the rest from the recording' },
];

/**
 * Replay the current chat against its recordings into a new session, and open that session
 * in the chat view: its turns stream like any chat's (side-effecting tools never run).
 */
export async function replayCurrent(controller: ChatController): Promise<void> {
  const sessionId = controller.model.sessionId;
  if (sessionId === undefined) {
    void vscode.window.showInformationMessage('Relavium: there is no chat to replay yet.');
    return;
  }
  const mode = await vscode.window.showQuickPick(REPLAY_MODES, {
    placeHolder: 'Which tools run again during the replay?',
  });
  if (mode === undefined) {
    return;
  }
  const params: ReplaySessionParams = { sessionId, toolReplayMode: mode.label };
  if (mode.label === 'mixed') {
    const names = await vscode.window.showInputBox({
      prompt: 'Tools to run again (comma-separated names, e.g. read_file, grep)',
      validateInput: (value) => (value.trim() === '' ? 'Name at least one tool.' : undefined),
    });
    if (names === undefined) {
      return;
    }
    params.liveTools = names
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
  }
  try {
    const result = await controller.server.request<ReplaySessionResult>(Methods.replaySession, params);
    await controller.openSession(result.replaySessionId);
    controller.model.pushNotice(
      `Replay (${mode.label}) of ${result.turnsToReplay} turn(s) from the recordings: a new chat.`,
    );
    // A short replay may have ended before the chat followed it: its audit row says how it
    // went (the row is written before the event, so one of the two always shows).
    const audit = await controller.server.request<ListReplaysResult>(Methods.listReplays, {
      sessionId: result.replaySessionId,
    });
    const row = audit.replays.find((replay) => replay.replaySessionId === result.replaySessionId);
    if (
      row !== undefined &&
      row.status !== 'running' &&
      controller.model.sessionId === result.replaySessionId
    ) {
      const verdict =
        row.status === 'matched'
          ? 'identical to the original'
          : row.status === 'stopped'
            ? 'stopped before its last turn'
            : `${row.differences} difference(s)`;
      controller.model.pushNotice(
        `Replay (${row.mode}) finished: ${row.turnsReplayed} turn(s), ${verdict}; tool calls: ` +
          `${row.recordedToolCalls} from the recording, ${row.liveToolCalls} run again.`,
        row.status === 'matched' ? 'info' : 'warning',
        REPLAY_REPORT_NOTICE,
      );
    }
    controller.changed();
  } catch (error) {
    showFailure('replay', error);
  }
}

/** Delete (soft) a session after confirmation. */
export async function deleteSession(
  controller: ChatController,
  sessionId = controller.model.sessionId,
): Promise<void> {
  if (sessionId === undefined) {
    return;
  }
  const choice = await vscode.window.showWarningMessage(
    'Delete this chat? It disappears from the list and search.',
    { modal: true },
    'Delete',
  );
  if (choice !== 'Delete') {
    return;
  }
  try {
    await controller.server.request(Methods.deleteSession, { sessionId });
    await controller.forget(sessionId);
  } catch (error) {
    showFailure('delete', error);
  }
}

/** Fork the current session at an item's message and switch to the fork. */
export async function forkFromItem(controller: ChatController, itemId: string): Promise<void> {
  const sessionId = controller.model.sessionId;
  const item = controller.model.findItem(itemId);
  if (
    sessionId === undefined ||
    (item?.kind !== 'user' && item?.kind !== 'assistant') ||
    item.sequence === undefined
  ) {
    return;
  }
  try {
    const result = await controller.server.request<ForkSessionResult>(Methods.forkSession, {
      sessionId,
      atSequence: item.sequence,
    });
    await controller.openSession(result.sessionId);
    controller.model.pushNotice('Forked: this is a new chat with the conversation up to that message.');
    controller.changed();
  } catch (error) {
    showFailure('fork', error);
  }
}

/**
 * "Restore to here" on a user message: the agent's file changes since that message go back
 * (as editor edits, undoable), and the chat continues in a fork that ends before it.
 */
export async function rewindToItem(controller: ChatController, itemId: string): Promise<void> {
  const sessionId = controller.model.sessionId;
  const item = controller.model.findItem(itemId);
  if (sessionId === undefined || item?.kind !== 'user' || item.sequence === undefined) {
    return;
  }
  const choice = await vscode.window.showWarningMessage(
    'Restore the files the agent changed since this message, and continue the chat from before it?',
    { modal: true, detail: 'Files you changed yourself since are left alone. The original chat is kept.' },
    'Restore',
  );
  if (choice !== 'Restore') {
    return;
  }
  try {
    const result = await controller.server.request<RewindResult>(Methods.rewind, {
      sessionId,
      toSequence: item.sequence,
    });
    await controller.openSession(result.sessionId);
    controller.model.pushNotice(
      `Restored to before that message: ${describeRewind(result)}.`,
      'info',
      undefined,
      {
        kind: 'undoRewind',
        label: 'Undo',
        sessionId,
        rewindId: result.rewindId,
      },
    );
    controller.changed();
  } catch (error) {
    showFailure('restore', error);
  }
}

const EXPORT_LANGUAGES: Record<ExportFormat, string> = {
  workflow: 'yaml',
  jsonl: 'jsonl',
  markdown: 'markdown',
};

/**
 * Export the current chat, opened as an untitled editor: a workflow scaffold (YAML) or the
 * readable transcript (Markdown).
 */
export async function exportCurrent(controller: ChatController, format: ExportFormat): Promise<void> {
  const sessionId = controller.model.sessionId;
  if (sessionId === undefined) {
    void vscode.window.showInformationMessage('Relavium: start or resume a chat before exporting it.');
    return;
  }
  try {
    const result = await controller.server.request<ExportSessionResult>(Methods.exportSession, {
      sessionId,
      format,
      open: true,
    });
    if (!result.opened) {
      // The server did not open it through relavium/openUntitled: open it here instead.
      await openUntitled({
        language: EXPORT_LANGUAGES[result.format],
        content: result.content,
        title: path.basename(result.suggestedPath),
      });
    }
  } catch (error) {
    showFailure('export', error);
  }
}

let attachmentCounter = 0;

/** The workspace-relative path of a document (its file name outside any workspace folder). */
export function workspacePath(uri: vscode.Uri): string {
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  return folder === undefined ? path.basename(uri.fsPath) : path.relative(folder.uri.fsPath, uri.fsPath);
}

/** A context attachment for an editor's selection (or, with `whole`, its whole document). */
export function attachmentOf(editor: vscode.TextEditor, whole = false): ContextAttachment {
  const { document, selection } = editor;
  attachmentCounter += 1;
  const base = {
    id: `ctx-${attachmentCounter}`,
    path: workspacePath(document.uri),
    language: document.languageId,
  };
  if (whole || selection.isEmpty) {
    return { ...base, kind: 'file', text: document.getText() };
  }
  const lastLine =
    selection.end.character === 0 && selection.end.line > selection.start.line
      ? selection.end.line
      : selection.end.line + 1;
  return {
    ...base,
    kind: 'selection',
    lines: { start: selection.start.line + 1, end: lastLine },
    text: document.getText(selection),
  };
}

/** "Ask About Selection": attach the selection to the next message and focus the chat. */
export async function askAboutSelection(
  controller: ChatController,
  editor: vscode.TextEditor | undefined,
): Promise<void> {
  if (editor === undefined || editor.selection.isEmpty) {
    void vscode.window.showInformationMessage('Relavium: select some code first.');
    return;
  }
  controller.attach(attachmentOf(editor));
  await vscode.commands.executeCommand('relavium.chat.focus');
  controller.post({ type: 'focusInput' });
}
