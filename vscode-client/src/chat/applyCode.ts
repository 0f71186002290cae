/**
 * "Apply" on a code block: the code goes into a file as an agent edit would — through the
 * server's `write_file` (the session's jail, the approval prompt shown as a tool card, the
 * editor's undoable `workspace/applyEdit`), never written by the extension itself.
 *
 * The target is always confirmed: a pick names what would be replaced — the selection of the
 * last active editor (first, when there is one: its lines and file), that whole file, or a new
 * file — and says so when the block's language is not the file's. A change the user rejects
 * is their decision: the tool card says so, no warning follows.
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

interface TargetPick extends vscode.QuickPickItem {
  target?: Target;
}

/** Code-fence names → VS Code language ids, where they differ. */
const FENCE_LANGUAGES: Readonly<Record<string, string>> = {
  py: 'python',
  python3: 'python',
  js: 'javascript',
  jsx: 'javascriptreact',
  ts: 'typescript',
  tsx: 'typescriptreact',
  sh: 'shellscript',
  bash: 'shellscript',
  zsh: 'shellscript',
  shell: 'shellscript',
  yml: 'yaml',
  md: 'markdown',
  rs: 'rust',
  rb: 'ruby',
  'c++': 'cpp',
  cs: 'csharp',
  kt: 'kotlin',
};

/** Whether a block written in `fence` looks out of place in a `languageId` document. */
function languageDiffers(fence: string, languageId: string): boolean {
  const lang = fence.trim().toLowerCase();
  if (lang === '' || lang === 'text' || lang === 'plaintext' || languageId === 'plaintext') {
    return false;
  }
  return (FENCE_LANGUAGES[lang] ?? lang) !== languageId;
}

function editorPicks(editor: vscode.TextEditor, code: string, lang: string): TargetPick[] {
  const { document, selection } = editor;
  const path = workspacePath(document.uri);
  const warning = languageDiffers(lang, document.languageId)
    ? `The block is ${lang}; ${path} is ${document.languageId}.`
    : undefined;
  const picks: TargetPick[] = [];
  if (!selection.isEmpty) {
    const text = document.getText();
    const start = document.offsetAt(selection.start);
    const end = document.offsetAt(selection.end);
    const first = selection.start.line + 1;
    const last =
      selection.end.character === 0 && selection.end.line > selection.start.line
        ? selection.end.line
        : selection.end.line + 1;
    picks.push({
      label: `Replace lines ${first}–${last} of ${path}`,
      description: 'the selection',
      detail: warning,
      target: { path, content: text.slice(0, start) + code + text.slice(end) },
    });
  }
  picks.push({
    label: `Replace all of ${path}`,
    detail: warning,
    target: { path, content: code },
  });
  return picks;
}

async function chooseTarget(
  editor: vscode.TextEditor | undefined,
  code: string,
  lang: string,
): Promise<Target | undefined> {
  const usable = editor !== undefined && !editor.document.isClosed && !editor.document.isUntitled;
  const picks: TargetPick[] = usable ? editorPicks(editor, code, lang) : [];
  picks.push({ label: 'Write a new file…', description: 'you name it next' });
  const choice = await vscode.window.showQuickPick(picks, {
    placeHolder: `Apply the ${lang === '' ? 'code' : lang} block to…`,
    matchOnDetail: true,
  });
  if (choice === undefined) {
    return undefined;
  }
  if (choice.target !== undefined) {
    return choice.target;
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
  lang: string,
): Promise<void> {
  const sessionId = controller.model.sessionId;
  if (sessionId === undefined) {
    void vscode.window.showInformationMessage('Relavium: start a chat before applying code.');
    return;
  }
  const target = await chooseTarget(editor, code.endsWith('\n') ? code : `${code}\n`, lang);
  if (target === undefined) {
    return;
  }
  try {
    const result = await controller.server.request<ApplyCodeResult>(Methods.applyCode, {
      sessionId,
      path: target.path,
      content: target.content,
    });
    const card = controller.model.toolCard(result.callId);
    if (result.applied) {
      void vscode.window.setStatusBarMessage(`Relavium: applied to ${target.path} (Undo reverts it)`, 4000);
    } else if (card?.approval?.state !== 'rejected') {
      // Rejected: the card already says "You rejected this change"; anything else is news.
      void vscode.window.showWarningMessage(`Relavium: not applied — ${result.message}`);
    }
  } catch (error) {
    const { code: errorCode, message } = describeError(error);
    void vscode.window.showErrorMessage(`Relavium: apply failed (${errorCode}): ${message}`);
  }
}
