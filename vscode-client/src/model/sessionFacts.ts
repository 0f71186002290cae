/** One line about a stored chat, as the history and the resume picker show it. */

import type { SessionSummary } from '../protocol';

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

/** When, how many exchanges, and the state when it is not the usual one. */
export function sessionFacts(session: SessionSummary): string {
  // Exchanges are what a person counts (one per message they sent), not stored rows.
  const exchanges = session.turnCount;
  const facts = [relativeTime(session.updatedAt), `${exchanges} exchange${exchanges === 1 ? '' : 's'}`];
  if (session.status !== 'idle') {
    facts.push(session.status === 'streaming' ? 'running' : session.status.replace(/_/g, ' '));
  }
  return facts.join(' · ');
}
