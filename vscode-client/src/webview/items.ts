/** One chat item → its DOM element (messages, tool cards, approvals, errors, notices). */

import { formatDuration, shownChange } from '../model/format';
import { peerBadge } from '../model/peerMessage';
import type { ApprovalPreview } from '../protocol';
import type {
  ApprovalDiffView,
  ApprovalView,
  AssistantItem,
  ChatItem,
  ErrorItem,
  ToolItem,
  ToolState,
  UserItem,
} from '../shared/viewState';
import { renderChips } from './chips';
import { actionButton, element } from './dom';
import { parseMarkdown } from './markdown';
import { renderNodes } from './markdownDom';
import { renderPlan } from './planView';

/** Whether messages may offer "Fork from here" (a session exists and no turn runs). */
export interface ItemContext {
  canFork: boolean;
  /** Whether code blocks offer "Apply" (a session exists to run the approval in). */
  canApply: boolean;
  /** The newest user message: "Retry" is offered on it and the answers after it. */
  lastUserId?: string;
}

const TOOL_STATE_LABELS: Record<ToolState, string> = {
  running: 'running…',
  awaiting_approval: 'waiting for approval',
  succeeded: 'done',
  failed: 'failed',
  interrupted: 'no result recorded',
};

const APPROVAL_STATE_LABELS: Record<ApprovalView['state'], string> = {
  pending: 'Waiting for your decision',
  approved: 'Approved',
  approved_always: 'Approved for this session',
  rejected: 'Rejected',
};

function messageActions(item: UserItem | AssistantItem, context: ItemContext): HTMLElement[] {
  const actions = element('div', 'message-actions');
  const copy = actionButton('Copy', 'copyMessage', { itemId: item.id });
  copy.title = 'Copy this message';
  actions.append(copy);
  if (context.canFork && item.sequence !== undefined) {
    if (item.kind === 'user') {
      const edit = actionButton('Edit', 'editMessage', { itemId: item.id });
      edit.title = 'Edit and resend in a fork (this version stays in the sessions list)';
      actions.append(edit);
    }
    if (item.id === context.lastUserId) {
      const retry = actionButton('Retry', 'retryTurn', { itemId: item.id });
      retry.title = 'Send this message again in a fork before it (the first answer stays reachable)';
      actions.append(retry);
    }
    const fork = actionButton('Fork', 'fork', { itemId: item.id });
    fork.title = 'Start a new session with the conversation up to this message';
    actions.append(fork);
    if (item.kind === 'user') {
      const restore = actionButton('Restore to here', 'rewind', { itemId: item.id });
      restore.title = 'Put back the files the agent changed since this message, and continue from before it';
      actions.append(restore);
    }
  }
  return [actions];
}

function renderUser(item: UserItem, context: ItemContext): HTMLElement {
  const node = element('div', item.peer === undefined ? 'message user' : 'message user peer');
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
  const body = element('div', 'markdown');
  renderNodes(parseMarkdown(item.text), body, { apply: context.canApply });
  if (item.streaming) {
    body.append(element('span', 'cursor', '▍'));
  }
  node.append(body);
  if (!item.streaming) {
    node.append(...messageActions(item, context));
  }
  return node;
}

function previewLine(action: ApprovalView['action'], preview: ApprovalPreview): string {
  switch (action) {
    case 'fs_write':
      return `Write file ${preview.path ?? '(unknown path)'}`;
    case 'process':
      return `Run command ${preview.command ?? '(unknown command)'}`;
    case 'egress':
      return `Network request to ${preview.host ?? '(unknown host)'}`;
  }
}

/** The unified diff, one line per element so +/- lines can be coloured. */
function renderDiff(diff: ApprovalDiffView): HTMLElement {
  const block = element('pre', 'approval-diff');
  const lines = diff.unified.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  for (const line of lines) {
    const kind =
      line.startsWith('+++') || line.startsWith('---')
        ? 'diff-file'
        : line.startsWith('@@')
          ? 'diff-hunk'
          : line.startsWith('+')
            ? 'diff-add'
            : line.startsWith('-')
              ? 'diff-del'
              : 'diff-context';
    block.append(element('span', `diff-line ${kind}`, line + '\n'));
  }
  return block;
}

function renderApproval(card: ToolItem, approval: ApprovalView): HTMLElement {
  const node = element('div', `approval approval-${approval.state}`);
  const what = previewLine(approval.action, approval.preview);
  const diff = approval.diff;
  node.append(
    element('div', 'approval-what', diff === undefined ? what : `${what} (+${diff.added} −${diff.removed})`),
  );
  if (diff !== undefined) {
    node.append(renderDiff(diff));
  }
  if (approval.state === 'pending' && approval.answerable) {
    const buttons = element('div', 'approval-buttons');
    if (diff !== undefined && !diff.truncated) {
      buttons.append(actionButton('Review in diff editor', 'openDiff', { callId: card.callId }, 'secondary'));
    }
    buttons.append(
      actionButton('Approve', 'approval', { callId: card.callId, decision: 'approve' }, 'primary'),
      actionButton('Reject', 'approval', { callId: card.callId, decision: 'reject' }, 'secondary'),
      actionButton(
        'Always for this session',
        'approval',
        { callId: card.callId, decision: 'approve_always' },
        'secondary',
      ),
    );
    node.append(buttons);
  } else {
    node.append(element('div', 'approval-state', APPROVAL_STATE_LABELS[approval.state]));
  }
  return node;
}

/** The change a file tool made without an approval card showing it (e.g. "always allow"). */
function renderChange(diff: ApprovalDiffView): HTMLElement {
  const details = element('details', 'tool-diff');
  details.dataset.key = 'diff';
  details.open = true;
  details.append(
    element('summary', undefined, `Changes (+${diff.added} −${diff.removed})`),
    renderDiff(diff),
  );
  if (diff.truncated) {
    details.append(element('div', 'diff-truncated', 'Diff truncated: the whole change is in the file.'));
  }
  return details;
}

function renderTool(card: ToolItem): HTMLElement {
  const node = element('div', `tool-card state-${card.state}`);
  const head = element('div', 'tool-head');
  head.append(
    element('span', 'tool-name', card.toolId),
    element('span', 'tool-state', TOOL_STATE_LABELS[card.state]),
  );
  if (card.durationMs !== undefined) {
    head.append(element('span', 'tool-duration', formatDuration(card.durationMs)));
  }
  node.append(head);
  if (card.inputSummary !== '') {
    node.append(element('div', 'tool-input', card.inputSummary));
  }
  if (card.approval !== undefined) {
    node.append(renderApproval(card, card.approval));
  }
  const change = shownChange(card);
  if (change !== undefined) {
    node.append(renderChange(change));
  }
  if (card.liveOutput !== undefined && card.liveOutput !== '') {
    node.append(element('pre', 'tool-live', card.liveOutput));
  }
  if (
    card.toolId === 'run_command' &&
    (card.state === 'running' || card.state === 'succeeded' || card.state === 'failed')
  ) {
    node.append(actionButton('Open in terminal', 'openTerminal', { callId: card.callId }, 'secondary'));
  }
  if (card.outputSummary !== undefined && card.outputSummary !== '') {
    const details = element('details', 'tool-output');
    details.dataset.key = 'output';
    details.open = card.state === 'failed';
    details.append(element('summary', undefined, 'Result'), element('pre', undefined, card.outputSummary));
    node.append(details);
  }
  return node;
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

/** Build the element for one item. */
export function renderItem(item: ChatItem, context: ItemContext): HTMLElement {
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
    case 'notice':
      node = element('div', `notice tone-${item.tone}`, item.text);
      break;
    case 'plan':
      node = renderPlan(item);
      break;
  }
  node.dataset.itemId = item.id;
  node.classList.add('item');
  return node;
}
