/**
 * "Open in terminal" on a command's tool card: a pseudoterminal that shows the card's output
 * and keeps writing the live output while the command runs (`TerminalMirror` decides what).
 */

import * as vscode from 'vscode';
import { TerminalMirror } from '../model/terminalMirror';
import type { ToolItem } from '../shared/viewState';

interface OpenTerminal {
  callId: string;
  mirror: TerminalMirror;
  write: vscode.EventEmitter<string>;
  opened: boolean;
}

export class OutputTerminals implements vscode.Disposable {
  private readonly open = new Set<OpenTerminal>();

  constructor(private readonly card: (callId: string) => ToolItem | undefined) {}

  /** Open a terminal for the call's card (a second one if asked twice). */
  show(callId: string): void {
    const card = this.card(callId);
    if (card === undefined) {
      return;
    }
    const write = new vscode.EventEmitter<string>();
    const entry: OpenTerminal = { callId, mirror: new TerminalMirror(), write, opened: false };
    const pty: vscode.Pseudoterminal = {
      onDidWrite: write.event,
      open: () => {
        entry.opened = true;
        this.flushOne(entry);
      },
      close: () => {
        this.open.delete(entry);
        write.dispose();
      },
    };
    this.open.add(entry);
    vscode.window.createTerminal({ name: `Relavium: ${card.toolId} ${callId}`, pty }).show();
  }

  /** The model changed: write what is new to every open terminal. */
  refresh(): void {
    for (const entry of this.open) {
      this.flushOne(entry);
    }
  }

  private flushOne(entry: OpenTerminal): void {
    if (!entry.opened) {
      return; // a pseudoterminal drops writes before open()
    }
    const text = entry.mirror.next(this.card(entry.callId));
    if (text !== '') {
      entry.write.fire(text);
    }
  }

  dispose(): void {
    for (const entry of this.open) {
      entry.write.dispose();
    }
    this.open.clear();
  }
}
