/**
 * The chat view-model: server state (transcript pages + the event stream) → renderable state.
 *
 * Pure: no `vscode` import, no I/O. The host feeds it what the server said and performs the
 * {@link ModelEffect}s it returns (backlog fetches, restoring a draft). Nothing here is the
 * only copy of anything: after a reload the same state is rebuilt from `getTranscript` +
 * `sessionEvents`.
 */

import type {
  AgentSessionRecord,
  ApprovalDecision,
  PlanEntry,
  RequestApprovalParams,
  SessionEvent,
  SessionMessage,
  SessionStatus,
} from '../protocol';
import type {
  AssistantItem,
  ChangesItem,
  ChatItem,
  ChatViewState,
  ConnectionView,
  FooterView,
  HeaderView,
  NoticeAction,
  ToolItem,
} from '../shared/viewState';
import { toChip, type AttachmentChip, type ContextAttachment } from './contextParts';
import { displayItems } from './display';
import { diffView } from './format';
import { EventSequencer, type SequencerOutput } from './eventSequencer';
import { OrphanEvents } from './orphanEvents';
import { PLAN_ITEM_ID, showPlan } from './plan';
import {
  applyTurnEvent,
  runningTurnEvents,
  stopOpenWork,
  type PendingUser,
  type TurnContext,
} from './turnEvents';
import {
  enrichToolCards,
  itemsFromMessages,
  newToolCard,
  serverStoppedNotice,
  toolItemId,
} from './transcript';
import type { TurnChangedFile } from '../protocol';

/** Work the host must do on the model's behalf. */
export type ModelEffect =
  | { kind: 'fetchBacklog'; sessionId: string; afterSequence: number }
  | { kind: 'restoreDraft'; text: string; attachments: readonly ContextAttachment[] }
  /** Ask `relavium/turnChanges` for the turn of `userSequence` (its review card). */
  | { kind: 'fetchChanges'; sessionId: string; userSequence: number };

/** The review card's id for the turn of a user message. */
export function changesItemId(userSequence: number): string {
  return `changes:${userSequence}`;
}

/** Session states in which a turn runs (here or in another window). */
const RUNNING_STATES: ReadonlySet<string> = new Set(['streaming', 'awaiting_approval', 'awaiting_peer']);

/** Everything needed to show an existing session. */
export interface LoadedSession {
  record: AgentSessionRecord;
  /** The newest transcript page, oldest first. */
  messages: readonly SessionMessage[];
  hasMore: boolean;
  /** The event sequence the transcript and record already reflect. */
  lastEventSequence: number;
  /**
   * Recent events from the durable log: a turn still running is replayed from them, and the
   * tool cards of settled turns get back their approval decision and duration.
   */
  recentEvents?: readonly SessionEvent[];
  /** The whole log's tool events (`sessionEvents {types}`): approvals and durations of cards. */
  toolEvents?: readonly SessionEvent[];
  /** The agent's current plan (`resumeSession`), shown below the transcript. */
  plan?: readonly PlanEntry[];
}

function emptyFooter(): FooterView {
  return { inputTokens: 0, outputTokens: 0, costMicrocents: 0, priced: true };
}

function emptyHeader(): HeaderView {
  return { status: 'none', hasMoreHistory: false, loading: false };
}

export class ChatModel implements TurnContext {
  items: ChatItem[] = [];
  header: HeaderView = emptyHeader();
  footer: FooterView = emptyFooter();
  private connection: ConnectionView = { state: 'starting' };
  private sequencer = new EventSequencer();
  private readonly orphans = new OrphanEvents();
  /** Events past this sequence add their tokens to the footer (earlier ones are in the totals). */
  private totalsThrough = 0;
  private revision = 0;
  private liveCounter = 0;
  readonly pendingUsers: PendingUser[] = [];
  /** How many `send` messages the host took from the webview (it unlocks its composer by them). */
  sendsTaken = 0;
  readonly answerable = new Set<string>();
  turn: TurnContext['turn'] = undefined;
  /** The oldest message sequence shown: where "Load earlier messages" continues from. */
  oldestSequence: number | undefined = undefined;
  compactionNoticeId: string | undefined = undefined;
  /** Context waiting in the composer; survives session switches (it belongs to the draft). */
  private attachments: ContextAttachment[] = [];

  /** The session on screen, if any. */
  get sessionId(): string | undefined {
    return this.header.sessionId;
  }

  /** Whether a turn is running (the composer shows Abort instead of Send). */
  get turnRunning(): boolean {
    return this.header.status === 'streaming' || this.header.status === 'awaiting_approval';
  }

  /** Whether the composer must not send: a message is on its way or its turn runs. */
  get composerLocked(): boolean {
    return this.turnRunning || this.pendingUsers.length > 0;
  }

  /** A fresh revision number; revisions are never reused so the webview never misses a change. */
  nextRev(): number {
    this.revision += 1;
    return this.revision;
  }

  /** A fresh id for an item created from live events. */
  nextLiveId(prefix: string): string {
    this.liveCounter += 1;
    return `${prefix}-${this.liveCounter}`;
  }

  /** The renderable state; `implicit` is the active editor's chip (the host tracks it). */
  view(implicit?: AttachmentChip): ChatViewState {
    return {
      header: { ...this.header },
      footer: { ...this.footer },
      connection: { ...this.connection },
      attachments: this.attachments.map(toChip),
      composer: {
        locked: this.composerLocked,
        sendsTaken: this.sendsTaken,
        ...(implicit === undefined ? {} : { implicit }),
      },
      items: displayItems(this.items),
    };
  }

  /** Look an item up by id. */
  findItem(id: string): ChatItem | undefined {
    return this.items.find((item) => item.id === id);
  }

  /** Record the server connection's state (shown as a banner when not running). */
  setConnection(state: ConnectionView['state'], reason?: string): void {
    const next: ConnectionView = { state };
    if (reason !== undefined) {
      next.reason = reason;
    }
    if (state === 'running' && this.connection.offlineModel === true) {
      next.offlineModel = true; // still the same server: what it has configured stays known
    }
    this.connection = next;
  }

  /** Whether only the offline demo model is configured (known once the server answered). */
  setOfflineModel(offline: boolean): void {
    const next: ConnectionView = { ...this.connection };
    if (offline) {
      next.offlineModel = true;
    } else {
      delete next.offlineModel;
    }
    this.connection = next;
  }

  /** Show an empty chat with no session (the next send starts one). */
  clear(): void {
    this.resetSession(undefined);
  }

  /** Switch to `sessionId` and show a loading state until {@link loadSession}. */
  beginLoading(sessionId: string, title?: string): void {
    this.resetSession(sessionId);
    this.header = { ...this.header, title, loading: true };
  }

  /** A session this client just started: nothing to load, events count from zero. */
  startFresh(sessionId: string, agentRef: string, model?: string): ModelEffect[] {
    const pending = [...this.pendingUsers];
    const draftItems = this.items.filter((item) => pending.some((user) => user.id === item.id));
    this.resetSession(sessionId);
    this.pendingUsers.push(...pending);
    this.items.push(...draftItems);
    this.header = { ...this.header, agentRef, status: 'idle' };
    this.footer = { ...this.footer, model };
    return this.toEffects(sessionId, this.sequencer.start(0));
  }

  /** Show an existing session from its transcript, replaying a turn that is still running. */
  loadSession(loaded: LoadedSession): ModelEffect[] {
    const { record } = loaded;
    if (record.id !== this.sessionId) {
      this.resetSession(record.id);
    }
    const recent = loaded.recentEvents ?? [];
    // A turn whose events never completed runs only if the session says so (another window);
    // otherwise the server stopped during it and the transcript shows how far it got.
    const running = RUNNING_STATES.has(record.status) ? runningTurnEvents(recent) : [];
    const first = running[0];
    const cutoff = first?.type === 'session:turn_started' ? first.userMessageSequence : Infinity;
    const messages = loaded.messages.filter((message) => message.sequenceNumber <= cutoff);
    this.items = itemsFromMessages(messages, () => this.nextRev());
    enrichToolCards(this.items, loaded.toolEvents ?? recent, () => this.nextRev());
    showPlan(this, loaded.plan ?? []);
    this.oldestSequence = messages[0]?.sequenceNumber;
    this.header = {
      sessionId: record.id,
      title: record.title,
      agentRef: record.agentSlug,
      status: record.status === 'ended' ? 'ended' : 'idle',
      hasMoreHistory: loaded.hasMore,
      loading: false,
    };
    this.footer = {
      model: record.modelId,
      inputTokens: record.totals.inputTokens,
      outputTokens: record.totals.outputTokens,
      costMicrocents: record.totals.costMicrocents,
      priced: true,
    };
    this.totalsThrough = loaded.lastEventSequence;
    for (const event of running) {
      applyTurnEvent(this, event);
    }
    const replayedThrough = running.at(-1)?.sequenceNumber ?? 0;
    const effects = this.toEffects(
      record.id,
      this.sequencer.start(Math.max(loaded.lastEventSequence, replayedThrough)),
    );
    for (const event of recent) {
      effects.push(...this.applyEvent(event));
    }
    return effects;
  }

  /** Put an older transcript page above what is shown. */
  prependHistory(messages: readonly SessionMessage[], hasMore: boolean): void {
    const known = new Set(this.items.map((item) => item.id));
    const older = itemsFromMessages(messages, () => this.nextRev()).filter((item) => !known.has(item.id));
    this.items = [...older, ...this.items];
    this.oldestSequence = messages[0]?.sequenceNumber ?? this.oldestSequence;
    this.header = { ...this.header, hasMoreHistory: hasMore };
  }

  /** Show the user's message right away; `session:turn_started` later gives it a sequence. */
  addPendingUser(text: string, attachments: readonly ContextAttachment[] = []): string {
    const id = this.nextLiveId('user');
    const chips = attachments.length > 0 ? { attachments: attachments.map(toChip) } : {};
    this.items.push({ kind: 'user', id, rev: this.nextRev(), text, ...chips });
    this.pendingUsers.push({ id, text, attachments: [...attachments] });
    return id;
  }

  /** The chips of the context waiting in the composer. */
  attachmentChips(): AttachmentChip[] {
    return this.attachments.map(toChip);
  }

  /** Attach context to the next message (a selection replaces an identical earlier one). */
  addAttachment(attachment: ContextAttachment): void {
    const label = toChip(attachment).label;
    this.attachments = this.attachments.filter((existing) => toChip(existing).label !== label);
    this.attachments.push(attachment);
  }

  /** Drop one attachment (its chip's × button). */
  removeAttachment(id: string): void {
    this.attachments = this.attachments.filter((attachment) => attachment.id !== id);
  }

  /** The attachments of the message being sent; the composer starts empty again. */
  takeAttachments(): ContextAttachment[] {
    const taken = this.attachments;
    this.attachments = [];
    return taken;
  }

  /** Put attachments back (their message could not be sent, or its turn was stopped). */
  restoreAttachments(attachments: readonly ContextAttachment[]): void {
    const back = attachments.filter((attachment) => attachment.kind !== 'active');
    const labels = new Set(back.map((attachment) => toChip(attachment).label));
    const others = this.attachments.filter((attachment) => !labels.has(toChip(attachment).label));
    this.attachments = [...back, ...others];
  }

  /**
   * The server says no turn runs (reconciliation after a lost event, a failed request or a
   * stopped server): close what is still streaming so nothing keeps claiming activity.
   */
  settle(status: 'idle' | 'ended'): void {
    stopOpenWork(this);
    this.pendingUsers.length = 0;
    this.setStatus(status);
  }

  /**
   * The server went away while a turn ran (or a message was on its way): the turn is stopped,
   * its calls interrupted, unanswered approvals cancelled, and Retry offers its message again.
   * The restarted server's transcript says the same (its interruption marker), so a reload
   * shows what this shows.
   */
  serverStopped(): void {
    if (!this.composerLocked) {
      return;
    }
    const retryText = this.turn?.userText ?? this.pendingUsers[0]?.text;
    for (const pending of this.pendingUsers) {
      const item = this.findItem(pending.id);
      if (item?.kind === 'user') {
        item.outcome = 'interrupted';
        item.rev = this.nextRev();
      }
    }
    stopOpenWork(this, 'interrupted');
    this.pendingUsers.length = 0;
    this.items.push(serverStoppedNotice(this.nextLiveId('stopped'), this.nextRev(), retryText));
    this.setStatus('idle');
  }

  /**
   * Show (or update, or drop when `files` is empty) the review card of a turn's changed files,
   * after the turn's last item.
   */
  showChanges(userSequence: number, files: readonly TurnChangedFile[]): void {
    const id = changesItemId(userSequence);
    const existing = this.findItem(id);
    if (files.length === 0) {
      if (existing !== undefined) {
        this.removeItems(new Set([id]));
      }
      return;
    }
    if (existing?.kind === 'changes') {
      existing.files = [...files];
      existing.busy = false;
      existing.rev = this.nextRev();
      return;
    }
    const card: ChangesItem = {
      kind: 'changes',
      id,
      rev: this.nextRev(),
      userSequence,
      files: [...files],
      busy: false,
    };
    this.items.splice(this.turnEnd(userSequence), 0, card);
  }

  /** A keep / undo request for a turn's files started or ended. */
  setChangesBusy(userSequence: number, busy: boolean): void {
    const card = this.findItem(changesItemId(userSequence));
    if (card?.kind === 'changes') {
      card.busy = busy;
      card.rev = this.nextRev();
    }
  }

  /** Where the items of the turn of `userSequence` end (the index after its last item). */
  private turnEnd(userSequence: number): number {
    const start = this.items.findIndex((item) => item.kind === 'user' && item.sequence === userSequence);
    const next =
      start < 0 ? -1 : this.items.findIndex((item, index) => index > start && item.kind === 'user');
    if (next >= 0) {
      return next;
    }
    // The newest turn: at the end, above the plan (kept last, beside the latest activity).
    const last = this.items.at(-1);
    return last?.id === PLAN_ITEM_ID ? this.items.length - 1 : this.items.length;
  }

  /**
   * A send request failed. If no turn had started yet the message is dropped from view (the
   * server never stored it); either way an error card offers to send `text` again.
   */
  sendFailed(pendingId: string, code: string, message: string, text: string): void {
    const index = this.pendingUsers.findIndex((user) => user.id === pendingId);
    if (index >= 0) {
      this.pendingUsers.splice(index, 1);
      this.items = this.items.filter((item) => item.id !== pendingId);
    }
    this.pushError(code, message, true, text);
  }

  /** Add an error card (used for turn errors and failed requests). */
  pushError(code: string, message: string, retryable: boolean, retryText?: string): void {
    const id = this.nextLiveId('error');
    this.items.push({ kind: 'error', id, rev: this.nextRev(), code, message, retryable, retryText });
  }

  /** Add a one-line notice (with a button when `action` is given). */
  pushNotice(text: string, tone: 'info' | 'warning' = 'info', id?: string, action?: NoticeAction): void {
    const noticeId = id ?? this.nextLiveId('notice');
    const existing = this.findItem(noticeId);
    if (existing?.kind === 'notice') {
      existing.text = text;
      existing.tone = tone;
      existing.rev = this.nextRev();
      return;
    }
    this.items.push({
      kind: 'notice',
      id: noticeId,
      rev: this.nextRev(),
      text,
      tone,
      ...(action === undefined ? {} : { action }),
    });
  }

  /** Remember the agent / model the next session starts with (they survive a new chat). */
  setNext(next: { agent?: string; model?: string }): void {
    this.header = {
      ...this.header,
      ...(next.agent === undefined ? {} : { nextAgent: next.agent }),
      ...(next.model === undefined ? {} : { nextModel: next.model }),
    };
  }

  /** The session asks `model` first from the next turn on: say so where the switch happened. */
  modelSwitched(model: string): void {
    this.footer = { ...this.footer, model };
    this.pushNotice(`Model switched to ${model}; it answers from the next turn.`);
  }

  /** Change the shown title after a rename. */
  setTitle(title: string): void {
    this.header = { ...this.header, title };
  }

  /** Feed one `relavium/sessionEvent` notification. */
  applyEvent(event: SessionEvent): ModelEffect[] {
    if (event.sessionId !== this.sessionId) {
      this.orphans.keep(event);
      return [];
    }
    return this.toEffects(event.sessionId, this.sequencer.accept(event));
  }

  /** Feed the answer to a `fetchBacklog` effect. */
  applyBacklog(sessionId: string, events: readonly SessionEvent[]): ModelEffect[] {
    if (sessionId !== this.sessionId) {
      return [];
    }
    const own = events.filter((event) => event.sessionId === sessionId);
    return this.toEffects(sessionId, this.sequencer.acceptBacklog(own));
  }

  /** A `fetchBacklog` effect failed: carry on past the hole. */
  backlogFailed(sessionId: string): ModelEffect[] {
    if (sessionId !== this.sessionId) {
      return [];
    }
    this.pushNotice('Some events could not be loaded; the view may be incomplete.', 'warning');
    return this.toEffects(sessionId, this.sequencer.backlogFailed());
  }

  /** The server asked this client to approve a call: enable the card's buttons. */
  openApproval(params: RequestApprovalParams): void {
    this.answerable.add(params.callId);
    const card = this.ensureToolCard(params.callId, params.toolId);
    card.state = 'awaiting_approval';
    const diff = params.diff;
    card.approval = {
      action: params.action,
      preview: params.preview,
      state: 'pending',
      answerable: true,
      ...(diff !== undefined && { diff: diffView(diff) }),
    };
    card.rev = this.nextRev();
    this.header = { ...this.header, status: 'awaiting_approval' };
  }

  /** The user decided (inline or in the modal fallback). */
  approvalDecided(callId: string, decision: ApprovalDecision): void {
    this.answerable.delete(callId);
    const card = this.toolCard(callId);
    if (card?.approval === undefined) {
      return;
    }
    const states = { approve: 'approved', reject: 'rejected', approve_always: 'approved_always' } as const;
    if (card.approval.state === 'cancelled') {
      return; // the turn ended meanwhile (a late answer from the modal dialog)
    }
    card.approval = { ...card.approval, state: states[decision], answerable: false };
    card.state = decision === 'reject' ? 'failed' : 'running';
    card.rev = this.nextRev();
    this.refreshStatusAfterApproval();
  }

  /** The server withdrew its approval request (cancelled): the buttons go inert. */
  approvalWithdrawn(callId: string): void {
    this.answerable.delete(callId);
    const card = this.toolCard(callId);
    if (card?.approval !== undefined) {
      card.approval = { ...card.approval, answerable: false };
      card.rev = this.nextRev();
    }
  }

  /** The newest card of `callId` (some providers reuse call ids from turn to turn). */
  toolCard(callId: string): ToolItem | undefined {
    for (let index = this.items.length - 1; index >= 0; index -= 1) {
      const item = this.items[index];
      if (item?.kind === 'tool' && item.callId === callId) {
        return item;
      }
    }
    return undefined;
  }

  /** Whether the tokens of `event` are new relative to the loaded totals. */
  countsTowardTotals(event: SessionEvent): boolean {
    return event.sequenceNumber > this.totalsThrough;
  }

  /** The tool card for `callId`, created (empty) if the call has not been seen yet. */
  ensureToolCard(callId: string, toolId: string): ToolItem {
    const existing = this.toolCard(callId);
    // A card is open until its result: a rejection marks it before the result arrives (and a
    // code block's Apply runs outside any turn), so its result must land on the same card.
    const open =
      existing?.state === 'running' ||
      existing?.state === 'awaiting_approval' ||
      (existing?.approval !== undefined && existing.outputSummary === undefined);
    if (existing !== undefined && (open || this.turn?.itemIds.has(existing.id) === true)) {
      return existing;
    }
    // A call id seen in an earlier turn (reused by the provider): a new card of its own.
    const occurrence = this.items.filter((item) => item.kind === 'tool' && item.callId === callId).length;
    const card = newToolCard(toolItemId(callId, occurrence), this.nextRev(), callId, toolId);
    this.items.push(card);
    this.turn?.itemIds.add(card.id);
    return card;
  }

  /** The assistant item streaming text goes into, created when needed. */
  currentAssistant(model: string): AssistantItem {
    const turn = this.turn;
    const existing = turn?.assistantId === undefined ? undefined : this.findItem(turn.assistantId);
    if (existing?.kind === 'assistant' && this.items.at(-1) === existing) {
      return existing;
    }
    const item: AssistantItem = {
      kind: 'assistant',
      id: this.nextLiveId('assistant'),
      rev: this.nextRev(),
      text: '',
      reasoning: '',
      streaming: true,
      model,
    };
    this.items.push(item);
    if (turn !== undefined) {
      turn.assistantId = item.id;
      turn.itemIds.add(item.id);
    }
    return item;
  }

  /** Set the header status. */
  setStatus(status: SessionStatus): void {
    this.header = { ...this.header, status };
  }

  /** Remove items by id. */
  removeItems(ids: ReadonlySet<string>): void {
    this.items = this.items.filter((item) => !ids.has(item.id));
  }

  private refreshStatusAfterApproval(): void {
    const waiting = this.items.some((item) => item.kind === 'tool' && item.approval?.state === 'pending');
    if (this.header.status === 'awaiting_approval' && !waiting) {
      // Outside a turn (a code block's Apply) the session goes back to idle, not "answering".
      this.setStatus(this.turn === undefined ? 'idle' : 'streaming');
    }
  }

  private toEffects(sessionId: string, output: SequencerOutput): ModelEffect[] {
    const effects: ModelEffect[] = [];
    for (const event of output.ready) {
      effects.push(...applyTurnEvent(this, event));
    }
    if (output.fetchAfter !== undefined) {
      effects.push({ kind: 'fetchBacklog', sessionId, afterSequence: output.fetchAfter });
    }
    return effects;
  }

  private resetSession(sessionId: string | undefined): void {
    this.items = [];
    const { nextAgent, nextModel } = this.header;
    this.header = { ...emptyHeader(), sessionId };
    if (sessionId === undefined) {
      this.setNext({ agent: nextAgent, model: nextModel });
    }
    this.footer = emptyFooter();
    this.sequencer = new EventSequencer();
    this.totalsThrough = 0;
    this.oldestSequence = undefined;
    this.turn = undefined;
    this.compactionNoticeId = undefined;
    this.pendingUsers.length = 0;
    this.answerable.clear();
    if (sessionId !== undefined) {
      for (const event of this.orphans.take(sessionId)) {
        this.sequencer.accept(event);
      }
    }
  }
}
