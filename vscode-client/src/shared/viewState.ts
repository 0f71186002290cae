/**
 * What the chat webview renders: the view-model's output, shared by the host and the webview.
 *
 * Every item carries a `rev` that the view-model bumps on each change, so the host can send
 * only the items whose revision moved (see `model/viewSync.ts`).
 */

import type { AttachmentChip } from '../model/contextParts';
import type { PeerOrigin } from '../model/peerMessage';
import type { ApprovalAction, ApprovalPreview, PlanEntry, SessionStatus, TurnChangedFile } from '../protocol';

export interface UserItem {
  kind: 'user';
  id: string;
  rev: number;
  text: string;
  /** The durable message sequence, once known: enables "fork from here". */
  sequence?: number;
  /** Context sent with the message (selection, files), shown as chips. */
  attachments?: AttachmentChip[];
  /** Set when another session's agent sent it (a peer message): shown "from session X". */
  peer?: PeerOrigin;
  /**
   * `cancelled`: the user stopped its turn (the server rolled it back; the text went back to
   * the composer). `interrupted`: the server stopped during its turn.
   */
  outcome?: 'cancelled' | 'interrupted';
}

export interface AssistantItem {
  kind: 'assistant';
  id: string;
  rev: number;
  text: string;
  reasoning: string;
  streaming: boolean;
  model?: string;
  sequence?: number;
}

export type ToolState = 'running' | 'awaiting_approval' | 'succeeded' | 'failed' | 'interrupted';
/** `cancelled`: nobody answered — the turn was stopped or the server went away meanwhile. */
export type ApprovalState = 'pending' | 'approved' | 'approved_always' | 'rejected' | 'cancelled';

/** The diff of a proposed file change, as the approval card shows it. */
export interface ApprovalDiffView {
  unified: string;
  added: number;
  removed: number;
  truncated: boolean;
}

export interface ApprovalView {
  action: ApprovalAction;
  preview: ApprovalPreview;
  state: ApprovalState;
  /** True while this client holds the server's open approval request (buttons enabled). */
  answerable: boolean;
  /** A file change's diff (kept after the answer, so the card still shows what changed). */
  diff?: ApprovalDiffView;
}

export interface ToolItem {
  kind: 'tool';
  id: string;
  rev: number;
  callId: string;
  toolId: string;
  /** What the call does, as a person says it: "Read greeting.py", "Ran pytest -q". */
  title: string;
  /** Only reads (files, searches, the editor's state): such cards are grouped when done. */
  readOnly: boolean;
  /** The call's arguments in one line (shown when the card is expanded). */
  inputSummary: string;
  /** What the result comes to, when it can be told in a few words ("3 files", "no matches"). */
  resultNote?: string;
  state: ToolState;
  outputSummary?: string;
  durationMs?: number;
  approval?: ApprovalView;
  /** The tail of a running command's terminal output (`agent:tool_output`), until its result. */
  liveOutput?: string;
  /** How many characters of live output arrived in all (the tail above may have dropped some). */
  liveOutputChars?: number;
  /**
   * The change a file tool made (`agent:tool_result`'s `diff`): shown when no approval card
   * shows it ("always allow", auto-approved edits), so every change stays visible.
   */
  diff?: ApprovalDiffView;
}

export interface ErrorItem {
  kind: 'error';
  id: string;
  rev: number;
  code: string;
  message: string;
  retryable: boolean;
  /** The user text to send again on "Retry" (absent when the turn's text is unknown). */
  retryText?: string;
}

/** A button on a notice: Retry a stopped turn's message, or undo a "Restore to here". */
export type NoticeAction =
  | { kind: 'retry'; label: string; text: string }
  | { kind: 'undoRewind'; label: string; sessionId: string; rewindId: string };

export interface NoticeItem {
  kind: 'notice';
  id: string;
  rev: number;
  text: string;
  tone: 'info' | 'warning';
  action?: NoticeAction;
}

/** Consecutive read-only calls that finished, shown as one line that expands to the calls. */
export interface ToolGroupItem {
  kind: 'toolGroup';
  id: string;
  rev: number;
  tools: ToolItem[];
}

/** The files a turn changed, to review against the turn's checkpoint and keep or undo. */
export interface ChangesItem {
  kind: 'changes';
  id: string;
  rev: number;
  /** The user message that started the turn. */
  userSequence: number;
  files: TurnChangedFile[];
  /** A keep / undo request is on its way: the buttons wait. */
  busy: boolean;
}

/** The agent's plan (`update_plan`): at most one, kept below the latest activity. */
export interface PlanItem {
  kind: 'plan';
  id: string;
  rev: number;
  entries: PlanEntry[];
  explanation?: string;
}

export type ChatItem = UserItem | AssistantItem | ToolItem | ErrorItem | NoticeItem | PlanItem | ChangesItem;

/** What the webview lays out: chat items, with finished read-only calls grouped. */
export type DisplayItem = ChatItem | ToolGroupItem;

export interface HeaderView {
  sessionId?: string;
  title?: string;
  agentRef?: string;
  status: SessionStatus | 'none';
  /** The agent the next new session starts with (picked before the first message). */
  nextAgent?: string;
  /** The model the next session asks first (picked before the first message). */
  nextModel?: string;
  /** Older transcript pages exist on the server ("Load earlier messages"). */
  hasMoreHistory: boolean;
  loading: boolean;
}

export interface FooterView {
  model?: string;
  inputTokens: number;
  outputTokens: number;
  costMicrocents: number;
  /** False once any call was made with a model missing from the price table. */
  priced: boolean;
  /** Prompt-cache reads / writes within inputTokens (present once there were any). */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

export interface ConnectionView {
  state: 'starting' | 'running' | 'stopped';
  reason?: string;
  /** The running server has no model but the offline demo one (the empty chat says so). */
  offlineModel?: boolean;
}

/** What the composer needs besides the draft it owns. */
export interface ComposerView {
  /** A message is on its way or its turn runs: Enter does not send (the draft stays). */
  locked: boolean;
  /** How many `send` messages the host has taken from this page (see `Composer`). */
  sendsTaken: number;
  /** The active editor's file or selection, which travels with the next message unless removed. */
  implicit?: AttachmentChip;
}

/** The whole renderable state. */
export interface ChatViewState {
  header: HeaderView;
  footer: FooterView;
  connection: ConnectionView;
  /** Context waiting in the composer for the next message. */
  attachments: readonly AttachmentChip[];
  composer: ComposerView;
  items: readonly DisplayItem[];
}

/** An incremental update of the webview: changed items plus the new order when it moved. */
export interface ViewPatch {
  /** The webview must drop everything it has before applying this patch. */
  full: boolean;
  header: HeaderView;
  footer: FooterView;
  connection: ConnectionView;
  attachments: AttachmentChip[];
  composer: ComposerView;
  upserts: DisplayItem[];
  /** Item ids in display order; absent when unchanged since the last patch. */
  order?: string[];
}
