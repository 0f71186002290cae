/**
 * Tool calls in the chat: one line each ("Read greeting.py", "Edited greeting.py +2 −1"),
 * details (the arguments, the result) on expand, and — for a change that waits for the user —
 * the diff and the Approve / Reject / Always buttons, always in view. Finished read-only calls
 * arrive grouped (`toolGroup`) as one expandable line.
 */

import { shownChange } from '../model/format';
import { doneTitle, groupTitle } from '../model/toolTitles';
import type { ApprovalPreview } from '../protocol';
import type { ApprovalDiffView, ApprovalView, ToolGroupItem, ToolItem, ToolState } from '../shared/viewState';
import { actionButton, element } from './dom';
import { icon, type IconName } from './icons';

/** Durations under this are noise to a reader (the call was instant): not shown. */
const SHOWN_DURATION_MS = 1000;

const STATE_NOTES: Partial<Record<ToolState, string>> = {
  running: 'running…',
  awaiting_approval: 'waiting for you',
  failed: 'failed',
  interrupted: 'stopped',
};

const APPROVAL_STATE_LABELS: Record<Exclude<ApprovalView['state'], 'pending'>, string> = {
  approved: 'Approved',
  approved_always: 'Approved for this session',
  rejected: 'You rejected this change',
  cancelled: 'Cancelled — nobody answered before the turn stopped',
};

const TOOL_ICONS: Readonly<Record<string, IconName>> = {
  read_file: 'file',
  list_directory: 'file',
  search_files: 'search',
  find_files: 'search',
  write_file: 'pencil',
  edit_file: 'pencil',
  run_command: 'terminal',
  terminal_start: 'terminal',
  terminal_output: 'terminal',
  http_request: 'globe',
};

function stateIcon(card: ToolItem): IconName {
  if (card.approval?.state === 'rejected') {
    return 'cross';
  }
  if (card.state === 'succeeded') {
    return card.readOnly ? 'check' : (TOOL_ICONS[card.toolId] ?? 'check');
  }
  if (card.state === 'failed') {
    return 'warning';
  }
  if (card.state === 'interrupted') {
    return 'stop';
  }
  return TOOL_ICONS[card.toolId] ?? 'tool';
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** `+2 −1` of a change, when the call carries one. */
function changeStat(card: ToolItem): string | undefined {
  const diff = card.approval?.diff ?? card.diff;
  return diff === undefined ? undefined : `+${diff.added} −${diff.removed}`;
}

/** The rejected change is the user's own decision: one neutral line, nothing red. */
function rejected(card: ToolItem): boolean {
  return card.approval?.state === 'rejected';
}

function toolLine(card: ToolItem): HTMLElement {
  const line = element('summary', 'tool-line');
  line.append(icon(stateIcon(card), 'icon tool-icon'));
  const title = card.state === 'succeeded' ? doneTitle(card.title) : card.title;
  const titleNode = element('span', 'tool-title', title);
  titleNode.title = title;
  line.append(titleNode);
  if (card.resultNote !== undefined) {
    line.append(element('span', 'tool-note', `— ${card.resultNote}`));
  }
  const stat = changeStat(card);
  if (stat !== undefined) {
    line.append(element('span', 'tool-stat', stat));
  }
  const note = rejected(card) ? undefined : STATE_NOTES[card.state];
  if (note !== undefined) {
    line.append(element('span', 'tool-state', note));
  }
  if (card.durationMs !== undefined && card.durationMs >= SHOWN_DURATION_MS) {
    line.append(element('span', 'tool-duration', formatSeconds(card.durationMs)));
  }
  return line;
}

function previewLine(action: ApprovalView['action'], preview: ApprovalPreview): string {
  switch (action) {
    case 'fs_write':
      return `Write ${preview.path ?? '(unknown path)'}`;
    case 'process':
      return `Run ${preview.command ?? '(unknown command)'}`;
    case 'egress':
      return `Connect to ${preview.host ?? '(unknown host)'}`;
  }
}

/** The unified diff, one element per line so added and removed lines can be marked. */
export function renderDiff(diff: ApprovalDiffView): HTMLElement {
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
    if (kind === 'diff-file') {
      continue; // the card already names the file
    }
    // One block per line: the line break is the element's (a "\n" would add a blank line).
    block.append(element('span', `diff-line ${kind}`, line === '' ? ' ' : line));
  }
  return block;
}

function approvalButton(
  label: string,
  callId: string,
  decision: string,
  style: string,
  tip: string,
): HTMLElement {
  const button = actionButton(label, 'approval', { callId, decision }, style);
  button.title = tip;
  return button;
}

function renderApproval(card: ToolItem, approval: ApprovalView): HTMLElement {
  const pending = approval.state === 'pending';
  const node = element('div', `approval approval-${approval.state}`);
  // After a reload the approval has only its stat; the diff comes with the call's result.
  const diff = approval.diff ?? card.diff;
  if (approval.action !== 'fs_write') {
    // A command line or a host is what the user decides on: say it in full.
    node.append(element('div', 'approval-what', previewLine(approval.action, approval.preview)));
  }
  if (diff !== undefined) {
    // Open while the decision waits; folded once it is made (a new key: the fold is not kept).
    const box = element('details', 'approval-diff-box');
    box.dataset.key = pending ? 'diff-pending' : 'diff-decided';
    box.open = pending;
    const summary = element('summary', 'approval-diff-head');
    const what = pending ? 'Proposed change' : 'The change';
    summary.append(element('span', 'approval-what', `${what} to ${approval.preview.path ?? 'the file'}`));
    if (pending && approval.answerable && !diff.truncated) {
      const open = actionButton(
        'Open diff',
        'openDiff',
        { callId: card.callId },
        'link-button approval-open',
      );
      open.title = 'Review the change in the editor’s diff view (Accept / Reject are in its title bar)';
      summary.append(open);
    }
    box.append(summary, renderDiff(diff));
    node.append(box);
  }
  if (pending && approval.answerable) {
    const buttons = element('div', 'approval-buttons');
    buttons.append(
      approvalButton('Approve', card.callId, 'approve', 'primary', 'Make this change'),
      approvalButton(
        'Reject',
        card.callId,
        'reject',
        'secondary',
        'Do not make it; the agent is told you declined',
      ),
      approvalButton(
        'Always',
        card.callId,
        'approve_always',
        'secondary',
        'Approve this and every later change like it in this chat (Always for this session)',
      ),
    );
    node.append(buttons);
  } else {
    const label =
      approval.state === 'pending'
        ? 'Waiting for a decision in another window'
        : APPROVAL_STATE_LABELS[approval.state];
    node.append(element('div', 'approval-state', label));
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

function toolBody(card: ToolItem): HTMLElement {
  const body = element('div', 'tool-body');
  const input = element('div', 'tool-input');
  input.append(element('code', 'tool-id', card.toolId));
  if (card.inputSummary !== '') {
    input.append(document.createTextNode(` ${card.inputSummary}`));
  }
  body.append(input);
  if (card.durationMs !== undefined) {
    body.append(
      element(
        'div',
        'tool-timing',
        `took ${card.durationMs < 1000 ? `${card.durationMs} ms` : formatSeconds(card.durationMs)}`,
      ),
    );
  }
  if (card.outputSummary !== undefined && card.outputSummary !== '' && !rejected(card)) {
    body.append(element('pre', 'tool-output', card.outputSummary));
  }
  return body;
}

/** One call's card. */
export function renderTool(card: ToolItem): HTMLElement {
  const classes = ['tool-card', `state-${card.state}`];
  if (card.readOnly) {
    classes.push('tool-readonly');
  }
  if (rejected(card)) {
    classes.push('tool-rejected');
  }
  const node = element('div', classes.join(' '));
  const details = element('details', 'tool-details');
  // A failure says why without a click; everything else is one line until expanded. (The key
  // changes when the call fails, so a fold kept from while it ran does not hide why.)
  const failed = card.state === 'failed' && !rejected(card);
  details.dataset.key = failed ? 'details-failed' : 'details';
  details.open = failed;
  details.append(toolLine(card), toolBody(card));
  node.append(details);
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
    node.append(
      actionButton('Open in terminal', 'openTerminal', { callId: card.callId }, 'link-button tool-terminal'),
    );
  }
  return node;
}

/** Finished read-only calls, as one line that expands to each call's line. */
export function renderToolGroup(group: ToolGroupItem): HTMLElement {
  const node = element('details', 'tool-group');
  node.dataset.key = 'group';
  const line = element('summary', 'tool-line');
  line.append(
    icon('check', 'icon tool-icon'),
    element('span', 'tool-title', groupTitle(group.tools.map((tool) => tool.toolId))),
  );
  node.append(line);
  const list = element('div', 'tool-group-calls');
  for (const tool of group.tools) {
    const member = renderTool(tool);
    member.dataset.callId = tool.callId;
    list.append(member);
  }
  node.append(list);
  return node;
}
