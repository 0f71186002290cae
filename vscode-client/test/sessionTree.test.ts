import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nestSessions } from '../src/model/sessionTree';
import type { SessionSummary } from '../src/protocol';

function summary(id: string, parentSessionId?: string): SessionSummary {
  return {
    id,
    agentRef: 'coder',
    status: 'idle',
    updatedAt: '2026-11-26T10:00:00.000Z',
    messageCount: 2,
    turnCount: 1,
    workingDir: '/w',
    ...(parentSessionId === undefined ? {} : { parentSessionId }),
  };
}

describe('nestSessions', () => {
  it('puts delegated children under their parent, deeper ones deeper', () => {
    const nested = nestSessions([
      summary('child', 'parent'),
      summary('other'),
      summary('grandchild', 'child'),
      summary('parent'),
    ]);
    assert.deepEqual(
      nested.map((entry) => [entry.session.id, entry.depth]),
      [
        ['other', 0],
        ['parent', 0],
        ['child', 1],
        ['grandchild', 2],
      ],
    );
  });

  it('keeps a child whose parent is not listed, and survives a cycle', () => {
    const nested = nestSessions([summary('orphan', 'gone'), summary('a', 'b'), summary('b', 'a')]);
    assert.deepEqual(nested.map((entry) => entry.session.id).sort(), ['a', 'b', 'orphan']);
    assert.equal(nested.find((entry) => entry.session.id === 'orphan')?.depth, 0);
  });
});
