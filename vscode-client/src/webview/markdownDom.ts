/**
 * Markdown tree → DOM, using only `createElement` and `textContent` (never `innerHTML`), so
 * nothing the model writes can become markup or script.
 */

import { actionButton, element } from './dom';
import type { HighlightNode } from './highlight';
import type { MdNode } from './markdown';

/** Whether the code-block buttons work (a block still streaming has them disabled). */
export interface CodeBlockOptions {
  /** Offer "Apply" (writing the code into a file through the server's approval). */
  apply: boolean;
}

function renderHighlight(nodes: readonly HighlightNode[], parent: HTMLElement): void {
  for (const node of nodes) {
    if (node.t === 'text') {
      parent.append(document.createTextNode(node.v));
    } else {
      const span = element('span');
      // Only hljs token classes reach the page (the pattern in highlight.ts allows no others).
      span.className = node.cls
        .split(' ')
        .filter((name) => /^hljs-[\w-]+$/.test(name) || /^[\w-]+_$/.test(name))
        .join(' ');
      renderHighlight(node.c, span);
      parent.append(span);
    }
  }
}

function renderCodeBlock(block: Extract<MdNode, { t: 'code' }>, options: CodeBlockOptions): HTMLElement {
  const wrapper = element('div', 'code-block');
  const head = element('div', 'code-head');
  head.append(element('span', 'code-lang', block.lang || 'text'));
  const actions = element('span', 'code-actions');
  const buttons: [string, string, string][] = [
    ['copyCode', 'Copy', 'Copy to the clipboard'],
    ['insertCode', 'Insert', 'Insert at the cursor of the last active editor'],
  ];
  if (options.apply) {
    buttons.push(['applyCode', 'Apply…', 'Write into a file through the approval, as an agent edit']);
  }
  for (const [action, label, title] of buttons) {
    const button = actionButton(label, action);
    button.title = title;
    button.disabled = !block.closed;
    actions.append(button);
  }
  head.append(actions);
  const pre = element('pre');
  const code = element(
    'code',
    `code-text hljs${block.lang === '' ? '' : ` language-${block.lang.replace(/[^\w-]/g, '')}`}`,
  );
  renderHighlight(block.hl, code);
  pre.append(code);
  wrapper.dataset.lang = block.lang;
  wrapper.append(head, pre);
  return wrapper;
}

function renderNode(node: MdNode, options: CodeBlockOptions): Node {
  switch (node.t) {
    case 'text':
      return document.createTextNode(node.v);
    case 'code':
      return renderCodeBlock(node, options);
    case 'link': {
      // The host opens the link (after checking its scheme again); the href is informative.
      const anchor = element('a');
      anchor.href = node.href;
      anchor.dataset.action = 'openLink';
      anchor.dataset.href = node.href;
      anchor.title = node.href;
      renderNodes(node.c, anchor, options);
      return anchor;
    }
    case 'el': {
      const tag = element(node.tag);
      if (node.tag === 'code') {
        tag.className = 'inline-code';
      }
      if (node.start !== undefined && tag instanceof HTMLOListElement) {
        tag.start = node.start;
      }
      renderNodes(node.c, tag, options);
      return tag;
    }
  }
}

/** Append the DOM for `nodes` to `parent`. */
export function renderNodes(nodes: readonly MdNode[], parent: HTMLElement, options: CodeBlockOptions): void {
  for (const node of nodes) {
    parent.append(renderNode(node, options));
  }
}
