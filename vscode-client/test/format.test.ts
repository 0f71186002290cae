import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatCost, formatDuration, formatTokens, summarizeToolInput, truncate } from '../src/model/format';

describe('format helpers', () => {
  it('formats microcents as dollars and flags unpriced models', () => {
    assert.equal(formatCost(0, true), '$0.00');
    assert.equal(formatCost(123_456, true), '$0.0012');
    assert.equal(formatCost(250_000_000, true), '$2.50');
    assert.equal(formatCost(0, false), '$0.00 (unpriced model)');
  });

  it('formats token counts and durations', () => {
    assert.deepEqual([950, 1234, 56_789, 4_100_000].map(formatTokens), ['950', '1.2k', '57k', '4.1M']);
    assert.deepEqual([15, 1500, 42_000].map(formatDuration), ['15 ms', '1.5 s', '42 s']);
  });

  it('truncates with an ellipsis', () => {
    assert.equal(truncate('abcdef', 4), 'abc…');
    assert.equal(truncate('abc', 4), 'abc');
  });

  it('summarises tool input with the path or command first', () => {
    assert.equal(summarizeToolInput({ recursive: true, path: 'src' }), 'src recursive: true');
    assert.equal(summarizeToolInput({ command: 'git', args: ['status', '--short'] }), 'git status --short');
  });

  it('reduces bulky values to their size, including the server’s sanitized {length, head} form', () => {
    assert.equal(
      summarizeToolInput({ path: 'a.py', content: { length: 169, head: 'def greet(name: str) -> str:' } }),
      'a.py content: 169 chars',
    );
    assert.equal(summarizeToolInput({ path: 'b.py', content: 'x'.repeat(41) }), 'b.py content: 41 chars');
  });
});
