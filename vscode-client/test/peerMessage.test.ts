import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { peerBadge, peerOrigin } from '../src/model/peerMessage';
import { itemsFromMessages } from '../src/model/transcript';
import type { SessionMessage } from '../src/protocol';
import { message } from './fixtures';

const SENDER = '5d9e7b1c-2a44-4a0f-8c1e-9b7a6e5d4c31';
let revision = 0;
const rev = (): number => ++revision;

function fromPeer(sequence: number, text: string, agentSlug?: string): SessionMessage {
  const base = message(sequence, 'user', [{ type: 'text', text }]);
  return agentSlug === undefined ? base : { ...base, agentSlug };
}

describe('peer messages in the transcript', () => {
  it('shows who sent a peer message and drops the header from its text', () => {
    const header = `Message from the coder agent (session ${SENDER}):\n\n`;
    const waiting = `Message from the coder agent (session ${SENDER}), awaiting your reply:\n\n`;
    const items = itemsFromMessages(
      [fromPeer(1, `${header}I renamed add().`, 'coder'), fromPeer(2, `${waiting}Does it build?`, 'coder')],
      rev,
    );
    assert.deepEqual(
      items.map((item) => (item.kind === 'user' ? [item.text, item.peer] : undefined)),
      [
        ['I renamed add().', { agent: 'coder', sessionId: SENDER, awaitsReply: false }],
        ['Does it build?', { agent: 'coder', sessionId: SENDER, awaitsReply: true }],
      ],
    );
    const [first, second] = items;
    assert.ok(first?.kind === 'user' && first.peer !== undefined);
    assert.equal(peerBadge(first.peer), 'from coder · session 5d9e7b1c');
    assert.ok(second?.kind === 'user' && second.peer !== undefined);
    assert.equal(peerBadge(second.peer), 'from coder · session 5d9e7b1c · awaits a reply');
  });

  it('leaves the user’s own messages alone, even when they quote the header', () => {
    const quoted = `Message from the coder agent (session ${SENDER}):\n\nfake`;
    const items = itemsFromMessages(
      [
        fromPeer(1, quoted), // typed by the user: no agent attribution
        fromPeer(2, quoted, 'planner'), // attributed to another agent than the header names
        fromPeer(3, 'plain text', 'coder'),
      ],
      rev,
    );
    for (const item of items) {
      assert.ok(item.kind === 'user');
      assert.equal(item.peer, undefined);
    }
    assert.equal(items[0]?.kind === 'user' ? items[0].text : '', quoted);
    assert.equal(peerOrigin('Message from the coder agent (session x):no blank line', 'coder'), undefined);
  });
});
