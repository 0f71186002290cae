import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSafeExternalLink, parseWebviewMessage } from '../src/shared/webviewMessages';

describe('parseWebviewMessage', () => {
  it('accepts well-formed messages', () => {
    assert.deepEqual(parseWebviewMessage({ type: 'send', text: 'hi' }), { type: 'send', text: 'hi' });
    assert.deepEqual(parseWebviewMessage({ type: 'approval', callId: 'c1', decision: 'approve_always' }), {
      type: 'approval',
      callId: 'c1',
      decision: 'approve_always',
    });
    assert.deepEqual(parseWebviewMessage({ type: 'rename' }), { type: 'rename', sessionId: undefined });
    assert.deepEqual(parseWebviewMessage({ type: 'abort', extra: 'ignored' }), { type: 'abort' });
    assert.deepEqual(parseWebviewMessage({ type: 'openDiff', callId: 'c1' }), {
      type: 'openDiff',
      callId: 'c1',
    });
    assert.deepEqual(parseWebviewMessage({ type: 'rewind', itemId: 'u1' }), { type: 'rewind', itemId: 'u1' });
    assert.deepEqual(
      parseWebviewMessage({ type: 'reviewChanges', userSequence: 3, decision: 'undo', path: 'a.py' }),
      {
        type: 'reviewChanges',
        userSequence: 3,
        decision: 'undo',
        path: 'a.py',
      },
    );
    assert.deepEqual(parseWebviewMessage({ type: 'reviewChanges', userSequence: 3, decision: 'keep' }), {
      type: 'reviewChanges',
      userSequence: 3,
      decision: 'keep',
    });
    assert.deepEqual(parseWebviewMessage({ type: 'openChange', userSequence: 1, path: 'src/a.py' }), {
      type: 'openChange',
      userSequence: 1,
      path: 'src/a.py',
    });
    assert.deepEqual(parseWebviewMessage({ type: 'noticeAction', itemId: 'stopped-1' }), {
      type: 'noticeAction',
      itemId: 'stopped-1',
    });
    assert.deepEqual(parseWebviewMessage({ type: 'dismissImplicit' }), { type: 'dismissImplicit' });
  });

  it('rejects malformed and hostile messages', () => {
    const hostile: unknown[] = [
      null,
      'send',
      42,
      { type: 'unknown' },
      { type: 'send' },
      { type: 'send', text: 7 },
      { type: 'send', text: 'x'.repeat(200_001) },
      { type: 'approval', callId: 'c1', decision: 'approve; rm -rf /' },
      { type: 'approval', callId: '', decision: 'approve' },
      { type: 'resume', sessionId: { toString: () => 'x' } },
      { type: 'delete', sessionId: 'x'.repeat(201) },
      { type: 'openDiff', callId: '' },
      { type: 'rewind', itemId: 42 },
      { type: 'reviewChanges', userSequence: 3, decision: 'delete' },
      { type: 'reviewChanges', userSequence: -1, decision: 'keep' },
      { type: 'reviewChanges', userSequence: 1.5, decision: 'keep' },
      { type: 'reviewChanges', userSequence: 1, decision: 'undo', path: '' },
      { type: 'openChange', userSequence: '1', path: 'a.py' },
      { type: 'openChange', userSequence: 1, path: 'x'.repeat(4097) },
      { type: 'noticeAction', itemId: '' },
      { type: '__proto__' },
      { type: 'constructor' },
    ];
    for (const message of hostile) {
      assert.equal(parseWebviewMessage(message), undefined, JSON.stringify(message));
    }
  });
});

describe('isSafeExternalLink', () => {
  it('allows only web links', () => {
    assert.equal(isSafeExternalLink('https://example.com/x?y=1'), true);
    assert.equal(isSafeExternalLink('http://localhost:8080'), true);
    for (const href of [
      'javascript:alert(1)',
      'command:workbench.action.reloadWindow',
      'file:///etc/passwd',
      'vscode://x',
      'data:text/html,x',
      'not a url',
    ]) {
      assert.equal(isSafeExternalLink(href), false, href);
    }
  });
});
