import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseInline, parseMarkdown, type Block, type Inline } from '../src/webview/markdown';

/** Every string the renderer would place in the DOM (as text or attribute). */
function strings(blocks: readonly Block[]): string[] {
  const out: string[] = [];
  const inline = (nodes: readonly Inline[]): void => {
    for (const node of nodes) {
      if (node.t === 'text' || node.t === 'code') out.push(node.v);
      if (node.t === 'link') out.push(node.href);
      if (node.t === 'strong' || node.t === 'em' || node.t === 'del' || node.t === 'link') inline(node.c);
    }
  };
  for (const block of blocks) {
    if (block.t === 'p' || block.t === 'h') inline(block.c);
    if (block.t === 'code') out.push(block.v);
    if (block.t === 'quote') out.push(...strings(block.c));
    if (block.t === 'list') block.items.forEach((item) => out.push(...strings(item)));
  }
  return out;
}

function links(blocks: readonly Block[]): string[] {
  const found: string[] = [];
  const walk = (nodes: readonly Inline[]): void => {
    for (const node of nodes) {
      if (node.t === 'link') found.push(node.href);
      if ('c' in node) walk(node.c);
    }
  };
  for (const block of blocks) {
    if (block.t === 'p' || block.t === 'h') walk(block.c);
    if (block.t === 'list') block.items.forEach((item) => found.push(...links(item)));
    if (block.t === 'quote') found.push(...links(block.c));
  }
  return found;
}

describe('parseMarkdown', () => {
  it('parses headings, paragraphs, lists, quotes, rules and fenced code', () => {
    const blocks = parseMarkdown(
      '# Title\n\nSome *text*.\n\n- one\n- two\n  - nested\n\n1. first\n2. second\n\n> quoted\n\n---\n\n```python\nprint("hi")\n```',
    );
    assert.deepEqual(
      blocks.map((block) => block.t),
      ['h', 'p', 'list', 'list', 'quote', 'hr', 'code'],
    );
    const code = blocks.at(-1);
    assert.deepEqual(code, { t: 'code', lang: 'python', v: 'print("hi")', closed: true });
    const bullets = blocks[2];
    assert.equal(bullets?.t === 'list' && bullets.items.length, 2);
    assert.equal(bullets?.t === 'list' && bullets.items[1]?.[1]?.t, 'list', 'indented item nests');
    const ordered = blocks[3];
    assert.equal(ordered?.t === 'list' && ordered.ordered, true);
  });

  it('keeps lazy continuation lines, loose items and code inside list items', () => {
    const blocks = parseMarkdown(
      '1. first\nstill first\n\n2. second\n   ```sh\n   make test\n   ```\nAfter.',
    );
    assert.equal(blocks.length, 2);
    const list = blocks[0];
    assert.ok(list?.t === 'list' && list.ordered);
    assert.equal(list.items.length, 2);
    assert.deepEqual(strings(list.items[0] ?? []), ['first', 'still first']);
    assert.deepEqual(list.items[1]?.[1], { t: 'code', lang: 'sh', v: 'make test', closed: true });
  });

  it('treats an unclosed fence as a growing code block (streaming)', () => {
    const blocks = parseMarkdown('Here:\n```ts\nconst a = 1;\nconst b');
    assert.deepEqual(blocks.at(-1), { t: 'code', lang: 'ts', v: 'const a = 1;\nconst b', closed: false });
  });

  it('does not end a fence on a shorter or different marker', () => {
    const blocks = parseMarkdown('````md\n```\ninner\n```\n````');
    assert.deepEqual(blocks, [{ t: 'code', lang: 'md', v: '```\ninner\n```', closed: true }]);
  });

  it('parses inline code, strong, emphasis, strikethrough and line breaks', () => {
    assert.deepEqual(parseInline('a `x*y*` **b** _c_ ~~d~~\ne'), [
      { t: 'text', v: 'a ' },
      { t: 'code', v: 'x*y*' },
      { t: 'text', v: ' ' },
      { t: 'strong', c: [{ t: 'text', v: 'b' }] },
      { t: 'text', v: ' ' },
      { t: 'em', c: [{ t: 'text', v: 'c' }] },
      { t: 'text', v: ' ' },
      { t: 'del', c: [{ t: 'text', v: 'd' }] },
      { t: 'br' },
      { t: 'text', v: 'e' },
    ]);
  });

  it('leaves snake_case identifiers alone', () => {
    assert.deepEqual(parseInline('call my_func_name now'), [{ t: 'text', v: 'call my_func_name now' }]);
  });

  it('honours backslash escapes', () => {
    assert.deepEqual(parseInline('\\*not em\\*'), [{ t: 'text', v: '*not em*' }]);
  });
});

describe('parseMarkdown: hostile input', () => {
  it('keeps raw HTML as literal text', () => {
    const source = '<img src=x onerror=alert(1)><script>alert(2)</script>';
    const blocks = parseMarkdown(source);
    assert.deepEqual(blocks, [{ t: 'p', c: [{ t: 'text', v: source }] }]);
  });

  it('renders only http(s) links as links', () => {
    const blocks = parseMarkdown(
      '[ok](https://example.com/a) [js](javascript:alert(1)) [cmd](command:workbench.action.terminal.new) [file](file:///etc/passwd) [data](data:text/html,<b>x</b>)',
    );
    assert.deepEqual(links(blocks), ['https://example.com/a']);
    const text = strings(blocks).join('');
    assert.ok(text.includes('[js](javascript:alert(1))'), 'refused links stay visible as text');
  });

  it('survives pathological nesting and long inputs quickly', () => {
    const nested = `${'> '.repeat(500)}deep\n${'- '.repeat(500)}list\n${'*'.repeat(20000)}`;
    const started = Date.now();
    const blocks = parseMarkdown(nested);
    assert.ok(blocks.length > 0);
    assert.ok(Date.now() - started < 2000, 'parsing stays fast');
  });
});
