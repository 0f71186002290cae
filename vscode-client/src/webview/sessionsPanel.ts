/**
 * The chat history: an overlay over the conversation with a search box (full-text
 * `listSessions`) and the chats to resume, rename or delete. Opened from the view title's
 * history button; Esc or × closes it.
 */

import { sessionFacts } from '../model/sessionFacts';
import { nestSessions } from '../model/sessionTree';
import type { SessionSummary } from '../protocol';
import { actionButton, element } from './dom';
import { icon } from './icons';
import { post } from './vscodeApi';

const SEARCH_DEBOUNCE_MS = 200;

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
    this.root.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.stopPropagation();
        this.toggle(false);
      }
    });
    const head = element('div', 'sessions-head');
    const close = actionButton('', 'closeSessions', {}, 'icon-button sessions-close');
    close.append(icon('cross'));
    close.title = 'Close the history (Esc)';
    close.setAttribute('aria-label', 'Close the history');
    head.append(icon('history'), element('span', 'sessions-title', 'Chats'), close);
    this.root.append(head, this.search, this.status, this.list);
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
    this.list.replaceChildren(
      ...nestSessions(sessions).map(({ session, depth }) => this.entry(session, depth)),
    );
  }

  private query(announce = true): void {
    if (announce) {
      this.status.textContent = 'Searching…';
    }
    post({ type: 'listSessions', query: this.search.value.trim() });
  }

  private entry(session: SessionSummary, depth: number): HTMLElement {
    const item = element('li', depth > 0 ? 'session-entry session-child' : 'session-entry');
    // A delegated child session sits under the session that started it.
    item.style.marginLeft = `${Math.min(depth, 4) * 1.25}em`;
    const open = actionButton(
      session.title ?? session.preview ?? 'Untitled chat',
      'resume',
      {
        sessionId: session.id,
      },
      'session-open',
    );
    open.title = session.preview ?? '';
    const meta = element('div', 'session-meta', sessionFacts(session));
    const actions = element('div', 'session-actions');
    actions.append(
      actionButton('Rename', 'renameSession', { sessionId: session.id }),
      actionButton('Delete', 'deleteSession', { sessionId: session.id }),
    );
    item.append(open, meta, actions);
    return item;
  }
}
