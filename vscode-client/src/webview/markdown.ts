/**
 * A small markdown parser for chat answers: text → a tree, never HTML.
 *
 * Model output is untrusted. Producing a tree (rendered with `textContent` and
 * `createElement` only) means no string from the model is ever parsed as HTML, so raw HTML
 * in an answer shows up as literal text. Links survive only with http(s) targets. The parser
 * tolerates half-written input, which is what streaming produces: an unclosed code fence is a
 * code block that is still growing.
 */

export type Inline =
  | { t: 'text'; v: string }
  | { t: 'code'; v: string }
  | { t: 'strong' | 'em' | 'del'; c: Inline[] }
  | { t: 'link'; href: string; c: Inline[] }
  | { t: 'br' };

export type Block =
  | { t: 'p'; c: Inline[] }
  | { t: 'h'; level: number; c: Inline[] }
  | { t: 'code'; lang: string; v: string; closed: boolean }
  | { t: 'list'; ordered: boolean; start: number; items: Block[][] }
  | { t: 'quote'; c: Block[] }
  | { t: 'hr' };

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const BULLET = /^( {0,3})([-*+])\s+(.*)$/;
const ORDERED = /^( {0,3})(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const MAX_DEPTH = 8;

/** Whether a link target may be rendered as a link (everything else stays text). */
export function isWebLink(href: string): boolean {
  return /^https?:\/\/[^\s]+$/i.test(href);
}

function isClosingFence(line: string, opening: string): boolean {
  const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line)?.[1];
  return close !== undefined && close.startsWith(opening.charAt(0)) && close.length >= opening.length;
}

function listMarker(line: string): RegExpMatchArray | null {
  return BULLET.exec(line) ?? ORDERED.exec(line);
}

function startsBlock(line: string): boolean {
  return (
    FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || listMarker(line) !== null
  );
}

/** Parse markdown source into blocks. */
export function parseMarkdown(source: string, depth = 0): Block[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] ?? '';
    if (line.trim() === '') {
      index += 1;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence !== null) {
      const marker = fence[1] ?? '```';
      const body: string[] = [];
      index += 1;
      let closed = false;
      while (index < lines.length) {
        const current = lines[index] ?? '';
        index += 1;
        if (isClosingFence(current, marker)) {
          closed = true;
          break;
        }
        body.push(current);
      }
      blocks.push({ t: 'code', lang: fence[2] ?? '', v: body.join('\n'), closed });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading !== null) {
      blocks.push({ t: 'h', level: heading[1]?.length ?? 1, c: parseInline(heading[2] ?? '') });
      index += 1;
      continue;
    }
    if (RULE.test(line)) {
      blocks.push({ t: 'hr' });
      index += 1;
      continue;
    }
    if (QUOTE.test(line) && depth < MAX_DEPTH) {
      const quoted: string[] = [];
      while (index < lines.length && QUOTE.test(lines[index] ?? '')) {
        quoted.push(QUOTE.exec(lines[index] ?? '')?.[1] ?? '');
        index += 1;
      }
      blocks.push({ t: 'quote', c: parseMarkdown(quoted.join('\n'), depth + 1) });
      continue;
    }
    const marker = listMarker(line);
    if (marker !== null && depth < MAX_DEPTH) {
      index = parseList(lines, index, blocks, depth);
      continue;
    }
    const paragraph: string[] = [];
    while (index < lines.length) {
      const current = lines[index] ?? '';
      if (current.trim() === '' || (paragraph.length > 0 && startsBlock(current))) {
        break;
      }
      paragraph.push(current.trim());
      index += 1;
    }
    blocks.push({ t: 'p', c: parseInline(paragraph.join('\n')) });
  }
  return blocks;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function parseList(lines: readonly string[], from: number, out: Block[], depth: number): number {
  const orderedMarker = ORDERED.exec(lines[from] ?? '');
  const ordered = orderedMarker !== null;
  const start = Number(orderedMarker?.[2] ?? '1');
  const base = indentOf(lines[from] ?? '');
  const isSibling = (line: string): boolean =>
    listMarker(line) !== null && indentOf(line) <= base + 1 && ORDERED.test(line) === ordered;
  const items: string[][] = [];
  let contentOffset = 0;
  let index = from;
  while (index < lines.length) {
    const line = lines[index] ?? '';
    const marker = listMarker(line);
    if (marker !== null && isSibling(line)) {
      const content = marker[3] ?? '';
      contentOffset = line.length - content.length;
      items.push([content]);
      index += 1;
      continue;
    }
    const current = items.at(-1);
    if (current === undefined) {
      break;
    }
    if (line.trim() === '') {
      const next = lines[index + 1] ?? '';
      if (next.trim() !== '' && (isSibling(next) || indentOf(next) >= base + 2)) {
        current.push('');
        index += 1;
        continue;
      }
      break;
    }
    const indent = indentOf(line);
    // A lazy (unindented) line continues only a paragraph, never a closed code fence.
    const previous = lines[index - 1] ?? '';
    const lazy = indent < base + 2 && !startsBlock(line) && previous.trim() !== '' && !FENCE.test(previous);
    if (indent >= base + 2 || lazy) {
      current.push(line.slice(Math.min(indent, contentOffset)));
      index += 1;
      continue;
    }
    break;
  }
  out.push({
    t: 'list',
    ordered,
    start,
    items: items.map((item) => parseMarkdown(item.join('\n'), depth + 1)),
  });
  return index;
}

/** Emphasis never spans further than this; bounding the search keeps parsing linear. */
const MAX_SPAN = 2000;
const ESCAPABLE = /[!-/:-@[-`{-~]/;
const LINK = /\[([^\]\n]+)\]\(([^)\s]+)\)/y;
const DELIMITERS = [
  ['**', 'strong'],
  ['__', 'strong'],
  ['~~', 'del'],
  ['*', 'em'],
  ['_', 'em'],
] as const;

function findClosing(source: string, marker: string, from: number): number {
  const limit = Math.min(source.length, from + MAX_SPAN);
  let index = source.indexOf(marker, from);
  while (index > 0 && index < limit && source[index - 1] === '\\') {
    index = source.indexOf(marker, index + marker.length);
  }
  return index >= 0 && index < limit ? index : -1;
}

function isWordChar(char: string | undefined): boolean {
  return char !== undefined && /[\p{L}\p{N}]/u.test(char);
}

/** Parse inline markdown (code spans, emphasis, links, line breaks). */
export function parseInline(source: string, depth = 0): Inline[] {
  const out: Inline[] = [];
  let buffer = '';
  const flush = (): void => {
    if (buffer !== '') {
      out.push({ t: 'text', v: buffer });
      buffer = '';
    }
  };
  let index = 0;
  while (index < source.length) {
    const char = source.charAt(index);
    if (char === '\\' && ESCAPABLE.test(source.charAt(index + 1))) {
      buffer += source.charAt(index + 1);
      index += 2;
      continue;
    }
    if (char === '\n') {
      flush();
      out.push({ t: 'br' });
      index += 1;
      continue;
    }
    if (char === '`') {
      let end = index;
      while (source.charAt(end) === '`') {
        end += 1;
      }
      const run = source.slice(index, end);
      const close = source.indexOf(run, end);
      if (close > 0) {
        flush();
        out.push({ t: 'code', v: source.slice(end, close).trim() || ' ' });
        index = close + run.length;
      } else {
        buffer += run;
        index = end;
      }
      continue;
    }
    const delimited =
      '[*_~'.includes(char) && depth < MAX_DEPTH ? parseDelimited(source, index, depth) : undefined;
    if (delimited !== undefined) {
      flush();
      out.push(delimited.node);
      index = delimited.end;
      continue;
    }
    buffer += char;
    index += 1;
  }
  flush();
  return out;
}

function parseDelimited(
  source: string,
  index: number,
  depth: number,
): { node: Inline; end: number } | undefined {
  if (source.startsWith('[', index)) {
    LINK.lastIndex = index;
    const link = LINK.exec(source);
    if (link === null) {
      return undefined;
    }
    const href = link[2] ?? '';
    const node: Inline = isWebLink(href)
      ? { t: 'link', href, c: parseInline(link[1] ?? '', depth + 1) }
      : { t: 'text', v: link[0] };
    return { node, end: index + link[0].length };
  }
  for (const [marker, kind] of DELIMITERS) {
    if (!source.startsWith(marker, index)) {
      continue;
    }
    const after = source.charAt(index + marker.length);
    if (after === '' || /\s/.test(after)) {
      return undefined;
    }
    if (marker.startsWith('_') && isWordChar(source[index - 1])) {
      return undefined;
    }
    const close = findClosing(source, marker, index + marker.length);
    if (close < 0 || /\s/.test(source.charAt(close - 1))) {
      return undefined;
    }
    if (marker.startsWith('_') && isWordChar(source[close + marker.length])) {
      return undefined;
    }
    const inner = source.slice(index + marker.length, close);
    return { node: { t: kind, c: parseInline(inner, depth + 1) }, end: close + marker.length };
  }
  return undefined;
}
