/**
 * Markdown tree → DOM, using only `createElement` and `textContent` (never `innerHTML`), so
 * nothing the model writes can become markup or script.
 */

import { actionButton, element } from './dom';
import type { Block, Inline } from './markdown';

function renderInline(nodes: readonly Inline[], parent: HTMLElement): void {
  for (const node of nodes) {
    switch (node.t) {
      case 'text':
        parent.append(document.createTextNode(node.v));
        break;
      case 'br':
        parent.append(element('br'));
        break;
      case 'code':
        parent.append(element('code', 'inline-code', node.v));
        break;
      case 'strong':
      case 'em':
      case 'del': {
        const tag = node.t === 'strong' ? 'strong' : node.t === 'em' ? 'em' : 'del';
        const wrapper = element(tag);
        renderInline(node.c, wrapper);
        parent.append(wrapper);
        break;
      }
      case 'link': {
        // The host opens the link (after checking its scheme again); the href is informative.
        const anchor = element('a');
        anchor.href = node.href;
        anchor.dataset.action = 'openLink';
        anchor.dataset.href = node.href;
        anchor.title = node.href;
        renderInline(node.c, anchor);
        parent.append(anchor);
        break;
      }
    }
  }
}

function renderCodeBlock(block: Extract<Block, { t: 'code' }>): HTMLElement {
  const wrapper = element('div', 'code-block');
  const head = element('div', 'code-head');
  head.append(element('span', 'code-lang', block.lang || 'text'));
  const actions = element('span', 'code-actions');
  for (const [action, label] of [
    ['copyCode', 'Copy'],
    ['insertCode', 'Insert at cursor'],
  ] as const) {
    const button = actionButton(label, action);
    button.disabled = !block.closed;
    actions.append(button);
  }
  head.append(actions);
  const pre = element('pre');
  const code = element('code', 'code-text', block.v);
  pre.append(code);
  wrapper.append(head, pre);
  return wrapper;
}

function renderBlock(block: Block): HTMLElement {
  switch (block.t) {
    case 'p': {
      const paragraph = element('p');
      renderInline(block.c, paragraph);
      return paragraph;
    }
    case 'h': {
      const heading = element(`h${Math.min(6, Math.max(1, block.level))}` as 'h1');
      renderInline(block.c, heading);
      return heading;
    }
    case 'code':
      return renderCodeBlock(block);
    case 'list': {
      const list = block.ordered ? element('ol') : element('ul');
      if (block.ordered && block.start !== 1 && list instanceof HTMLOListElement) {
        list.start = block.start;
      }
      for (const item of block.items) {
        const entry = element('li');
        renderBlocks(item, entry);
        list.append(entry);
      }
      return list;
    }
    case 'quote': {
      const quote = element('blockquote');
      renderBlocks(block.c, quote);
      return quote;
    }
    case 'hr':
      return element('hr');
  }
}

/** Append the DOM for `blocks` to `parent`. */
export function renderBlocks(blocks: readonly Block[], parent: HTMLElement): void {
  for (const block of blocks) {
    parent.append(renderBlock(block));
  }
}
