/** The session picker: a search box (full-text `listSessions`) and a list to resume from. */

import type { SessionSummary } from '../protocol';
import { actionButton, element } from './dom';
import { post } from './vscodeApi';

const SEARCH_DEBOUNCE_MS = 200;

function relativeTime(iso: string): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) {
    return iso;
  }
  const minutes = Math.round((Date.now() - then) / 60_000);
  if (minutes < 1) {
    return 'just now';
  }
  if (minutes < 60) {
    return `${minutes} min ago`;
  }
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : new Date(then).toLocaleDateString();
}

export class SessionsPanel {
  readonly root = element('section', 'sessions');
  private readonly search = element('input', 'sessions-search');
  private readonly list = element('ul', 'sessions-list');
  private readonly status = element('div', 'sessions-status');
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    this.root.hidden = true;
    this.root.setAttribute('aria-label', 'Sessions');
    this.search.type = 'search';
    this.search.placeholder = 'Search sessions…';
    this.search.setAttribute('aria-label', 'Search sessions');
    this.search.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.query();
      }, SEARCH_DEBOUNCE_MS);
    });
    this.search.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        this.toggle(false);
      }
    });
    this.root.append(this.search, this.status, this.list);
  }

  /** Whether the panel is open. */
  get open(): boolean {
    return !this.root.hidden;
  }

  /** Open or close the panel; opening refreshes the list and focuses the search box. */
  toggle(open = !this.open): void {
    this.root.hidden = !open;
    if (open) {
      this.query();
      this.search.focus();
    }
  }

  /** The list changed somewhere (any window): search again if the panel is open. */
  refresh(): void {
    if (this.open) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.query(false);
      }, SEARCH_DEBOUNCE_MS);
    }
  }

  /** Show the host's answer to a search. */
  show(query: string, sessions: readonly SessionSummary[], error?: string): void {
    if (query !== this.search.value.trim()) {
      return;
    }
    this.status.textContent = error ?? (sessions.length === 0 ? 'No sessions found.' : '');
    this.list.replaceChildren(...sessions.map((session) => this.entry(session)));
  }

  private query(announce = true): void {
    if (announce) {
      this.status.textContent = 'Searching…';
    }
    post({ type: 'listSessions', query: this.search.value.trim() });
  }

  private entry(session: SessionSummary): HTMLElement {
    const item = element('li', 'session-entry');
    const open = actionButton(
      session.title ?? session.preview ?? 'Untitled chat',
      'resume',
      {
        sessionId: session.id,
      },
      'session-open',
    );
    open.title = session.preview ?? '';
    const meta = element(
      'div',
      'session-meta',
      `${relativeTime(session.updatedAt)} · ${session.messageCount} messages · ${session.status}`,
    );
    const actions = element('div', 'session-actions');
    actions.append(
      actionButton('Rename', 'renameSession', { sessionId: session.id }),
      actionButton('Delete', 'deleteSession', { sessionId: session.id }),
    );
    item.append(open, meta, actions);
    return item;
  }
}
