/**
 * Syntax highlighting for code blocks: highlight.js (core + the languages chat answers use
 * most), its HTML output read back into plain nodes so nothing is inserted as HTML.
 */

import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import lua from 'highlight.js/lib/languages/lua';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

export type HighlightNode = { t: 'text'; v: string } | { t: 'span'; cls: string; c: HighlightNode[] };

const LANGUAGES = {
  bash,
  c,
  cpp,
  css,
  diff,
  go,
  ini,
  java,
  javascript,
  json,
  lua,
  markdown,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(LANGUAGES)) {
  hljs.registerLanguage(name, language);
}

/** Code past this size is shown plain: highlighting it would stall the view while streaming. */
const MAX_HIGHLIGHT_CHARS = 100_000;

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#x27;': "'",
  '&#39;': "'",
};

function decode(text: string): string {
  return text.replace(/&(?:amp|lt|gt|quot|#x27|#39);/g, (entity) => ENTITIES[entity] ?? entity);
}

/** highlight.js HTML (only `<span class="…">`, `</span>` and escaped text) → nodes. */
export function htmlToNodes(html: string): HighlightNode[] {
  const root: HighlightNode[] = [];
  const stack: HighlightNode[][] = [root];
  const pattern = /<span class="([\w\- ]+)">|<\/span>|[^<]+|</g;
  for (const match of html.matchAll(pattern)) {
    const current = stack.at(-1) ?? root;
    const [whole, cls] = match;
    if (cls !== undefined) {
      const span: HighlightNode = { t: 'span', cls, c: [] };
      current.push(span);
      stack.push(span.c);
    } else if (whole === '</span>') {
      if (stack.length > 1) {
        stack.pop();
      }
    } else {
      current.push({ t: 'text', v: decode(whole) });
    }
  }
  return root;
}

/** Highlight `code` as `lang` (plain text when the language is unknown or the code huge). */
export function highlightCode(code: string, lang: string): HighlightNode[] {
  const language = lang.toLowerCase();
  if (language === '' || code.length > MAX_HIGHLIGHT_CHARS || hljs.getLanguage(language) === undefined) {
    return [{ t: 'text', v: code }];
  }
  try {
    return htmlToNodes(hljs.highlight(code, { language, ignoreIllegals: true }).value);
  } catch {
    return [{ t: 'text', v: code }];
  }
}
