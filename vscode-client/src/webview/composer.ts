/**
 * The message input: Enter sends, Shift+Enter inserts a newline, Esc aborts a running turn.
 * While a turn runs the Send button becomes Abort.
 */

import type { AttachmentChip } from '../model/contextParts';
import { renderChips } from './chips';
import { element } from './dom';
import { post } from './vscodeApi';

const MIN_ROWS = 3;
const MAX_ROWS = 12;

export class Composer {
  readonly root = element('form', 'composer');
  private readonly input = element('textarea', 'composer-input');
  private readonly button = element('button', 'primary composer-button', 'Send');
  private chips: HTMLElement = renderChips([], true);
  private chipKey = '';
  private running = false;
  private enabled = true;

  constructor() {
    this.input.rows = MIN_ROWS;
    this.input.placeholder = 'Ask Relavium… (Enter to send, Shift+Enter for a new line)';
    this.input.setAttribute('aria-label', 'Message');
    this.button.type = 'submit';
    this.root.append(this.chips, this.input, this.button);
    this.input.addEventListener('input', () => {
      this.fitRows();
    });
    this.root.addEventListener('submit', (event) => {
      event.preventDefault();
      if (this.running) {
        post({ type: 'abort' });
      } else {
        this.send();
      }
    });
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        if (!this.running) {
          this.send();
        }
      } else if (event.key === 'Escape' && this.running) {
        event.preventDefault();
        post({ type: 'abort' });
      }
    });
  }

  /** Reflect whether a turn runs and whether the server is reachable. */
  update(running: boolean, enabled: boolean): void {
    this.running = running;
    this.enabled = enabled;
    this.button.textContent = running ? 'Abort' : 'Send';
    this.button.className = running ? 'secondary composer-button' : 'primary composer-button';
    this.button.title = running ? 'Abort the running turn (Esc)' : 'Send (Enter)';
    this.button.disabled = !enabled;
    this.input.disabled = !enabled;
  }

  /** Show the context attached to the next message. */
  setAttachments(chips: readonly AttachmentChip[]): void {
    const key = JSON.stringify(chips);
    if (key === this.chipKey) {
      return;
    }
    this.chipKey = key;
    const fresh = renderChips(chips, true);
    this.chips.replaceWith(fresh);
    this.chips = fresh;
  }

  /** Replace the draft text (an aborted message comes back here). */
  setDraft(text: string): void {
    this.input.value = text;
    this.fitRows();
    this.focus();
  }

  /** Put the caret in the input. */
  focus(): void {
    this.input.focus();
    this.input.setSelectionRange(this.input.value.length, this.input.value.length);
  }

  /** Grow with the draft (a quoted selection should be visible), within bounds. */
  private fitRows(): void {
    const lines = this.input.value.split('\n').length;
    this.input.rows = Math.min(MAX_ROWS, Math.max(MIN_ROWS, lines));
  }

  private send(): void {
    const text = this.input.value;
    if (text.trim() === '' || !this.enabled) {
      return;
    }
    post({ type: 'send', text });
    this.input.value = '';
    this.fitRows();
  }
}
