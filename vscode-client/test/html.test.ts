import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatHtml, contentSecurityPolicy, makeNonce } from '../src/view/html';

const resources = {
  cspSource: 'https://file+.vscode-resource.vscode-cdn.net',
  scriptUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview.js',
  styleUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/media/chat.css',
  nonce: 'abc123',
};

describe('chat view HTML', () => {
  it('has a strict CSP: nonce-only scripts, no inline styles, nothing remote', () => {
    const csp = contentSecurityPolicy(resources);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'nonce-abc123'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*|https?:\/\/(?!file\+)/);
    assert.match(csp, /connect-src 'none'/);
  });

  it('loads exactly one script, carrying the nonce, and no inline code', () => {
    const html = chatHtml(resources);
    const scripts = html.match(/<script[^>]*>/g) ?? [];
    assert.equal(scripts.length, 1);
    assert.match(scripts.join(''), /nonce="abc123"/);
    assert.match(html, /<script[^>]*><\/script>/, 'the script tag has no inline body');
    assert.doesNotMatch(html, /\son\w+=/i, 'no inline event handlers');
  });

  it('escapes attribute values', () => {
    const html = chatHtml({ ...resources, styleUri: 'x"><script>alert(1)</script>' });
    assert.doesNotMatch(html, /"><script>alert/);
  });

  it('makes a fresh, unguessable nonce each time', () => {
    const nonces = new Set(Array.from({ length: 50 }, makeNonce));
    assert.equal(nonces.size, 50);
    for (const nonce of nonces) {
      assert.ok(nonce.length >= 24);
    }
  });
});
