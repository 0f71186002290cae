/**
 * The implicit context: the file open in the editor, or the lines selected in it, shown as a
 * chip in the composer and sent with the next message — unless the user removes the chip.
 *
 * What travels: a selection's text (once: a selection that went with a message is not sent
 * again until it changes), or for a file only its name ("Active file: src/app.py", the agent
 * reads it when it needs to) — never a whole file with every message.
 */

import * as vscode from 'vscode';
import { chipLabel, toChip, type AttachmentChip, type ContextAttachment } from '../model/contextParts';
import { attachmentOf, workspacePath } from './sessionActions';

const SHOWN_SCHEMES = new Set(['file', 'untitled']);

export class ImplicitContext implements vscode.Disposable {
  private editor: vscode.TextEditor | undefined;
  /** The chip the user removed (or that was sent): hidden until the editor state changes. */
  private dismissed: string | undefined;
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly changed: () => void) {
    this.track(vscode.window.activeTextEditor);
    this.subscriptions = [
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor !== undefined) {
          this.track(editor);
        }
      }),
      vscode.window.onDidChangeTextEditorSelection((event) => {
        this.track(event.textEditor);
      }),
    ];
  }

  /** The chip to show, if any (none when an explicit chip already says the same). */
  chip(explicit: readonly AttachmentChip[]): AttachmentChip | undefined {
    const attachment = this.attachment();
    if (attachment === undefined) {
      return undefined;
    }
    const chip = toChip(attachment);
    const covered = explicit.some(
      (other) =>
        other.label === chip.label || (chip.kind === 'active' && other.label.split(':')[0] === chip.label),
    );
    return covered ? undefined : chip;
  }

  /** The user removed the chip: leave this file / selection out until the editor moves on. */
  dismiss(): void {
    this.dismissed = this.key();
    this.changed();
  }

  /**
   * What goes with the message being sent (unless an explicit chip already carries the same
   * thing). A selection is sent once; the file's name goes with every message.
   */
  take(explicit: readonly ContextAttachment[]): ContextAttachment | undefined {
    const attachment = this.attachment();
    if (attachment === undefined || this.chip(explicit.map(toChip)) === undefined) {
      return undefined;
    }
    if (attachment.kind === 'selection') {
      this.dismissed = this.key();
      this.changed();
    }
    return attachment;
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
  }

  private track(editor: vscode.TextEditor | undefined): void {
    if (editor === undefined || !SHOWN_SCHEMES.has(editor.document.uri.scheme)) {
      return;
    }
    const before = this.key();
    this.editor = editor;
    if (this.key() !== before) {
      this.changed();
    }
  }

  private key(): string | undefined {
    const attachment = this.attachment(true);
    return attachment === undefined ? undefined : `${attachment.kind}:${chipLabel(attachment)}`;
  }

  private attachment(ignoreDismissal = false): ContextAttachment | undefined {
    const editor = this.editor;
    if (editor === undefined || editor.document.isClosed) {
      return undefined;
    }
    const attachment: ContextAttachment = editor.selection.isEmpty
      ? {
          id: 'implicit',
          kind: 'active',
          path: workspacePath(editor.document.uri),
          language: editor.document.languageId,
          text: '',
        }
      : { ...attachmentOf(editor), id: 'implicit' };
    if (!ignoreDismissal && this.dismissed === `${attachment.kind}:${chipLabel(attachment)}`) {
      return undefined;
    }
    return attachment;
  }
}
