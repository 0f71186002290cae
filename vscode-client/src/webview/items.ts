/** One chat item → its DOM element (messages, tool cards, review cards, errors, notices). */

import { peerBadge } from '../model/peerMessage';
import type { AssistantItem, DisplayItem, ErrorItem, NoticeItem, UserItem } from '../shared/viewState';
import { renderChanges } from './changesView';
import { renderChips } from './chips';
import { actionButton, element } from './dom';
import { parseMarkdown } from './markdown';
import { renderNodes } from './markdownDom';
import { renderPlan } from './planView';
import { renderTool, renderToolGroup } from './toolView';

const OUTCOME_LABELS = {
  cancelled: 'Stopped — not answered',
  interrupted: 'Interrupted — the server stopped',
} as const;

/**
 * What an item's element depends on beyond the item. Whether a turn runs is not here: the
 * actions that need an idle chat (Fork, Edit, Retry, Apply…) carry the class `needs-idle` and
 * the list hides them while a turn runs, so nothing is re-rendered when a turn starts or ends.
 */
export interface ItemContext {
  /** The newest user message: "Retry" is offered on it and the answers after it. */
  lastUserId?: string;
}

function idleAction(label: string, action: string, itemId: string, title: string): HTMLElement {
  const button = actionButton(label, action, { itemId }, 'link-button needs-idle');
  button.title = title;
  return button;
}

function messageActions(item: UserItem | AssistantItem, context: ItemContext): HTMLElement[] {
  const actions = element('div', 'message-actions');
  const copy = actionButton('Copy', 'copyMessage', { itemId: item.id });
  copy.title = 'Copy this message';
  actions.append(copy);
  if (item.sequence !== undefined) {
    if (item.kind === 'user') {
      actions.append(
        idleAction(
          'Edit',
          'editMessage',
          item.id,
          'Edit and resend in a fork (this version stays in the history)',
        ),
      );
    }
    if (item.id === context.lastUserId) {
      actions.append(
        idleAction(
          'Retry',
          'retryTurn',
          item.id,
          'Send this message again in a fork before it (the first answer stays reachable)',
        ),
      );
    }
    actions.append(
      idleAction('Fork', 'fork', item.id, 'Start a new chat with the conversation up to this message'),
    );
    if (item.kind === 'user') {
      actions.append(
        idleAction(
          'Restore to here',
          'rewind',
          item.id,
          'Put back the files the agent changed since this message, and continue from before it',
        ),
      );
    }
  }
  return [actions];
}

function renderUser(item: UserItem, context: ItemContext): HTMLElement {
  const classes = ['message', 'user'];
  if (item.peer !== undefined) {
    classes.push('peer');
  }
  if (item.outcome !== undefined) {
    classes.push(`outcome-${item.outcome}`);
  }
  const node = element('div', classes.join(' '));
  if (item.peer === undefined) {
    node.append(element('div', 'role', 'You'));
  } else {
    // Another session's agent wrote it: say who, so it is not mistaken for the user's own.
    const badge = element('div', 'role peer-badge', peerBadge(item.peer));
    badge.title = `Peer message from the ${item.peer.agent} agent, session ${item.peer.sessionId}`;
    node.append(badge);
  }
  if (item.attachments !== undefined && item.attachments.length > 0) {
    node.append(renderChips(item.attachments, false));
  }
  node.append(element('div', 'user-text', item.text));
  if (item.outcome !== undefined) {
    node.append(element('div', 'user-outcome', OUTCOME_LABELS[item.outcome]));
  }
  node.append(...messageActions(item, context));
  return node;
}

function renderAssistant(item: AssistantItem, context: ItemContext): HTMLElement {
  const node = element('div', 'message assistant');
  const role = element('div', 'role', 'Relavium');
  if (item.model !== undefined) {
    role.append(element('span', 'model-tag', item.model));
  }
  node.append(role);
  if (item.reasoning !== '') {
    const details = element('details', 'reasoning');
    details.dataset.key = 'reasoning';
    details.append(
      element('summary', undefined, 'Reasoning'),
      element('div', 'reasoning-text', item.reasoning),
    );
    node.append(details);
  }
  node.append(assistantBody(item));
  if (!item.streaming) {
    node.append(...messageActions(item, context));
  }
  return node;
}

function assistantBody(item: AssistantItem): HTMLElement {
  const body = element('div', 'markdown');
  renderNodes(parseMarkdown(item.text), body);
  if (item.streaming) {
    body.append(element('span', 'cursor', '▍'));
  }
  return body;
}

/**
 * A streamed token's update of an answer already on screen: only its text (and reasoning)
 * change, so only they are rebuilt — not the header, not the actions. False when the element
 * is not one that can be updated so (the caller renders the item anew).
 */
export function updateStreamingAnswer(node: HTMLElement, item: AssistantItem): boolean {
  const body = node.querySelector(':scope > .markdown');
  const reasoning = node.querySelector(':scope > .reasoning > .reasoning-text');
  if (!item.streaming || body === null || (item.reasoning !== '') !== (reasoning !== null)) {
    return false;
  }
  if (reasoning !== null && reasoning.textContent !== item.reasoning) {
    reasoning.textContent = item.reasoning;
  }
  body.replaceWith(assistantBody(item));
  return true;
}

function renderError(item: ErrorItem): HTMLElement {
  const node = element('div', 'error-card');
  node.setAttribute('role', 'alert');
  node.append(element('span', 'error-code', item.code), element('span', 'error-message', item.message));
  if (item.retryText !== undefined) {
    node.append(
      actionButton(item.retryable ? 'Retry' : 'Send again', 'retry', { itemId: item.id }, 'secondary'),
    );
  }
  return node;
}

function renderNotice(item: NoticeItem): HTMLElement {
  const node = element('div', `notice tone-${item.tone}`);
  node.append(element('span', 'notice-text', item.text));
  if (item.action !== undefined) {
    node.append(
      actionButton(item.action.label, 'noticeAction', { itemId: item.id }, 'secondary notice-action'),
    );
  }
  return node;
}

/** Build the element for one item. */
export function renderItem(item: DisplayItem, context: ItemContext): HTMLElement {
  let node: HTMLElement;
  switch (item.kind) {
    case 'user':
      node = renderUser(item, context);
      break;
    case 'assistant':
      node = renderAssistant(item, context);
      break;
    case 'tool':
      node = renderTool(item);
      break;
    case 'error':
      node = renderError(item);
      break;
    case 'toolGroup':
      node = renderToolGroup(item);
      break;
    case 'notice':
      node = renderNotice(item);
      break;
    case 'plan':
      node = renderPlan(item);
      break;
    case 'changes':
      node = renderChanges(item);
      break;
  }
  node.dataset.itemId = item.id;
  node.classList.add('item');
  return node;
}
