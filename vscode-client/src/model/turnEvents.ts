/**
 * How each event type changes the chat state (one in-order event at a time).
 *
 * Ordering and gaps are the sequencer's job; by the time an event gets here it is the next
 * one. Streamed tokens coalesce into the current assistant item; a tool call closes that item
 * so text after the tool lands below its card, as the user saw it happen.
 */

import type { SessionEvent, TurnCompletedPayload } from '../protocol';
import type { AssistantItem, ChatItem, FooterView, HeaderView, ToolItem } from '../shared/viewState';
import type { ModelEffect } from './chatModel';
import type { ContextAttachment } from './contextParts';
import { diffView, summarizeToolInput } from './format';
import { showPlan } from './plan';
import { isReadOnlyTool, toolTitle } from './toolTitles';
import { approvalOutcome, settleToolCard } from './transcript';

/** A message sent from this window whose turn has not started yet. */
export interface PendingUser {
  id: string;
  text: string;
  /** The context it carries (an abort puts it back in the composer with the text). */
  attachments: ContextAttachment[];
}

/** The running turn: which items it produced and whose text it answers. */
export interface TurnState {
  itemIds: Set<string>;
  assistantId?: string;
  userItemId?: string;
  userText?: string;
  /** The user message's sequence (`session:turn_started`): the turn's checkpoints hang on it. */
  userSequence?: number;
  /** The user message was typed in this client (so an abort can put it back in the input). */
  sentHere: boolean;
  attachments: ContextAttachment[];
}

/** The parts of the view-model an event may touch. */
export interface TurnContext {
  items: ChatItem[];
  header: HeaderView;
  footer: FooterView;
  turn: TurnState | undefined;
  /** The notice a `session:compacting` opened, updated by the terminal compaction event. */
  compactionNoticeId: string | undefined;
  readonly pendingUsers: PendingUser[];
  readonly answerable: Set<string>;
  nextRev(): number;
  nextLiveId(prefix: string): string;
  findItem(id: string): ChatItem | undefined;
  ensureToolCard(callId: string, toolId: string): ToolItem;
  toolCard(callId: string): ToolItem | undefined;
  currentAssistant(model: string): AssistantItem;
  setStatus(status: HeaderView['status']): void;
  removeItems(ids: ReadonlySet<string>): void;
  pushError(code: string, message: string, retryable: boolean, retryText?: string): void;
  pushNotice(text: string, tone?: 'info' | 'warning', id?: string): void;
  countsTowardTotals(event: SessionEvent): boolean;
}

function startTurn(ctx: TurnContext, userMessageSequence: number): void {
  const turn: TurnState = {
    itemIds: new Set(),
    sentHere: false,
    attachments: [],
    userSequence: userMessageSequence,
  };
  const pending = ctx.pendingUsers.shift();
  const user =
    pending === undefined
      ? ctx.items.find((item) => item.kind === 'user' && item.sequence === userMessageSequence)
      : ctx.findItem(pending.id);
  if (user?.kind === 'user') {
    user.sequence = userMessageSequence;
    user.rev = ctx.nextRev();
    turn.userItemId = user.id;
    turn.userText = user.text;
    turn.sentHere = pending !== undefined;
    turn.attachments = pending?.attachments ?? [];
  }
  ctx.turn = turn;
  ctx.setStatus('streaming');
}

/** Calls the user started (a code block's Apply) run outside any turn. */
export function isUserCall(callId: string): boolean {
  return callId.startsWith('apply_');
}

/** The status once a call ends: a turn carries on streaming; a user call leaves it idle. */
function statusAfterCall(ctx: TurnContext): HeaderView['status'] {
  return ctx.turn === undefined ? 'idle' : 'streaming';
}

function ensureTurn(ctx: TurnContext): TurnState {
  ctx.turn ??= { itemIds: new Set(), sentHere: false, attachments: [] };
  return ctx.turn;
}

function closeAssistantItems(ctx: TurnContext, turn: TurnState): void {
  for (const id of turn.itemIds) {
    const item = ctx.findItem(id);
    if (item?.kind === 'assistant' && item.streaming) {
      item.streaming = false;
      item.rev = ctx.nextRev();
    }
  }
  turn.assistantId = undefined;
}

const STOP_NOTICES: Partial<Record<TurnCompletedPayload['stopReason'], string>> = {
  length: 'The answer was cut off: the model reached its output limit.',
  content_filter: 'The provider’s content filter stopped the answer.',
};

/**
 * A turn stops without finishing (an abort, a server that went away, or a settled state the
 * events did not show): nothing keeps claiming activity. Open calls are marked interrupted,
 * approvals nobody gave are "cancelled" — never "approved" — and with `outcome` the turn's
 * user message says how its turn ended. The items stay: what happened stays visible.
 */
export function stopOpenWork(ctx: TurnContext, outcome?: 'cancelled' | 'interrupted'): void {
  for (const item of ctx.items) {
    if (item.kind === 'assistant' && item.streaming) {
      item.streaming = false;
      item.rev = ctx.nextRev();
    } else if (item.kind === 'tool' && (item.state === 'running' || item.state === 'awaiting_approval')) {
      item.state = 'interrupted';
      delete item.liveOutput;
      if (item.approval !== undefined) {
        const state = item.approval.state === 'pending' ? 'cancelled' : item.approval.state;
        item.approval = { ...item.approval, state, answerable: false };
      }
      item.rev = ctx.nextRev();
    }
  }
  const user = ctx.turn?.userItemId === undefined ? undefined : ctx.findItem(ctx.turn.userItemId);
  if (outcome !== undefined && user?.kind === 'user') {
    user.outcome = outcome;
    user.rev = ctx.nextRev();
  }
  ctx.answerable.clear();
  ctx.turn = undefined;
}

/** The turn's user message, with its chips, goes back to the composer (it was typed here). */
function restoreDraft(turn: TurnState): ModelEffect[] {
  if (!turn.sentHere || turn.userText === undefined) {
    return [];
  }
  return [{ kind: 'restoreDraft', text: turn.userText, attachments: turn.attachments }];
}

function completeTurn(ctx: TurnContext, event: TurnCompletedPayload): ModelEffect[] {
  const turn = ensureTurn(ctx);
  if (turn.userItemId === undefined) {
    // Refused before its turn began (the turn limit, a busy session): the message waiting
    // here was never stored. It ends with this event, so the composer is free again.
    const refused = ctx.pendingUsers.shift();
    if (refused !== undefined) {
      Object.assign(turn, {
        userItemId: refused.id,
        userText: refused.text,
        sentHere: true,
        attachments: refused.attachments,
      });
    }
  }
  const effects: ModelEffect[] = [];
  closeAssistantItems(ctx, turn);
  if (event.stopReason === 'aborted') {
    // This view keeps the message, marked, with what the turn did (its calls' side effects
    // happened). The server rolls the turn out of the transcript — then the composer gets the
    // message back with its chips — unless it had changed files (`kept`): then it stays stored.
    stopOpenWork(ctx, 'cancelled');
    if (event.kept === true) {
      // Stored with its changes: the message stays in the history (Edit / Retry reach it).
      ctx.pushNotice(
        'Stopped after it changed files: the turn and its changes are kept (review or undo them).',
      );
    } else {
      ctx.pushNotice('Stopped. Your message is back in the composer.');
      effects.push(...restoreDraft(turn));
    }
  } else if (event.error !== undefined) {
    ctx.pushError(event.error.code, event.error.message, event.error.retryable, turn.userText);
  } else {
    const notice = STOP_NOTICES[event.stopReason];
    if (notice !== undefined) {
      ctx.pushNotice(notice, 'warning');
    }
  }
  stopOpenWork(ctx);
  ctx.setStatus('idle');
  if (turn.userSequence !== undefined && ctx.header.sessionId !== undefined) {
    // Whatever the outcome, files the turn changed are offered for review.
    effects.push({ kind: 'fetchChanges', sessionId: ctx.header.sessionId, userSequence: turn.userSequence });
  }
  return effects;
}

function compactionText(event: SessionEvent): string | undefined {
  if (event.type === 'session:compacting') {
    return 'Compacting older messages…';
  }
  if (event.type === 'session:compacted' && event.reason === 'context_window') {
    return (
      `Compacted within the turn to fit the model's window: ${event.clearedToolResults ?? 0} ` +
      `tool outputs cleared (kept as artifacts), ${event.summarizedMessages ?? 0} messages ` +
      `summarised, ${event.tokensBefore} → ${event.tokensAfter} tokens (nothing deleted).`
    );
  }
  if (event.type === 'session:compacted' || event.type === 'session:trimmed') {
    const verb = event.type === 'session:compacted' ? 'summarised' : 'trimmed';
    return (
      `Older history ${verb} for the model: ${event.messagesBefore} → ${event.messagesAfter} ` +
      `messages, ${event.tokensBefore} → ${event.tokensAfter} tokens (nothing deleted).`
    );
  }
  return undefined;
}

/** How much of a running command's output a tool card shows (its last characters). */
export const LIVE_OUTPUT_CHARS = 4000;
/** The one notice a replay session's outcome takes (its event, or its audit row). */
export const REPLAY_REPORT_NOTICE = 'notice-replay-report';

function liveTail(text: string): string {
  return text.length <= LIVE_OUTPUT_CHARS ? text : '…' + text.slice(text.length - LIVE_OUTPUT_CHARS);
}

/** Apply one in-order event; returns the effects the host must perform. */
export function applyTurnEvent(ctx: TurnContext, event: SessionEvent): ModelEffect[] {
  switch (event.type) {
    case 'session:started':
      ctx.footer = { ...ctx.footer, model: event.model ?? ctx.footer.model };
      ctx.header = { ...ctx.header, agentRef: event.agentRef };
      if (ctx.header.status === 'none' || ctx.header.status === 'ended') {
        ctx.setStatus('idle');
      }
      return [];
    case 'session:turn_started':
      startTurn(ctx, event.userMessageSequence);
      return [];
    case 'agent:token': {
      ensureTurn(ctx);
      const item = ctx.currentAssistant(event.model);
      item.text += event.token;
      item.model = event.model;
      item.rev = ctx.nextRev();
      ctx.footer = { ...ctx.footer, model: event.model };
      return [];
    }
    case 'agent:reasoning': {
      ensureTurn(ctx);
      const item = ctx.currentAssistant(event.model);
      item.reasoning += event.text;
      item.rev = ctx.nextRev();
      return [];
    }
    case 'agent:tool_call': {
      const turn = isUserCall(event.callId) ? ctx.turn : ensureTurn(ctx);
      if (turn !== undefined) {
        closeAssistantItems(ctx, turn);
      }
      const card = ctx.ensureToolCard(event.callId, event.toolId);
      card.toolId = event.toolId;
      card.title = toolTitle(event.toolId, event.toolInput);
      card.readOnly = isReadOnlyTool(event.toolId);
      card.inputSummary = summarizeToolInput(event.toolInput);
      card.rev = ctx.nextRev();
      turn?.itemIds.add(card.id);
      return [];
    }
    case 'agent:approval_requested': {
      if (!isUserCall(event.callId)) {
        ensureTurn(ctx);
      }
      const card = ctx.ensureToolCard(event.callId, event.toolId);
      if (card.approval === undefined || card.approval.state === 'pending') {
        card.state = 'awaiting_approval';
        card.approval = {
          action: event.action,
          preview: event.preview,
          state: 'pending',
          answerable: ctx.answerable.has(event.callId),
          // The diff came with this client's request (the durable event has only its stat).
          ...(card.approval?.diff !== undefined && { diff: card.approval.diff }),
        };
        ctx.setStatus('awaiting_approval');
      }
      card.rev = ctx.nextRev();
      return [];
    }
    case 'agent:tool_output': {
      const card = ctx.ensureToolCard(event.callId, event.toolId);
      card.liveOutput = liveTail((card.liveOutput ?? '') + event.text);
      card.liveOutputChars = (card.liveOutputChars ?? 0) + event.text.length;
      card.rev = ctx.nextRev();
      return [];
    }
    case 'agent:tool_result': {
      const card = ctx.ensureToolCard(event.callId, event.toolId);
      delete card.liveOutput;
      settleToolCard(card, event.success, event.outputSummary);
      card.durationMs = event.durationMs;
      if (event.diff !== undefined) {
        card.diff = diffView(event.diff);
      }
      if (card.approval?.state === 'pending') {
        const state = approvalOutcome(event.success, event.errorCode);
        card.approval = { ...card.approval, state, answerable: false };
      }
      ctx.answerable.delete(event.callId);
      card.rev = ctx.nextRev();
      if (ctx.header.status === 'awaiting_approval' || (isUserCall(event.callId) && ctx.turn === undefined)) {
        ctx.setStatus(statusAfterCall(ctx));
      }
      return [];
    }
    case 'agent:plan_updated':
      showPlan(ctx, event.entries, event.explanation);
      return [];
    case 'cost:updated': {
      const counts = ctx.countsTowardTotals(event);
      const cacheRead = (ctx.footer.cacheReadTokens ?? 0) + (counts ? event.cacheReadTokens : 0);
      const cacheWrite = (ctx.footer.cacheWriteTokens ?? 0) + (counts ? event.cacheWriteTokens : 0);
      ctx.footer = {
        model: event.model,
        inputTokens: ctx.footer.inputTokens + (counts ? event.inputTokens : 0),
        outputTokens: ctx.footer.outputTokens + (counts ? event.outputTokens : 0),
        costMicrocents: Math.max(ctx.footer.costMicrocents, event.cumulativeCostMicrocents),
        priced: ctx.footer.priced && event.priced,
        ...(cacheRead > 0 ? { cacheReadTokens: cacheRead } : {}),
        ...(cacheWrite > 0 ? { cacheWriteTokens: cacheWrite } : {}),
      };
      return [];
    }
    case 'session:turn_completed':
      return completeTurn(ctx, event);
    case 'session:compacting':
      ctx.compactionNoticeId = ctx.nextLiveId('compaction');
      ctx.pushNotice(compactionText(event) ?? '', 'info', ctx.compactionNoticeId);
      return [];
    case 'session:compacted':
    case 'session:trimmed':
      ctx.pushNotice(compactionText(event) ?? '', 'info', ctx.compactionNoticeId);
      ctx.compactionNoticeId = undefined;
      return [];
    case 'session:budget_warning':
      ctx.pushNotice(
        event.onExceed === 'warn'
          ? 'This session reached its cost limit (continuing: the policy is “warn”).'
          : 'This session reached its cost limit; the next provider call needs your approval.',
        'warning',
      );
      return [];
    case 'session:exported':
      ctx.pushNotice(`Exported (${event.format}) → ${event.workflowPath}`);
      return [];
    case 'session:rewound': {
      if (event.forkedSessionId === undefined && !event.undone) {
        // Files-only: a turn's review undid files (its own card says so).
        return [];
      }
      const conflicts = event.conflicts > 0 ? `, ${event.conflicts} left alone (changed since)` : '';
      ctx.pushNotice(
        event.undone
          ? `Rewind undone: ${event.restored} file(s) put back${conflicts}.`
          : `Files rewound to before message ${event.toSequence}: ${event.restored} restored${conflicts}.` +
              (event.forkedSessionId !== undefined ? ' The conversation continues in a fork.' : ''),
      );
      return [];
    }
    case 'agent:handoff':
      ctx.pushNotice(
        event.returned
          ? `${event.toAgent} finished the delegated task (${event.stopReason ?? 'ended'}).`
          : `${event.fromAgent} handed a task to ${event.toAgent}.`,
      );
      return [];
    case 'session:checkpoint':
      ctx.pushNotice(`Checkpoint (${event.reason}): ${event.description}`);
      return [];
    case 'session:checkpoint_failed':
      ctx.pushNotice(`Automatic checkpoint (${event.reason}) failed: ${event.message}`);
      return [];
    case 'session:changes_reviewed':
      // Decided here or in another window: the turn's review card asks for the new state.
      return ctx.header.sessionId === undefined
        ? []
        : [{ kind: 'fetchChanges', sessionId: ctx.header.sessionId, userSequence: event.userSequence }];
    case 'session:message_appended':
      // A note added without a turn (relavium/appendMessage): it shows when the transcript
      // is next loaded.
      return [];
    case 'session:replay_completed': {
      const report = event.report;
      const verdict = report.matches
        ? 'identical to the original'
        : `${report.differences.length} difference(s)`;
      ctx.pushNotice(
        `Replay (${report.mode}) finished: ${report.turnsReplayed} turn(s), ${verdict}; tool calls: ` +
          `${report.recordedToolCalls} from the recording, ${report.liveToolCalls} run again.` +
          (report.stopped ? ' It stopped before its last turn.' : ''),
        report.matches && !report.stopped ? 'info' : 'warning',
        REPLAY_REPORT_NOTICE,
      );
      return [];
    }
    case 'session:cancelled':
      if (ctx.turn !== undefined) {
        closeAssistantItems(ctx, ctx.turn);
        ctx.turn = undefined;
      }
      ctx.pushNotice('This session has ended. Resume it to continue.');
      ctx.setStatus('ended');
      return [];
  }
}

/** The events of the last turn that started and has not completed (empty when none runs). */
export function runningTurnEvents(events: readonly SessionEvent[]): SessionEvent[] {
  let start = -1;
  events.forEach((event, index) => {
    if (event.type === 'session:turn_started') {
      start = index;
    } else if (event.type === 'session:turn_completed' || event.type === 'session:cancelled') {
      start = -1;
    }
  });
  return start < 0 ? [] : events.slice(start);
}
