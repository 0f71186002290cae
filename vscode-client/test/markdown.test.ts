import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { htmlToNodes, highlightCode } from '../src/webview/highlight';
import { parseMarkdown, type MdNode } from '../src/webview/markdown';

/** Every string the renderer would place in the DOM (as text or attribute). */
function strings(nodes: readonly MdNode[]): string[] {
  return nodes.flatMap((node): string[] => {
    switch (node.t) {
      case 'text':
        return [node.v];
      case 'code':
        return [node.v];
      case 'link':
        return [node.href, ...strings(node.c)];
      case 'el':
        return strings(node.c);
    }
  });
}

function links(nodes: readonly MdNode[]): string[] {
  return nodes.flatMap((node): string[] =>
    node.t === 'link' ? [node.href] : node.t === 'el' ? links(node.c) : [],
  );
}

function tags(nodes: readonly MdNode[]): string[] {
  return nodes.flatMap((node): string[] =>
    node.t === 'el'
      ? [node.tag, ...tags(node.c)]
      : node.t === 'link'
        ? ['a', ...tags(node.c)]
        : node.t === 'code'
          ? ['code-block']
          : [],
  );
}

describe('parseMarkdown (markdown-it)', () => {
  it('parses headings, paragraphs, lists, quotes, rules, tables and fenced code', () => {
    const nodes = parseMarkdown(
      '# Title\n\nSome *text*.\n\n- one\n- two\n  - nested\n\n3. third\n4. fourth\n\n> quoted\n\n---\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint("hi")\n```',
    );
    assert.deepEqual(
      nodes.map((node) => (node.t === 'el' ? node.tag : node.t)),
      ['h1', 'p', 'ul', 'ol', 'blockquote', 'hr', 'table', 'code'],
    );
    const ordered = nodes[3];
    assert.equal(ordered?.t === 'el' ? ordered.start : undefined, 3);
    const code = nodes.at(-1);
    assert.ok(code?.t === 'code');
    assert.equal(code.lang, 'python');
    assert.equal(code.v, 'print("hi")');
    assert.equal(code.closed, true);
    assert.ok(tags(nodes).includes('em'));
  });

  it('highlights known languages into hljs spans and leaves unknown ones plain', () => {
    const [code] = parseMarkdown('```python\ndef f():\n    return 1\n```');
    assert.ok(code?.t === 'code');
    assert.ok(code.hl.some((node) => node.t === 'span' && node.cls === 'hljs-keyword'));
    assert.deepEqual(highlightCode('x = 1', 'no-such-language'), [{ t: 'text', v: 'x = 1' }]);
  });

  it('treats an unclosed fence as a growing code block (streaming)', () => {
    const nodes = parseMarkdown('Here:\n```ts\nconst a = 1;\nconst b');
    const code = nodes.at(-1);
    assert.ok(code?.t === 'code');
    assert.equal(code.v, 'const a = 1;\nconst b');
    assert.equal(code.closed, false);
  });

  it('does not end a fence on a shorter marker', () => {
    const [code] = parseMarkdown('````md\n```\ninner\n```\n````');
    assert.ok(code?.t === 'code');
    assert.equal(code.v, '```\ninner\n```');
    assert.equal(code.closed, true);
  });
});

describe('parseMarkdown: hostile input', () => {
  it('keeps raw HTML as literal text (html is disabled)', () => {
    const source = '<img src=x onerror=alert(1)><script>alert(2)</script>';
    const nodes = parseMarkdown(source);
    assert.deepEqual(tags(nodes), ['p']);
    assert.equal(strings(nodes).join(''), source);
  });

  it('renders only http(s) links as links; refused links keep their text', () => {
    const nodes = parseMarkdown(
      '[ok](https://example.com/a) [js](javascript:alert(1)) [cmd](command:workbench.action.terminal.new) [file](file:///etc/passwd) ![img](https://example.com/i.png)',
    );
    assert.deepEqual(links(nodes), ['https://example.com/a']);
    const text = strings(nodes).join('');
    assert.ok(text.includes('cmd') && text.includes('[img]'));
    assert.ok(text.includes('[js](javascript:alert(1))'), 'a refused link stays visible as plain text');
  });

  it('reads highlight output back as text, never as markup', () => {
    assert.deepEqual(htmlToNodes('<span class="hljs-string">&quot;&lt;b&gt;&quot;</span> &amp; x'), [
      { t: 'span', cls: 'hljs-string', c: [{ t: 'text', v: '"<b>"' }] },
      { t: 'text', v: ' & x' },
    ]);
    const [code] = parseMarkdown('```html\n<script>alert(1)</script>\n```');
    assert.ok(code?.t === 'code');
    const flat = JSON.stringify(code.hl);
    assert.ok(flat.includes('script') && !flat.includes('<span'));
  });

  it('survives pathological nesting and long inputs', () => {
    const nested = `${'> '.repeat(500)}deep\n${'- '.repeat(500)}list\n${'*'.repeat(20000)}`;
    assert.ok(parseMarkdown(nested).length > 0);
  });
});
