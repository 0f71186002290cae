/**
 * "Apply" on a code block: the code goes into a file as an agent edit would — through the
 * server's `write_file` (the session's jail, the approval prompt shown as a tool card, the
 * editor's undoable `workspace/applyEdit`), never written by the extension itself.
 *
 * With a selection in the last active editor, the code replaces the selection; otherwise the
 * user picks between replacing that file and writing a new one.
 */

import * as vscode from 'vscode';
import { Methods, type ApplyCodeResult } from '../protocol';
import type { ChatController } from './chatController';
import { describeError } from './chatController';
import { workspacePath } from './sessionActions';

interface Target {
  path: string;
  content: string;
}

async function chooseTarget(
  editor: vscode.TextEditor | undefined,
  code: string,
): Promise<Target | undefined> {
  if (editor !== undefined && !editor.document.isClosed && !editor.document.isUntitled) {
    const { document, selection } = editor;
    const path = workspacePath(document.uri);
    if (!selection.isEmpty) {
      const text = document.getText();
      const start = document.offsetAt(selection.start);
      const end = document.offsetAt(selection.end);
      return { path, content: text.slice(0, start) + code + text.slice(end) };
    }
    const choice = await vscode.window.showQuickPick(
      [
        { label: `Replace the contents of ${path}`, target: path },
        { label: 'Write a new file…', target: undefined },
      ],
      { placeHolder: 'Apply the code block (select lines first to replace only them)' },
    );
    if (choice === undefined) {
      return undefined;
    }
    if (choice.target !== undefined) {
      return { path: choice.target, content: code };
    }
  }
  const path = await vscode.window.showInputBox({
    prompt: 'Workspace-relative path of the file to write',
    validateInput: (value) => (value.trim() === '' ? 'Enter a path.' : undefined),
  });
  return path === undefined ? undefined : { path: path.trim(), content: code };
}

/** Apply a code block through the server (approval first, as the session's policy says). */
export async function applyCodeBlock(
  controller: ChatController,
  editor: vscode.TextEditor | undefined,
  code: string,
): Promise<void> {
  const sessionId = controller.model.sessionId;
  if (sessionId === undefined) {
    void vscode.window.showInformationMessage('Relavium: start a chat before applying code.');
    return;
  }
  const target = await chooseTarget(editor, code.endsWith('\n') ? code : `${code}\n`);
  if (target === undefined) {
    return;
  }
  try {
    const result = await controller.server.request<ApplyCodeResult>(Methods.applyCode, {
      sessionId,
      path: target.path,
      content: target.content,
    });
    if (result.applied) {
      void vscode.window.setStatusBarMessage(`Relavium: applied to ${target.path} (Undo reverts it)`, 4000);
    } else {
      void vscode.window.showWarningMessage(`Relavium: not applied — ${result.message}`);
    }
  } catch (error) {
    const { code: errorCode, message } = describeError(error);
    void vscode.window.showErrorMessage(`Relavium: apply failed (${errorCode}): ${message}`);
  }
}
