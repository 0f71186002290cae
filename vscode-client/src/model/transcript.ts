/**
 * Durable messages (`getTranscript` / `resumeSession`) → chat items.
 *
 * The transcript is the source of truth after a reload: the view rebuilds from it, then
 * applies the event stream on top. Item ids derive from message sequence numbers (and tool
 * call ids) so the same message always maps to the same item.
 */

import type {
  CompactionMarker,
  DurableContentPart,
  InterruptionMarker,
  SessionEvent,
  SessionMessage,
} from '../protocol';
import type { AssistantItem, ChatItem, NoticeItem, ToolItem, UserItem } from '../shared/viewState';
import { chipFromText, type AttachmentChip } from './contextParts';
import { diffView, OUTPUT_SUMMARY_CHARS, summarizeToolInput, truncate } from './format';
import { peerOrigin } from './peerMessage';
import { isReadOnlyTool, resultNote, toolTitle } from './toolTitles';

/** Supplies a fresh, never reused item revision. */
export type RevisionSource = () => number;

/** The stable item id of a tool call's card. */
export function toolItemId(callId: string, occurrence = 0): string {
  // Later calls reusing an id (local models often number calls per turn) get their own card.
  return occurrence === 0 ? `tool:${callId}` : `tool:${callId}#${occurrence}`;
}

function partText(part: DurableContentPart): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'media':
      return `[${part.name ?? part.mimeType}]`;
    default:
      return '';
  }
}

const COMPACTION_NOTICES: Record<CompactionMarker['mode'], string> = {
  summarize: 'Earlier messages were summarised for the model (nothing was deleted).',
  trim: 'Earlier messages were trimmed from the model’s view (nothing was deleted).',
  clear: 'Older tool outputs were cleared from the model’s view (kept as artifacts; nothing was deleted).',
};

/** What the chat says where a turn stopped because the server went away (live or reloaded). */
const SERVER_STOPPED_TEXT = 'The server restarted — this turn was stopped.';

/**
 * Turns the engine kept although they did not finish, because they had changed files
 * (issue 38): the notice, and how the turn's message is marked.
 */
const KEPT_TURNS: Record<Exclude<InterruptionMarker['reason'], 'crash'>, [string, UserItem['outcome']]> = {
  error: ['This turn failed after it changed files; its changes are kept (review or undo them).', undefined],
  aborted: [
    'This turn was stopped after it changed files; its changes are kept (review or undo them).',
    'cancelled',
  ],
};

/** The notice of a turn the server's exit stopped, with Retry when its message is known. */
export function serverStoppedNotice(id: string, rev: number, retryText: string | undefined): NoticeItem {
  const notice: NoticeItem = { kind: 'notice', id, rev, text: SERVER_STOPPED_TEXT, tone: 'warning' };
  if (retryText !== undefined && retryText.trim() !== '') {
    notice.action = { kind: 'retry', label: 'Retry', text: retryText };
  }
  return notice;
}

function systemNotice(
  message: SessionMessage,
  rev: RevisionSource,
  lastUser: UserItem | undefined,
): ChatItem | undefined {
  const id = `m${message.sequenceNumber}`;
  if (message.compaction !== undefined) {
    const text = COMPACTION_NOTICES[message.compaction.mode];
    return { kind: 'notice', id, rev: rev(), text, tone: 'info' };
  }
  if (message.interruption !== undefined) {
    const reason = message.interruption.reason;
    if (reason !== 'crash') {
      const [text, outcome] = KEPT_TURNS[reason];
      if (lastUser !== undefined && outcome !== undefined) {
        lastUser.outcome = outcome;
      }
      return { kind: 'notice', id, rev: rev(), text, tone: 'warning' };
    }
    if (lastUser !== undefined) {
      lastUser.outcome = 'interrupted';
    }
    return serverStoppedNotice(id, rev(), lastUser?.text);
  }
  return undefined;
}

/** A tool card for a call (its title and grouping come from the tool and its arguments). */
export function newToolCard(
  id: string,
  rev: number,
  callId: string,
  toolId: string,
  input: Readonly<Record<string, unknown>> = {},
): ToolItem {
  return {
    kind: 'tool',
    id,
    rev,
    callId,
    toolId,
    title: toolTitle(toolId, input),
    readOnly: isReadOnlyTool(toolId),
    inputSummary: summarizeToolInput(input),
    state: 'running',
  };
}

/** Record a call's result on its card (live or from the transcript). */
export function settleToolCard(card: ToolItem, success: boolean, output: string): void {
  card.state = success ? 'succeeded' : 'failed';
  card.outputSummary = truncate(output, OUTPUT_SUMMARY_CHARS);
  const note = resultNote(card.toolId, success, output);
  if (note === undefined) {
    delete card.resultNote;
  } else {
    card.resultNote = note;
  }
}

function userItem(message: SessionMessage, rev: number): UserItem {
  const id = `m${message.sequenceNumber}`;
  const texts: string[] = [];
  const attachments: AttachmentChip[] = [];
  message.content.forEach((part, index) => {
    // The typed text is the first part; later text parts with the attachment header are context.
    const chip = index > 0 && part.type === 'text' ? chipFromText(part.text, `${id}-a${index}`) : undefined;
    if (chip !== undefined) {
      attachments.push(chip);
    } else {
      texts.push(partText(part));
    }
  });
  const item: UserItem = {
    kind: 'user',
    id,
    rev,
    text: texts.filter(Boolean).join('\n'),
    sequence: message.sequenceNumber,
  };
  if (attachments.length > 0) {
    item.attachments = attachments;
  }
  const peer = peerOrigin(item.text, message.agentSlug);
  if (peer !== undefined) {
    item.peer = peer.origin;
    item.text = peer.text;
  }
  return item;
}

/**
 * Give tool cards rebuilt from the transcript what only the event log knows: the approval the
 * user was asked for and answered, and how long the call took (a reload keeps both).
 */
export function enrichToolCards(
  items: readonly ChatItem[],
  events: readonly SessionEvent[],
  rev: RevisionSource,
): void {
  const cards = new Map<string, ToolItem[]>();
  for (const item of items) {
    if (item.kind === 'tool') {
      cards.set(item.callId, [...(cards.get(item.callId) ?? []), item]);
    }
  }
  // Each call of an id: its events up to (and with) its result. A provider may reuse ids, so
  // the cards of an id are matched to its last calls, in order (the page may start late).
  type ToolEvent = Extract<SessionEvent, { type: 'agent:approval_requested' | 'agent:tool_result' }>;
  const calls = new Map<string, ToolEvent[][]>();
  for (const event of events) {
    if (event.type !== 'agent:approval_requested' && event.type !== 'agent:tool_result') {
      continue;
    }
    const list = calls.get(event.callId) ?? [[]];
    calls.set(event.callId, list);
    list.at(-1)?.push(event);
    if (event.type === 'agent:tool_result') {
      list.push([]);
    }
  }
  for (const [callId, list] of calls) {
    const complete = list.filter((call) => call.length > 0);
    const own = cards.get(callId) ?? [];
    own.forEach((card, index) => {
      const call = complete[complete.length - own.length + index];
      for (const event of call ?? []) {
        if (event.type === 'agent:approval_requested') {
          card.approval = {
            action: event.action,
            preview: event.preview,
            state: 'pending',
            answerable: false,
          };
        } else {
          card.durationMs = event.durationMs;
          if (event.diff !== undefined) {
            card.diff = diffView(event.diff);
          }
          if (card.approval?.state === 'pending') {
            card.approval = { ...card.approval, state: approvalOutcome(event.success, event.errorCode) };
          }
        }
        card.rev = rev();
      }
      if (card.approval?.state === 'pending') {
        // Asked, never answered, no result: the turn ended while it waited.
        card.approval = { ...card.approval, state: 'cancelled' };
        card.rev = rev();
      }
    });
  }
}

/** What a call's result says about an approval nobody in this window answered. */
export function approvalOutcome(
  success: boolean,
  errorCode: string | undefined,
): 'approved' | 'rejected' | 'cancelled' {
  if (errorCode === 'tool_denied') {
    return 'rejected';
  }
  return !success && errorCode === 'cancelled' ? 'cancelled' : 'approved';
}

/** Convert messages (oldest first) into items in display order. */
export function itemsFromMessages(messages: readonly SessionMessage[], rev: RevisionSource): ChatItem[] {
  const items: ChatItem[] = [];
  const tools = new Map<string, ToolItem>();
  const occurrences = new Map<string, number>();
  let lastUser: UserItem | undefined;
  for (const message of messages) {
    const sequence = message.sequenceNumber;
    if (message.role === 'system') {
      const notice = systemNotice(message, rev, lastUser);
      if (notice !== undefined) {
        items.push(notice);
      }
      continue;
    }
    if (message.role === 'user') {
      lastUser = userItem(message, rev());
      items.push(lastUser);
      continue;
    }
    let assistant: AssistantItem | undefined;
    let part = 0;
    for (const content of message.content) {
      if (content.type === 'tool_call') {
        assistant = undefined;
        const occurrence = occurrences.get(content.id) ?? 0;
        occurrences.set(content.id, occurrence + 1);
        const card = newToolCard(
          toolItemId(content.id, occurrence),
          rev(),
          content.id,
          content.name,
          content.args,
        );
        card.state = 'interrupted';
        tools.set(content.id, card);
        items.push(card);
      } else if (content.type === 'tool_result') {
        const card = tools.get(content.toolCallId);
        if (card !== undefined) {
          settleToolCard(card, !content.isError, content.result);
          card.rev = rev();
        }
      } else if (message.role === 'assistant') {
        if (assistant === undefined) {
          assistant = {
            kind: 'assistant',
            id: `m${sequence}-${part++}`,
            rev: rev(),
            text: '',
            reasoning: '',
            streaming: false,
            model: message.modelId,
            sequence,
          };
          items.push(assistant);
        }
        if (content.type === 'reasoning') {
          assistant.reasoning += content.redacted ? '[redacted reasoning]' : content.text;
        } else {
          assistant.text += partText(content);
        }
      }
    }
  }
  return items;
}
