/**
 * The message input: Enter sends, Shift+Enter inserts a newline, Esc aborts a running turn,
 * Up in an empty input recalls the last message. `/`, `@` and `#` open a completion list
 * (slash commands, workspace files attached as chips, `#selection` / `#file`). While a turn
 * runs the Send button becomes Abort.
 */

import type { AttachmentChip } from '../model/contextParts';
import { renderChips } from './chips';
import {
  CompletionPopup,
  completionTrigger,
  staticCompletions,
  type Completion,
  type Trigger,
} from './completions';
import { element } from './dom';
import { post } from './vscodeApi';

const MIN_ROWS = 3;
const MAX_ROWS = 12;
const MAX_HISTORY = 50;
const FILE_QUERY_DEBOUNCE_MS = 120;

export class Composer {
  readonly root = element('form', 'composer');
  private readonly input = element('textarea', 'composer-input');
  private readonly button = element('button', 'primary composer-button', 'Send');
  private readonly popup = new CompletionPopup((item) => {
    this.acceptCompletion(item);
  });
  private chips: HTMLElement = renderChips([], true);
  private chipKey = '';
  private running = false;
  private enabled = true;
  private trigger: Trigger | undefined;
  private fileTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly history: string[] = [];
  private historyIndex = -1;

  /** `lastUserText` supplies the newest sent message after a reload (history is per page). */
  constructor(private readonly lastUserText: () => string | undefined) {
    this.input.rows = MIN_ROWS;
    this.input.placeholder = 'Ask Relavium… (/ commands, @ files, #selection; Shift+Enter for a new line)';
    this.input.setAttribute('aria-label', 'Message');
    this.button.type = 'submit';
    this.root.append(this.popup.root, this.chips, this.input, this.button);
    this.input.addEventListener('input', () => {
      this.fitRows();
      this.updateCompletions();
    });
    this.input.addEventListener('blur', () => {
      this.popup.close();
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
      if (event.isComposing) {
        return;
      }
      if (this.popup.key(event)) {
        event.preventDefault();
        return;
      }
      if (event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault();
        if (!this.running) {
          this.send();
        }
      } else if (event.key === 'Escape' && this.running) {
        event.preventDefault();
        post({ type: 'abort' });
      } else if (event.key === 'ArrowUp' && this.recall()) {
        event.preventDefault();
      } else if (event.key === 'ArrowDown' && this.historyIndex >= 0) {
        event.preventDefault();
        this.historyIndex -= 1;
        this.input.value = this.historyIndex >= 0 ? (this.history[this.historyIndex] ?? '') : '';
        this.fitRows();
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

  /** The host's answer to an `@` file search. */
  showFiles(query: string, files: readonly string[]): void {
    if (this.trigger?.kind !== 'file' || this.trigger.query !== query) {
      return;
    }
    this.popup.show(files.map((path) => ({ label: path, detail: 'attach', attachPath: path })));
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

  /** Up in an empty input (or while browsing): the previous message. */
  private recall(): boolean {
    if (this.input.value !== '' && this.historyIndex < 0) {
      return false;
    }
    const history =
      this.history.length > 0
        ? this.history
        : [this.lastUserText()].filter((t): t is string => t !== undefined);
    if (this.historyIndex + 1 >= history.length) {
      return this.historyIndex >= 0;
    }
    this.historyIndex += 1;
    this.input.value = history[this.historyIndex] ?? '';
    this.fitRows();
    this.input.setSelectionRange(this.input.value.length, this.input.value.length);
    return true;
  }

  private updateCompletions(): void {
    const trigger = completionTrigger(this.input.value, this.input.selectionStart);
    this.trigger = trigger;
    clearTimeout(this.fileTimer);
    if (trigger === undefined) {
      this.popup.close();
    } else if (trigger.kind === 'file') {
      this.fileTimer = setTimeout(() => {
        post({ type: 'findFiles', query: trigger.query });
      }, FILE_QUERY_DEBOUNCE_MS);
    } else {
      this.popup.show(staticCompletions(trigger));
    }
  }

  private acceptCompletion(item: Completion): void {
    const trigger = this.trigger;
    this.popup.close();
    if (trigger === undefined) {
      return;
    }
    const value = this.input.value;
    const caret = this.input.selectionStart;
    const replacement = item.attachPath === undefined ? (item.insert ?? '') : '';
    this.input.value = value.slice(0, trigger.start) + replacement + value.slice(caret);
    const position = trigger.start + replacement.length;
    this.input.setSelectionRange(position, position);
    this.trigger = undefined;
    if (item.attachPath !== undefined) {
      post({ type: 'attachFile', path: item.attachPath });
    }
    this.fitRows();
    this.input.focus();
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
    if (this.history[0] !== text) {
      this.history.unshift(text);
      this.history.length = Math.min(this.history.length, MAX_HISTORY);
    }
    this.historyIndex = -1;
    this.input.value = '';
    this.popup.close();
    this.fitRows();
  }
}
