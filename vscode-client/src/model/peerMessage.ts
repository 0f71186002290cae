/**
 * Peer messages in a transcript (docs/design.md §2.5): another session's agent wrote them.
 *
 * The server stores a delivered peer message as a user message attributed to the sending
 * agent (`agentSlug`) whose text starts with a fixed header (`engine/peers.py: _as_received`):
 * `Message from the <agent> agent (session <id>)[, awaiting your reply]:` and a blank line.
 * Both must agree before the chat shows it as "from session X" rather than as the user's own.
 */

export interface PeerOrigin {
  /** The sending agent's id. */
  agent: string;
  /** The sending session's id. */
  sessionId: string;
  /** The sender waits for this session's answer (`await_reply`). */
  awaitsReply: boolean;
}

const HEADER = /^Message from the (\S+) agent \(session ([^)\s]+)\)(, awaiting your reply)?:\n\n/;

/** The sender of a peer message and the text without the header, or undefined for any other message. */
export function peerOrigin(
  text: string,
  agentSlug: string | undefined,
): { origin: PeerOrigin; text: string } | undefined {
  const match = HEADER.exec(text);
  const [header, agent, sessionId, waiting] = match ?? [];
  if (header === undefined || agent === undefined || sessionId === undefined || agent !== agentSlug) {
    return undefined;
  }
  return {
    origin: { agent, sessionId, awaitsReply: waiting !== undefined },
    text: text.slice(header.length),
  };
}

/** The badge text of a peer message: `from <agent> · session <short id>`. */
export function peerBadge(origin: PeerOrigin): string {
  const waiting = origin.awaitsReply ? ' · awaits a reply' : '';
  return `from ${origin.agent} · session ${origin.sessionId.slice(0, 8)}${waiting}`;
}
