/**
 * The host side of the chat: owns the view-model, talks to the server, and pushes patches to
 * the webview.
 *
 * The only thing persisted here is the id of the session on screen (workspaceState); every
 * reload or server restart rebuilds the view from `resumeSession` + `getTranscript` +
 * `sessionEvents`.
 */

import * as vscode from 'vscode';
import { BroadDirNotAllowed, BroadWorkingDirConsent } from '../model/broadWorkingDir';
import { ChatModel, type ModelEffect } from '../model/chatModel';
import { toTextPart, type ContextAttachment } from '../model/contextParts';
import { describeRewind } from '../model/format';
import { truncate } from '../model/format';
import { ViewSync } from '../model/viewSync';
import {
  Methods,
  type AbortTurnResult,
  type GetTranscriptResult,
  type ListModelsResult,
  type ListSessionsResult,
  type ResumeSessionResult,
  type RewindResult,
  type SendMessageAccepted,
  type SendMessageParams,
  type SessionEvent,
  type SessionEventsResult,
  type SessionsChangedParams,
  type StartSessionResult,
} from '../protocol';
import type { RelaviumServer } from '../server/relaviumServer';
import { ServerRequestError } from '../server/relaviumServer';
import type { HostToWebview } from '../shared/webviewMessages';
import { broadDirPrompt } from './broadDirPrompt';
import { ImplicitContext } from './implicitContext';
import { OutputTerminals } from './outputTerminals';
import { switchModel } from './pickers';
import { TurnReview } from './turnReview';

/** The provider id of the bundled offline demo model (relavium_lsp/contracts/agent.py). */
const OFFLINE_PROVIDER = 'offline';

/** The chat webview as the controller sees it. */
export interface ChatView {
  readonly visible: boolean;
  post(message: HostToWebview): void;
  /**
   * The chat's title and state in the view's title bar (a single view shares its container's
   * title: "RELAVIUM: <chat title>"; the state is the view's description where shown).
   */
  describe(title: string, state: string): void;
}

const STATUS_WORDS: Partial<Record<string, string>> = {
  streaming: 'answering…',
  awaiting_approval: 'waiting for your approval',
  awaiting_peer: 'waiting for a sub-agent',
  ended: 'ended',
};

const CURRENT_SESSION_KEY = 'relavium.currentSessionId';
const TOOL_EVENTS_LIMIT = 10_000;
const FLUSH_DELAY_MS = 30;
const TRANSCRIPT_PAGE = 100;
/**
 * How far back to look, when a session opens, for the start of a turn still running and for
 * the tool events of the turns shown.
 */
const RUNNING_TURN_LOOKBACK = 2000;

/** A user-presentable description of a failed request. */
export function describeError(error: unknown): { code: string; message: string } {
  if (error instanceof ServerRequestError || error instanceof BroadDirNotAllowed) {
    return { code: error.code, message: error.message };
  }
  return { code: 'internal', message: error instanceof Error ? error.message : String(error) };
}

export class ChatController implements vscode.Disposable {
  readonly model = new ChatModel();
  private readonly sync = new ViewSync();
  /** Terminals that show a command card's output ("Open in terminal"). */
  readonly outputTerminals = new OutputTerminals((callId) => this.model.toolCard(callId));
  /** The active editor's file / selection, offered with the next message. */
  readonly implicit = new ImplicitContext(() => {
    this.changed();
  });
  /** The review of the files a turn changed. */
  readonly review = new TurnReview(this);
  private view: ChatView | undefined;
  private viewReady = false;
  /** Asks before a session opens at `/` or home; a yes is kept in the workspace state. */
  private readonly broadDirs: BroadWorkingDirConsent;
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private pendingDraft: string | undefined;
  /** The history overlay was asked for before the view's page was ready. */
  private pendingHistory = false;
  private loadToken = 0;
  private turnRunningContext = false;

  constructor(
    readonly server: RelaviumServer,
    private readonly workspaceState: vscode.Memento,
  ) {
    this.model.setConnection(server.state.state, server.state.reason);
    this.broadDirs = new BroadWorkingDirConsent(workspaceState, broadDirPrompt);
  }

  // ---- view plumbing ---------------------------------------------------------------------

  /** A (new) webview exists; it announces itself with `ready`. */
  attachView(view: ChatView): void {
    this.view = view;
    this.viewReady = false;
  }

  /** The webview was disposed. */
  detachView(view: ChatView): void {
    if (this.view === view) {
      this.view = undefined;
      this.viewReady = false;
    }
  }

  /** The view was hidden: its page is torn down and announces itself again when shown. */
  onViewHidden(): void {
    this.viewReady = false;
  }

  /** The webview's script is running: send everything. */
  onViewReady(): void {
    this.viewReady = true;
    this.sync.reset();
    this.flush();
    if (this.pendingDraft !== undefined) {
      this.post({ type: 'setDraft', text: this.pendingDraft });
      this.pendingDraft = undefined;
    }
    if (this.pendingHistory) {
      this.post({ type: 'showHistory' });
      this.pendingHistory = false;
    }
  }

  /** Open the chat history overlay (now, or as soon as the view is ready). */
  showHistory(): void {
    if (this.viewReady) {
      this.post({ type: 'showHistory' });
    } else {
      this.pendingHistory = true;
    }
  }

  /** Whether the chat view is visible and shows `sessionId`. */
  showsSession(sessionId: string): boolean {
    return this.view?.visible === true && this.viewReady && this.model.sessionId === sessionId;
  }

  /** Send a message to the webview if it is listening. */
  post(message: HostToWebview): void {
    if (this.viewReady) {
      this.view?.post(message);
    }
  }

  /** Put text in the composer (now, or as soon as the view is ready). */
  setDraft(text: string): void {
    if (this.viewReady) {
      this.post({ type: 'setDraft', text });
    } else {
      this.pendingDraft = text;
    }
  }

  /** The model changed: send a patch soon (token bursts coalesce into one patch). */
  changed(): void {
    this.outputTerminals.refresh();
    this.flushTimer ??= setTimeout(() => {
      this.flush();
    }, FLUSH_DELAY_MS);
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const running = this.model.turnRunning;
    if (running !== this.turnRunningContext) {
      this.turnRunningContext = running;
      void vscode.commands.executeCommand('setContext', 'relavium.turnRunning', running);
    }
    if (this.viewReady) {
      const implicit = this.implicit.chip(this.model.attachmentChips());
      this.post({ type: 'patch', patch: this.sync.diff(this.model.view(implicit)) });
      this.view?.describe(...this.description());
    }
  }

  /** The view's title (the chat's) and description (what the session does now). */
  private description(): [string, string] {
    const { header } = this.model;
    if (header.loading) {
      return ['Loading…', ''];
    }
    const title = header.title ?? (header.sessionId === undefined ? 'New chat' : 'Untitled chat');
    return [title, STATUS_WORDS[header.status] ?? ''];
  }

  /** The webview posted a message to send: counted at once, so its composer can unlock. */
  tookSend(): void {
    this.model.sendsTaken += 1;
    this.changed();
  }

  // ---- server plumbing -------------------------------------------------------------------

  /** A `relavium/sessionEvent` notification. */
  onSessionEvent(event: SessionEvent): void {
    this.run(this.model.applyEvent(event));
    this.changed();
  }

  /**
   * `relavium/sessionsChanged`: refresh the sessions panel (it re-lists only while open), and
   * say so when the chat shown here was deleted in another window.
   */
  onSessionsChanged(params: SessionsChangedParams): void {
    this.post({ type: 'sessionsChanged' });
    const shown = this.model.sessionId;
    if (params.changes.some((change) => change.sessionId === shown && change.kind === 'deleted')) {
      this.model.pushNotice('This chat was deleted in another window.', 'warning', 'deleted-elsewhere');
      this.changed();
    }
  }

  /** The connection state changed. */
  onConnectionChanged(): void {
    this.model.setConnection(this.server.state.state, this.server.state.reason);
    if (this.server.state.state !== 'running') {
      // A turn cannot outlive the server: it stopped, whether a restart is on its way or not
      // (the restarted server marks it interrupted too, and the reload shows that).
      this.model.serverStopped();
    }
    this.changed();
  }

  /**
   * Make the view agree with the server about whether a turn runs. Called when an event may
   * have been lost (a backlog fetch failed) or a request failed mid-turn: the session record
   * is the settled truth, and any events not seen yet are fetched before settling.
   */
  async reconcile(): Promise<void> {
    const sessionId = this.model.sessionId;
    if (sessionId === undefined || !this.model.turnRunning) {
      return;
    }
    try {
      const resumed = await this.server.request<ResumeSessionResult>(Methods.resumeSession, { sessionId });
      const status = resumed.session.status;
      const running = status === 'streaming' || status === 'awaiting_approval' || status === 'awaiting_peer';
      if (this.model.sessionId !== sessionId || running) {
        return;
      }
      // A failed turn has settled too: the session takes messages again.
      this.model.settle(status === 'ended' ? 'ended' : 'idle');
      if (resumed.session.modelId !== undefined) {
        this.model.footer = { ...this.model.footer, model: resumed.session.modelId };
      }
    } catch {
      if (this.model.sessionId === sessionId) {
        this.model.settle('idle');
      }
    }
    this.changed();
  }

  /** Attach context (a selection, a file) to the next message. */
  attach(attachment: ContextAttachment): void {
    this.model.addAttachment(attachment);
    this.changed();
  }

  /** Drop an attachment from the composer. */
  detach(id: string): void {
    this.model.removeAttachment(id);
    this.changed();
  }

  /** The server (re)started: show the remembered session again, rebuilt from the server. */
  async onServerReady(): Promise<void> {
    this.onConnectionChanged();
    void this.onModelSetUp(false);
    const remembered = this.workspaceState.get<string>(CURRENT_SESSION_KEY);
    if (remembered !== undefined) {
      await this.openSession(remembered);
    } else if (this.model.sessionId !== undefined) {
      await this.openSession(this.model.sessionId);
    }
  }

  /**
   * Learn whether only the offline demo model is configured (the empty chat then offers
   * "Set Up a Model"); after a setup, `refresh` asks the providers again.
   */
  async onModelSetUp(refresh = true): Promise<void> {
    try {
      const result = await this.server.request<ListModelsResult>(Methods.listModels, { refresh });
      const real = result.models.some((model) => model.configured && model.providerId !== OFFLINE_PROVIDER);
      this.model.setOfflineModel(!real);
    } catch {
      this.model.setOfflineModel(false); // unknown: say nothing
    }
    this.changed();
  }

  /** Perform the model's effects (backlog fetches, draft restores, review cards). */
  run(effects: readonly ModelEffect[]): void {
    for (const effect of effects) {
      switch (effect.kind) {
        case 'restoreDraft':
          this.setDraft(effect.text);
          this.model.restoreAttachments(effect.attachments);
          break;
        case 'fetchBacklog':
          void this.fetchBacklog(effect.sessionId, effect.afterSequence);
          break;
        case 'fetchChanges':
          void this.review.fetch(effect.sessionId, effect.userSequence);
          break;
      }
    }
  }

  private async fetchBacklog(sessionId: string, afterSequence: number): Promise<void> {
    try {
      const result = await this.server.request<SessionEventsResult>(Methods.sessionEvents, {
        sessionId,
        afterSequence,
      });
      this.run(this.model.applyBacklog(sessionId, result.events));
    } catch {
      this.run(this.model.backlogFailed(sessionId));
      // A turn_completed may have been in the hole: ask the server whether a turn still runs.
      void this.reconcile();
    }
    this.changed();
  }

  // ---- chat operations -------------------------------------------------------------------

  /** Show an empty chat; the next message starts a new session. */
  async newChat(): Promise<void> {
    this.loadToken += 1;
    this.model.clear();
    await this.workspaceState.update(CURRENT_SESSION_KEY, undefined);
    this.changed();
  }

  /** Send a message, starting a session first when none is open. */
  async send(text: string): Promise<void> {
    if (text.trim() === '') {
      return;
    }
    const attachments = this.model.takeAttachments();
    const implicit = this.implicit.take(attachments);
    if (implicit !== undefined) {
      attachments.unshift(implicit);
    }
    const pendingId = this.model.addPendingUser(text, attachments);
    this.changed();
    try {
      let sessionId = this.model.sessionId;
      if (sessionId === undefined || this.model.header.status === 'ended') {
        sessionId = await this.startSession(text);
      }
      // Answered once the turn has begun; the turn itself arrives as events (no request stays
      // open for the length of a turn).
      const params: SendMessageParams = { sessionId, text, wait: false };
      if (attachments.length > 0) {
        params.attachments = attachments.map(toTextPart);
      }
      await this.server.request<SendMessageAccepted>(Methods.sendMessage, params);
    } catch (error) {
      const { code, message } = describeError(error);
      this.model.sendFailed(pendingId, code, message, text);
      this.model.restoreAttachments(attachments.filter((attachment) => attachment !== implicit));
      void this.reconcile();
    }
    this.changed();
  }

  private async startSession(firstMessage: string): Promise<string> {
    const { nextAgent, nextModel } = this.model.header;
    const agent = nextAgent ?? vscode.workspace.getConfiguration('relavium').get<string>('agent', '').trim();
    const title = truncate(firstMessage.split('\n', 1)[0]?.trim() ?? '', 80);
    const result = await this.broadDirs.start((allowBroadWorkingDir) =>
      this.server.request<StartSessionResult>(Methods.startSession, {
        source: 'vscode',
        title: title === '' ? undefined : title,
        agentRef: agent === '' ? undefined : agent,
        ...(allowBroadWorkingDir ? { allowBroadWorkingDir } : {}),
      }),
    );
    this.loadToken += 1;
    this.run(this.model.startFresh(result.sessionId, result.agentRef, result.model));
    if (title !== '') {
      this.model.setTitle(title);
    }
    await this.workspaceState.update(CURRENT_SESSION_KEY, result.sessionId);
    if (nextModel !== undefined && nextModel.split('/').slice(1).join('/') !== result.model) {
      await switchModel(this, result.sessionId, nextModel);
    }
    return result.sessionId;
  }

  /** Switch the open session's model from the next turn on. */
  async switchModel(model: string): Promise<void> {
    const sessionId = this.model.sessionId;
    if (sessionId !== undefined) {
      await switchModel(this, sessionId, model);
    }
  }

  /** Stop the running turn. */
  async abort(): Promise<void> {
    const sessionId = this.model.sessionId;
    if (sessionId === undefined || !this.model.turnRunning) {
      return;
    }
    try {
      const result = await this.server.request<AbortTurnResult>(Methods.abortTurn, { sessionId });
      if (!result.aborted) {
        // Nothing was running on the server: the turn ended and its last events are late or lost.
        await this.reconcile();
      }
    } catch (error) {
      const { code, message } = describeError(error);
      this.model.pushError(code, `Could not abort: ${message}`, false);
      this.changed();
    }
  }

  /** Show a stored session: resume it, load its newest transcript page and the event backlog. */
  async openSession(sessionId: string): Promise<void> {
    const token = ++this.loadToken;
    this.model.beginLoading(sessionId);
    this.changed();
    await this.workspaceState.update(CURRENT_SESSION_KEY, sessionId);
    try {
      const resumed = await this.server.request<ResumeSessionResult>(Methods.resumeSession, { sessionId });
      const page = await this.server.request<GetTranscriptResult>(Methods.getTranscript, {
        sessionId,
        limit: TRANSCRIPT_PAGE,
      });
      // Recent events replay a running turn and restore the tool cards' approvals and durations.
      const afterSequence = Math.max(0, resumed.lastEventSequence - RUNNING_TURN_LOOKBACK);
      const backlog = await this.server.request<SessionEventsResult>(Methods.sessionEvents, {
        sessionId,
        afterSequence,
        limit: RUNNING_TURN_LOOKBACK + 500,
      });
      const recentEvents: SessionEvent[] = backlog.events;
      const toolEvents = await this.toolEvents(sessionId);
      if (token !== this.loadToken) {
        return;
      }
      this.run(
        this.model.loadSession({
          record: resumed.session,
          messages: page.messages,
          hasMore: page.hasMore,
          lastEventSequence: resumed.lastEventSequence,
          recentEvents,
          ...(toolEvents === undefined ? {} : { toolEvents }),
          ...(resumed.plan === undefined ? {} : { plan: resumed.plan }),
        }),
      );
      // The newest turn that changed files gets its review card back.
      void this.review.fetch(sessionId);
    } catch (error) {
      if (token !== this.loadToken) {
        return;
      }
      const { code, message } = describeError(error);
      if (code === 'session_not_found') {
        await this.workspaceState.update(CURRENT_SESSION_KEY, undefined);
        this.model.clear();
        this.model.pushNotice('The previous chat no longer exists; this is a new one.', 'warning');
      } else {
        this.model.header = { ...this.model.header, loading: false };
        this.model.pushError(code, `Could not open the session: ${message}`, false);
      }
    }
    this.changed();
  }

  /** The tool events of the whole log (undefined when the server cannot filter events). */
  private async toolEvents(sessionId: string): Promise<SessionEvent[] | undefined> {
    try {
      const result = await this.server.request<SessionEventsResult>(Methods.sessionEvents, {
        sessionId,
        afterSequence: 0,
        limit: TOOL_EVENTS_LIMIT,
        types: ['agent:approval_requested', 'agent:tool_result'],
      });
      return result.events;
    } catch {
      return undefined;
    }
  }

  /** Load the transcript page before the oldest message shown. */
  async loadEarlier(): Promise<void> {
    const sessionId = this.model.sessionId;
    const before = this.model.oldestSequence;
    if (sessionId === undefined || before === undefined) {
      return;
    }
    try {
      const page = await this.server.request<GetTranscriptResult>(Methods.getTranscript, {
        sessionId,
        beforeSequence: before,
        limit: TRANSCRIPT_PAGE,
      });
      if (this.model.sessionId === sessionId) {
        this.model.prependHistory(page.messages, page.hasMore);
      }
    } catch (error) {
      const { code, message } = describeError(error);
      this.model.pushError(code, `Could not load earlier messages: ${message}`, false);
    }
    this.changed();
  }

  /** Answer a session search from the picker. */
  async listSessions(query: string): Promise<void> {
    try {
      const result = await this.server.request<ListSessionsResult>(Methods.listSessions, {
        query: query === '' ? undefined : query,
        workspace: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
        limit: 50,
      });
      this.post({ type: 'sessions', query, sessions: result.sessions });
    } catch (error) {
      this.post({ type: 'sessions', query, sessions: [], error: describeError(error).message });
    }
  }

  /** Forget the current session id if `sessionId` is it (after a delete). */
  async forget(sessionId: string): Promise<void> {
    if (this.model.sessionId === sessionId) {
      await this.newChat();
    }
  }

  /** The button of a notice: Retry a stopped turn's message, or undo a "Restore to here". */
  async noticeAction(itemId: string): Promise<void> {
    const item = this.model.findItem(itemId);
    if (item?.kind !== 'notice' || item.action === undefined) {
      return;
    }
    const action = item.action;
    if (action.kind === 'retry') {
      await this.send(action.text);
      return;
    }
    try {
      const result = await this.server.request<RewindResult>(Methods.undoRewind, {
        sessionId: action.sessionId,
        rewindId: action.rewindId,
      });
      await this.openSession(action.sessionId);
      this.model.pushNotice(`Restore undone: ${describeRewind(result)}.`);
    } catch (error) {
      const { code, message } = describeError(error);
      this.model.pushError(code, `Could not undo the restore: ${message}`, false);
    }
    this.changed();
  }

  dispose(): void {
    clearTimeout(this.flushTimer);
    this.outputTerminals.dispose();
    this.implicit.dispose();
    this.review.dispose();
  }
}
