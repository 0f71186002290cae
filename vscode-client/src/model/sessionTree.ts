import type { SessionSummary } from '../protocol';

/** A session in list order, with how deep it is nested under its parents (0: top level). */
export interface NestedSession {
  session: SessionSummary;
  depth: number;
}

/**
 * Children (sessions a delegate tool started, `parentSessionId`) right under their parent, in
 * the order the server listed them; a child whose parent is not in the list stays at the top.
 */
export function nestSessions(sessions: readonly SessionSummary[]): NestedSession[] {
  const listed = new Set(sessions.map((session) => session.id));
  const children = new Map<string, SessionSummary[]>();
  const roots: SessionSummary[] = [];
  for (const session of sessions) {
    const parent = session.parentSessionId;
    if (parent !== undefined && parent !== session.id && listed.has(parent)) {
      children.set(parent, [...(children.get(parent) ?? []), session]);
    } else {
      roots.push(session);
    }
  }
  const ordered: NestedSession[] = [];
  const seen = new Set<string>();
  const visit = (session: SessionSummary, depth: number): void => {
    if (seen.has(session.id)) {
      return;
    }
    seen.add(session.id);
    ordered.push({ session, depth });
    for (const child of children.get(session.id) ?? []) {
      visit(child, depth + 1);
    }
  };
  for (const session of roots) {
    visit(session, 0);
  }
  // A cycle (a damaged history) leaves sessions no root reaches: list them at the top.
  for (const session of sessions) {
    visit(session, 0);
  }
  return ordered;
}
