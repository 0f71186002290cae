/**
 * The composer's completion list: `/` slash commands, `@` workspace files, `#` mentions.
 *
 * Pure trigger detection (`completionTrigger`) is separate from the popup so it can be tested
 * without a DOM. The popup is a listbox; arrows move, Enter/Tab accept, Escape closes.
 */

import { element } from './dom';

export type TriggerKind = 'slash' | 'file' | 'mention';

export interface Trigger {
  kind: TriggerKind;
  /** What was typed after the trigger character. */
  query: string;
  /** Offset of the trigger character in the input. */
  start: number;
}

export interface Completion {
  label: string;
  detail?: string;
  /** What accepting does: replace the trigger text, or attach a file. */
  insert?: string;
  attachPath?: string;
}

/** Slash commands the host understands (see `chat/composerCommands.ts`). */
export const SLASH: readonly Completion[] = [
  { label: '/new', detail: 'Start a new chat', insert: '/new' },
  { label: '/fork', detail: 'Fork this chat at its last message', insert: '/fork' },
  { label: '/compact', detail: 'Summarise older messages for the model', insert: '/compact' },
  { label: '/export', detail: 'Export this chat as a workflow', insert: '/export' },
  { label: '/markdown', detail: 'Export this chat as a Markdown transcript', insert: '/markdown' },
  { label: '/clear', detail: 'Start over with defaults', insert: '/clear' },
];

export const MENTIONS: readonly Completion[] = [
  { label: '#selection', detail: 'Attach the editor selection', insert: '#selection ' },
  { label: '#file', detail: 'Attach the active file', insert: '#file ' },
];

/** The completion the text before the caret asks for, if any. */
export function completionTrigger(text: string, caret: number): Trigger | undefined {
  const before = text.slice(0, caret);
  const slash = /^\/(\w*)$/.exec(before);
  if (slash !== null) {
    return { kind: 'slash', query: slash[1] ?? '', start: 0 };
  }
  const mention = /(^|\s)([@#])([\w./-]*)$/.exec(before);
  if (mention === null) {
    return undefined;
  }
  const [, lead = '', sigil, query = ''] = mention;
  return { kind: sigil === '@' ? 'file' : 'mention', query, start: mention.index + lead.length };
}

/** The static candidates of a trigger, filtered by its query. */
export function staticCompletions(trigger: Trigger): Completion[] {
  const list = trigger.kind === 'slash' ? SLASH : trigger.kind === 'mention' ? MENTIONS : [];
  const query = trigger.query.toLowerCase();
  return list.filter((item) => item.label.slice(1).toLowerCase().startsWith(query));
}

export class CompletionPopup {
  readonly root = element('ul', 'completions');
  private items: Completion[] = [];
  private active = 0;

  constructor(private readonly accept: (item: Completion) => void) {
    this.root.setAttribute('role', 'listbox');
    this.root.hidden = true;
    this.root.addEventListener('mousedown', (event) => {
      const target = (event.target as HTMLElement | null)?.closest<HTMLElement>('[data-index]');
      const item = this.items[Number(target?.dataset.index ?? -1)];
      if (item !== undefined) {
        event.preventDefault();
        this.accept(item);
      }
    });
  }

  get open(): boolean {
    return !this.root.hidden;
  }

  show(items: Completion[]): void {
    this.items = items;
    this.active = 0;
    this.root.hidden = items.length === 0;
    this.render();
  }

  close(): void {
    this.show([]);
  }

  /** Handle a key while open; returns whether it was used. */
  key(event: KeyboardEvent): boolean {
    if (!this.open) {
      return false;
    }
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      const step = event.key === 'ArrowDown' ? 1 : -1;
      this.active = (this.active + step + this.items.length) % this.items.length;
      this.render();
      return true;
    }
    if (event.key === 'Enter' || event.key === 'Tab') {
      const item = this.items[this.active];
      if (item !== undefined) {
        this.accept(item);
      }
      return true;
    }
    if (event.key === 'Escape') {
      this.close();
      return true;
    }
    return false;
  }

  private render(): void {
    this.root.replaceChildren(
      ...this.items.map((item, index) => {
        const row = element('li', index === this.active ? 'completion active' : 'completion');
        row.dataset.index = String(index);
        row.setAttribute('role', 'option');
        row.setAttribute('aria-selected', String(index === this.active));
        row.append(element('span', 'completion-label', item.label));
        if (item.detail !== undefined) {
          row.append(element('span', 'completion-detail', item.detail));
        }
        return row;
      }),
    );
  }
}
