import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { completionTrigger, staticCompletions } from '../src/webview/completions';

describe('composer completions', () => {
  it('opens slash commands only at the start of the message', () => {
    assert.deepEqual(completionTrigger('/co', 3), { kind: 'slash', query: 'co', start: 0 });
    assert.deepEqual(
      staticCompletions({ kind: 'slash', query: 'co', start: 0 }).map((item) => item.label),
      ['/compact'],
    );
    assert.equal(completionTrigger('see /co', 7), undefined);
  });

  it('finds @file and #mention triggers before the caret, not inside words', () => {
    assert.deepEqual(completionTrigger('look at @src/ap', 15), { kind: 'file', query: 'src/ap', start: 8 });
    assert.deepEqual(completionTrigger('#sel', 4), { kind: 'mention', query: 'sel', start: 0 });
    assert.equal(completionTrigger('mail me@example', 15), undefined);
    assert.equal(completionTrigger('@file then text', 15), undefined);
    assert.deepEqual(
      staticCompletions({ kind: 'mention', query: 'f', start: 0 }).map((item) => item.insert),
      ['#file '],
    );
  });
});
