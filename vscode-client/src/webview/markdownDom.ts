/**
 * Markdown tree → DOM, using only `createElement` and `textContent` (never `innerHTML`), so
 * nothing the model writes can become markup or script.
 */

import { actionButton, element } from './dom';
import type { HighlightNode } from './highlight';
import type { MdNode } from './markdown';

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

/**
 * A fenced code block with Copy / Insert / Apply… (a block still streaming has them disabled;
 * Apply hides while no chat can run it, by a class on the list — no re-render).
 */
function renderCodeBlock(block: Extract<MdNode, { t: 'code' }>): HTMLElement {
  const wrapper = element('div', 'code-block');
  const head = element('div', 'code-head');
  head.append(element('span', 'code-lang', block.lang || 'text'));
  const actions = element('span', 'code-actions');
  const buttons: [string, string, string][] = [
    ['copyCode', 'Copy', 'Copy to the clipboard'],
    ['insertCode', 'Insert', 'Insert at the cursor of the last active editor'],
    ['applyCode', 'Apply…', 'Write into a file through the approval, as an agent edit'],
  ];
  for (const [action, label, title] of buttons) {
    const button = actionButton(
      label,
      action,
      {},
      action === 'applyCode' ? 'link-button code-apply' : 'link-button',
    );
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

function renderNode(node: MdNode): Node {
  switch (node.t) {
    case 'text':
      return document.createTextNode(node.v);
    case 'code':
      return renderCodeBlock(node);
    case 'link': {
      // The host opens the link (after checking its scheme again); the href is informative.
      const anchor = element('a');
      anchor.href = node.href;
      anchor.dataset.action = 'openLink';
      anchor.dataset.href = node.href;
      anchor.title = node.href;
      renderNodes(node.c, anchor);
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
      renderNodes(node.c, tag);
      return tag;
    }
  }
}

/** Append the DOM for `nodes` to `parent`. */
export function renderNodes(nodes: readonly MdNode[], parent: HTMLElement): void {
  for (const node of nodes) {
    parent.append(renderNode(node));
  }
}
