/**
 * The message input: Enter sends, Shift+Enter inserts a newline, Esc stops a running turn,
 * Up in an empty input recalls the last message. `/`, `@` and `#` open a completion list
 * (slash commands, workspace files attached as chips, `#selection` / `#file`). Below the
 * input a toolbar holds the agent and model pickers, the session's usage and Send — Stop
 * while a turn runs.
 *
 * The composer locks the moment a message leaves it, before the host has answered: it counts
 * the messages it posted and stays locked until the host says it took as many
 * (`ComposerView.sendsTaken`) and no turn runs. A second Enter meanwhile never sends and never
 * drops the text: the draft stays, and the composer says why.
 */

import type { AttachmentChip } from '../model/contextParts';
import type { ComposerView } from '../shared/viewState';
import { renderChips } from './chips';
import {
  CompletionPopup,
  completionTrigger,
  staticCompletions,
  type Completion,
  type Trigger,
} from './completions';
import { element } from './dom';
import { icon } from './icons';
import { post } from './vscodeApi';

const MIN_ROWS = 2;
const MAX_ROWS = 12;
const MAX_HISTORY = 50;
const FILE_QUERY_DEBOUNCE_MS = 120;

const IDLE_PLACEHOLDER = 'Ask Relavium… (/ commands, @ files, # selection)';
const LOCKED_HINT = 'Turn running — Esc to stop';

export class Composer {
  readonly root = element('form', 'composer');
  private readonly input = element('textarea', 'composer-input');
  private readonly button = element('button', 'primary composer-button');
  private readonly hint = element('div', 'composer-hint');
  /** The toolbar's left part (pickers, usage): the page puts them in. */
  readonly tools = element('div', 'composer-tools');
  private readonly popup = new CompletionPopup((item) => {
    this.acceptCompletion(item);
  });
  private chips: HTMLElement = renderChips([], true);
  private chipKey = '';
  private running = false;
  private locked = false;
  private enabled = true;
  /** Messages posted to the host; the host's `sendsTaken` catches up with it. */
  private sendsPosted = 0;
  private sendsTaken = 0;
  private trigger: Trigger | undefined;
  private fileTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly history: string[] = [];
  private historyIndex = -1;

  /**
   * `lastUserText` supplies the newest sent message after a reload (history is per page);
   * `onSent` runs when a message leaves (the page closes what would hide its answer).
   */
  constructor(
    private readonly lastUserText: () => string | undefined,
    private readonly onSent: () => void = () => undefined,
  ) {
    this.input.rows = MIN_ROWS;
    this.input.placeholder = IDLE_PLACEHOLDER;
    this.input.setAttribute('aria-label', 'Message (Enter sends, Shift+Enter for a new line)');
    this.button.type = 'submit';
    this.hint.setAttribute('role', 'status');
    this.hint.hidden = true;
    const toolbar = element('div', 'composer-toolbar');
    toolbar.append(this.tools, this.button);
    this.root.append(this.popup.root, this.chips, this.hint, this.input, toolbar);
    this.renderButton();
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
        this.send();
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

  /** Reflect whether a turn runs, whether the server is reachable, and the host's lock. */
  update(running: boolean, enabled: boolean, view: ComposerView): void {
    this.running = running;
    this.enabled = enabled;
    this.sendsTaken = Math.max(this.sendsTaken, view.sendsTaken);
    this.setLocked(view.locked || this.sendsTaken < this.sendsPosted);
    this.input.disabled = !enabled;
    this.renderButton();
  }

  /** Show the context attached to the next message (the implicit chip first). */
  setAttachments(chips: readonly AttachmentChip[], implicit?: AttachmentChip): void {
    const key = JSON.stringify([chips, implicit]);
    if (key === this.chipKey) {
      return;
    }
    this.chipKey = key;
    const fresh = renderChips(chips, true, implicit);
    this.chips.replaceWith(fresh);
    this.chips = fresh;
  }

  private setLocked(locked: boolean): void {
    this.locked = locked;
    this.root.classList.toggle('locked', locked);
    this.input.placeholder = locked ? LOCKED_HINT : IDLE_PLACEHOLDER;
    if (!locked) {
      this.hint.hidden = true;
    }
  }

  private renderButton(): void {
    const stop = this.running;
    this.button.disabled = !this.enabled || (this.locked && !stop);
    if (this.button.dataset.mode === (stop ? 'stop' : 'send')) {
      return; // unchanged: no DOM work while tokens stream
    }
    this.button.dataset.mode = stop ? 'stop' : 'send';
    this.button.replaceChildren(
      icon(stop ? 'stop' : 'send'),
      element('span', undefined, stop ? 'Stop' : 'Send'),
    );
    this.button.className = stop ? 'secondary composer-button' : 'primary composer-button';
    this.button.title = stop ? 'Stop the running turn (Esc)' : 'Send (Enter)';
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
    if (this.locked) {
      // The draft stays where it is; say why nothing happened.
      this.hint.textContent = `${LOCKED_HINT}. Your message stays here until the turn ends.`;
      this.hint.hidden = false;
      return;
    }
    this.sendsPosted += 1;
    this.setLocked(true);
    this.renderButton();
    post({ type: 'send', text });
    this.onSent();
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
