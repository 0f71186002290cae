/**
 * Tells the server where the user is: `relavium/editorState {uri, selection}` on active
 * editor and selection changes, debounced so dragging a selection sends one notification.
 * Also remembers the last text editor, which "Insert at cursor" targets after focus has moved
 * to the chat view.
 */

import * as vscode from 'vscode';
import { Methods, type EditorStateParams } from '../protocol';

const DEBOUNCE_MS = 150;
const REPORTED_SCHEMES = new Set(['file', 'untitled']);

/** Build the notification params for an editor. */
function editorState(editor: vscode.TextEditor): EditorStateParams {
  const { start, end } = editor.selection;
  return {
    uri: editor.document.uri.toString(),
    selection: {
      start: { line: start.line, character: start.character },
      end: { line: end.line, character: end.character },
    },
  };
}

export class EditorStateReporter implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastSent = '';
  private readonly subscriptions: vscode.Disposable[] = [];
  private lastEditor: vscode.TextEditor | undefined;

  constructor(private readonly notify: (method: string, params: EditorStateParams) => void) {
    this.lastEditor = vscode.window.activeTextEditor;
    this.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor !== undefined) {
          this.lastEditor = editor;
        }
        this.schedule();
      }),
      vscode.window.onDidChangeTextEditorSelection((event) => {
        this.lastEditor = event.textEditor;
        this.schedule();
      }),
    );
  }

  /** The text editor the user last worked in (still set while the chat view has focus). */
  get editor(): vscode.TextEditor | undefined {
    return this.lastEditor;
  }

  /** Send the current state now (after a server restart, or before asking about a selection). */
  flush(force = false): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const editor = this.lastEditor;
    if (editor === undefined || !REPORTED_SCHEMES.has(editor.document.uri.scheme)) {
      return;
    }
    const params = editorState(editor);
    const key = JSON.stringify(params);
    if (!force && key === this.lastSent) {
      return;
    }
    this.lastSent = key;
    this.notify(Methods.editorState, params);
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.flush();
    }, DEBOUNCE_MS);
  }
}
