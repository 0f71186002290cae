/**
 * Chat answers (markdown) → a tree of allowed nodes, never HTML.
 *
 * Parsing is markdown-it's (CommonMark + tables + strikethrough) with raw HTML disabled; the
 * tree is built from its token stream through an allowlist, and the DOM from the tree with
 * `createElement`/`textContent` only (see `markdownDom.ts`). So nothing the model writes can
 * become markup or script, under a CSP that forbids inline script anyway. Links survive only
 * with http(s) targets (the host checks again before opening one); images render as their
 * alt text. Code blocks are highlighted by highlight.js, whose output (spans with `hljs-*`
 * classes around escaped text) is read back into tree nodes rather than inserted as HTML.
 * Half-written input is what streaming produces: an unclosed fence is a growing code block.
 */

import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import { highlightCode, type HighlightNode } from './highlight';

export type ElementTag =
  | 'p'
  | 'h1'
  | 'h2'
  | 'h3'
  | 'h4'
  | 'h5'
  | 'h6'
  | 'ul'
  | 'ol'
  | 'li'
  | 'blockquote'
  | 'hr'
  | 'br'
  | 'strong'
  | 'em'
  | 'del'
  | 'code'
  | 'table'
  | 'thead'
  | 'tbody'
  | 'tr'
  | 'th'
  | 'td';

export type MdNode =
  | { t: 'text'; v: string }
  | { t: 'el'; tag: ElementTag; c: MdNode[]; start?: number }
  | { t: 'link'; href: string; c: MdNode[] }
  | { t: 'code'; lang: string; v: string; closed: boolean; hl: HighlightNode[] };

const CONTAINERS: Record<string, ElementTag> = {
  paragraph: 'p',
  bullet_list: 'ul',
  ordered_list: 'ol',
  list_item: 'li',
  blockquote: 'blockquote',
  strong: 'strong',
  em: 'em',
  s: 'del',
  table: 'table',
  thead: 'thead',
  tbody: 'tbody',
  tr: 'tr',
  th: 'th',
  td: 'td',
};
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const MAX_DEPTH = 40;

const md = new MarkdownIt('commonmark', { html: false, linkify: false, breaks: true })
  .enable(['table', 'strikethrough'])
  .set({ maxNesting: MAX_DEPTH });

/** Whether a link target may be rendered as a link (everything else stays text). */
export function isWebLink(href: string): boolean {
  return /^https?:\/\/[^\s]+$/i.test(href);
}

/** The fence a code block opened with is closed in `source` (streaming leaves it open). */
function fenceClosed(token: Token, lines: readonly string[]): boolean {
  const [, end] = token.map ?? [0, 0];
  const last = (lines[end - 1] ?? '').trim();
  const marker = token.markup;
  return end - 1 > (token.map?.[0] ?? 0) && last.startsWith(marker) && /^(`{3,}|~{3,})$/.test(last);
}

class TreeBuilder {
  private readonly stack: MdNode[][] = [[]];
  private readonly open: (Extract<MdNode, { t: 'el' | 'link' }> | undefined)[] = [];

  constructor(private readonly lines: readonly string[]) {}

  get result(): MdNode[] {
    return this.stack[0] ?? [];
  }

  private get current(): MdNode[] {
    return this.stack.at(-1) ?? [];
  }

  push(node: MdNode): void {
    const list = this.current;
    const last = list.at(-1);
    if (node.t === 'text' && last?.t === 'text') {
      last.v += node.v;
    } else {
      list.push(node);
    }
  }

  /** Open a container; `undefined` keeps the children in the parent (hidden paragraphs). */
  enter(node: Extract<MdNode, { t: 'el' | 'link' }> | undefined): void {
    this.open.push(node);
    if (node !== undefined) {
      this.current.push(node);
      this.stack.push(node.c);
    }
  }

  leave(): void {
    if (this.open.pop() !== undefined && this.stack.length > 1) {
      this.stack.pop();
    }
  }

  tokens(tokens: readonly Token[]): void {
    for (const token of tokens) {
      this.token(token);
    }
  }

  private token(token: Token): void {
    const base = token.type.replace(/_(open|close)$/, '');
    if (token.nesting === 1) {
      this.enter(this.opening(token, base));
      return;
    }
    if (token.nesting === -1) {
      this.leave();
      return;
    }
    switch (token.type) {
      case 'inline':
        this.tokens(token.children ?? []);
        return;
      case 'text':
      case 'html_inline':
      case 'html_block':
        this.push({ t: 'text', v: token.content });
        return;
      case 'softbreak':
      case 'hardbreak':
        this.push({ t: 'el', tag: 'br', c: [] });
        return;
      case 'code_inline':
        this.push({ t: 'el', tag: 'code', c: [{ t: 'text', v: token.content }] });
        return;
      case 'hr':
        this.push({ t: 'el', tag: 'hr', c: [] });
        return;
      case 'image':
        this.push({ t: 'text', v: token.content === '' ? '[image]' : `[${token.content}]` });
        return;
      case 'fence':
      case 'code_block': {
        const lang = token.info.trim().split(/\s+/, 1)[0] ?? '';
        const v = token.content.replace(/\n$/, '');
        const closed = token.type === 'code_block' || fenceClosed(token, this.lines);
        this.push({ t: 'code', lang, v, closed, hl: highlightCode(v, lang) });
        return;
      }
      default:
        if (token.content !== '') {
          this.push({ t: 'text', v: token.content });
        }
    }
  }

  private opening(token: Token, base: string): Extract<MdNode, { t: 'el' | 'link' }> | undefined {
    if (base === 'paragraph' && token.hidden) {
      return undefined;
    }
    if (base === 'link') {
      const href = String(token.attrGet('href') ?? '');
      // A refused link keeps its text, without the target.
      return isWebLink(href) ? { t: 'link', href, c: [] } : undefined;
    }
    if (base === 'heading' && HEADINGS.has(token.tag)) {
      return { t: 'el', tag: token.tag as ElementTag, c: [] };
    }
    const tag = CONTAINERS[base];
    if (tag === undefined) {
      return undefined;
    }
    const start = Number(token.attrGet('start') ?? 1);
    return tag === 'ol' && start !== 1 && Number.isFinite(start)
      ? { t: 'el', tag, c: [], start }
      : { t: 'el', tag, c: [] };
  }
}

/** Parse markdown source into the allowed tree. */
export function parseMarkdown(source: string): MdNode[] {
  const normalised = source.replace(/\r\n?/g, '\n');
  const builder = new TreeBuilder(normalised.split('\n'));
  builder.tokens(md.parse(normalised, {}));
  return builder.result;
}
