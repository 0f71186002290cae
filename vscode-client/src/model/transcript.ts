/**
 * Durable messages (`getTranscript` / `resumeSession`) → chat items.
 *
 * The transcript is the source of truth after a reload: the view rebuilds from it, then
 * applies the event stream on top. Item ids derive from message sequence numbers (and tool
 * call ids) so the same message always maps to the same item.
 */

import type { DurableContentPart, SessionEvent, SessionMessage } from '../protocol';
import type { AssistantItem, ChatItem, ToolItem, UserItem } from '../shared/viewState';
import { chipFromText, type AttachmentChip } from './contextParts';
import { OUTPUT_SUMMARY_CHARS, summarizeToolInput, truncate } from './format';

/** Supplies a fresh, never reused item revision. */
export type RevisionSource = () => number;

/** The stable item id of a tool call's card. */
export function toolItemId(callId: string): string {
  return `tool:${callId}`;
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

function systemNotice(message: SessionMessage, rev: RevisionSource): ChatItem | undefined {
  const id = `m${message.sequenceNumber}`;
  if (message.compaction !== undefined) {
    const text =
      message.compaction.mode === 'summarize'
        ? 'Earlier messages were summarised for the model (nothing was deleted).'
        : 'Earlier messages were trimmed from the model’s view (nothing was deleted).';
    return { kind: 'notice', id, rev: rev(), text, tone: 'info' };
  }
  if (message.interruption !== undefined) {
    const text = 'A turn was interrupted before it finished (the server stopped).';
    return { kind: 'notice', id, rev: rev(), text, tone: 'warning' };
  }
  return undefined;
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
  const cards = new Map<string, ToolItem>();
  for (const item of items) {
    if (item.kind === 'tool') {
      cards.set(item.callId, item);
    }
  }
  for (const event of events) {
    if (event.type !== 'agent:approval_requested' && event.type !== 'agent:tool_result') {
      continue;
    }
    const card = cards.get(event.callId);
    if (card === undefined) {
      continue;
    }
    if (event.type === 'agent:approval_requested') {
      card.approval = { action: event.action, preview: event.preview, state: 'pending', answerable: false };
    } else {
      card.durationMs = event.durationMs;
      if (card.approval?.state === 'pending') {
        const state = event.errorCode === 'tool_denied' ? 'rejected' : 'approved';
        card.approval = { ...card.approval, state };
      }
    }
    card.rev = rev();
  }
}

/** Convert messages (oldest first) into items in display order. */
export function itemsFromMessages(messages: readonly SessionMessage[], rev: RevisionSource): ChatItem[] {
  const items: ChatItem[] = [];
  const tools = new Map<string, ToolItem>();
  for (const message of messages) {
    const sequence = message.sequenceNumber;
    if (message.role === 'system') {
      const notice = systemNotice(message, rev);
      if (notice !== undefined) {
        items.push(notice);
      }
      continue;
    }
    if (message.role === 'user') {
      items.push(userItem(message, rev()));
      continue;
    }
    let assistant: AssistantItem | undefined;
    let part = 0;
    for (const content of message.content) {
      if (content.type === 'tool_call') {
        assistant = undefined;
        const card: ToolItem = {
          kind: 'tool',
          id: toolItemId(content.id),
          rev: rev(),
          callId: content.id,
          toolId: content.name,
          inputSummary: summarizeToolInput(content.args),
          state: 'interrupted',
        };
        tools.set(content.id, card);
        items.push(card);
      } else if (content.type === 'tool_result') {
        const card = tools.get(content.toolCallId);
        if (card !== undefined) {
          card.state = content.isError ? 'failed' : 'succeeded';
          card.outputSummary = truncate(content.result, OUTPUT_SUMMARY_CHARS);
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
