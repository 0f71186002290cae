/**
 * Events for sessions the view does not show yet.
 *
 * The server starts streaming a new session's events while `startSession` (or a resume) is
 * still returning, so they can arrive before the client knows the session is its own. They
 * wait here, bounded, until the session is shown or they age out.
 */

import type { SessionEvent } from '../protocol';

const MAX_SESSIONS = 8;
const MAX_EVENTS_PER_SESSION = 2000;

export class OrphanEvents {
  private readonly bySession = new Map<string, SessionEvent[]>();

  /** Keep `event` for later (oldest sessions and events are dropped past the bounds). */
  keep(event: SessionEvent): void {
    const list = this.bySession.get(event.sessionId) ?? [];
    list.push(event);
    if (list.length > MAX_EVENTS_PER_SESSION) {
      list.shift();
    }
    // Re-insert so the Map's order is least-recently-used first.
    this.bySession.delete(event.sessionId);
    this.bySession.set(event.sessionId, list);
    while (this.bySession.size > MAX_SESSIONS) {
      const oldest = this.bySession.keys().next().value;
      if (oldest === undefined) {
        break;
      }
      this.bySession.delete(oldest);
    }
  }

  /** Remove and return what was kept for `sessionId`. */
  take(sessionId: string): SessionEvent[] {
    const list = this.bySession.get(sessionId) ?? [];
    this.bySession.delete(sessionId);
    return list;
  }
}
