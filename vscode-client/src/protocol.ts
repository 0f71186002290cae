/**
 * The relavium-lsp wire protocol as TypeScript types.
 *
 * Mirrors `relavium_lsp/contracts/wire.py` (params/results of the custom methods) and
 * `relavium_lsp/contracts/events.py` (the event envelope). The server dumps with
 * `exclude_none`, so every Python `X | None` field is an optional property here.
 * This module is pure: no `vscode` import, usable from the host, the webview and tests.
 */

export const Methods = {
  startSession: 'relavium/startSession',
  sendMessage: 'relavium/sendMessage',
  abortTurn: 'relavium/abortTurn',
  cancelSession: 'relavium/cancelSession',
  resumeSession: 'relavium/resumeSession',
  listSessions: 'relavium/listSessions',
  getTranscript: 'relavium/getTranscript',
  sessionEvents: 'relavium/sessionEvents',
  renameSession: 'relavium/renameSession',
  deleteSession: 'relavium/deleteSession',
  compactSession: 'relavium/compactSession',
  exportSession: 'relavium/exportSession',
  forkSession: 'relavium/forkSession',
  listAgents: 'relavium/listAgents',
  editorState: 'relavium/editorState',
  sessionEvent: 'relavium/sessionEvent',
  requestApproval: 'relavium/requestApproval',
  openUntitled: 'relavium/openUntitled',
} as const;

export type ErrorCode =
  | 'provider_rate_limit'
  | 'provider_unavailable'
  | 'provider_auth'
  | 'validation'
  | 'content_filter'
  | 'tool_denied'
  | 'tool_failed'
  | 'tool_unavailable'
  | 'turn_limit'
  | 'budget_exceeded'
  | 'cancelled'
  | 'internal';
export type StopReason = 'stop' | 'length' | 'tool_use' | 'content_filter' | 'error' | 'aborted';
export type ApprovalAction = 'fs_write' | 'process' | 'egress';
export type ApprovalDecision = 'approve' | 'reject' | 'approve_always';
export type ApprovalMode = 'ask' | 'auto_edits' | 'never_ask';
export type CompactionReason = 'threshold' | 'max_messages' | 'manual';
export type SessionStatus = 'idle' | 'streaming' | 'awaiting_approval' | 'ended';
export type FsScopeTier = 'sandboxed' | 'project' | 'full';
export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

// ---- session contracts -------------------------------------------------------------------

export interface Selection {
  file: string;
  startLine: number;
  endLine: number;
}

export interface SessionContext {
  workingDir: string;
  activeFile?: string;
  selection?: Selection;
  gitRef?: string;
  fsScopeTier: FsScopeTier;
  variables?: Record<string, string>;
}

export type PartialSessionContext = Partial<SessionContext>;

export interface TextPart {
  type: 'text';
  text: string;
}
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  redacted?: boolean;
}
export interface ToolCallPart {
  type: 'tool_call';
  id: string;
  name: string;
  args: Record<string, unknown>;
}
export interface ToolResultPart {
  type: 'tool_result';
  toolCallId: string;
  result: string;
  isError?: boolean;
}
export interface MediaPart {
  type: 'media';
  mimeType: string;
  source: { kind: 'handle'; handle: string };
  name?: string;
}
export type DurableContentPart = TextPart | ReasoningPart | ToolCallPart | ToolResultPart | MediaPart;

export interface SessionMessage {
  id: string;
  sessionId: string;
  sequenceNumber: number;
  role: MessageRole;
  content: DurableContentPart[];
  modelId?: string;
  compaction?: { droppedThroughSequence: number; mode: 'summarize' | 'trim' };
  interruption?: { interruptedAfterSequence: number; reason: 'crash' };
  timestamp: string;
}

export interface SessionTotals {
  inputTokens: number;
  outputTokens: number;
  costMicrocents: number;
}

export interface AgentSessionRecord {
  id: string;
  agentSlug: string;
  agentSnapshot: Record<string, unknown>;
  title?: string;
  modelId?: string;
  context: SessionContext;
  status: SessionStatus;
  source: string;
  totals: SessionTotals;
  messageCount: number;
  turnCount: number;
  lastMessagePreview?: string;
  exportedWorkflowPath?: string;
  createdAt: string;
  updatedAt: string;
  deletedAt?: string;
}

export interface SessionSummary {
  id: string;
  title?: string;
  agentRef: string;
  status: SessionStatus;
  updatedAt: string;
  messageCount: number;
  preview?: string;
  workingDir: string;
}

// ---- events ------------------------------------------------------------------------------

export interface TurnError {
  code: ErrorCode;
  message: string;
  retryable: boolean;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface ApprovalPreview {
  path?: string;
  command?: string;
  host?: string;
}

export interface SessionStartedPayload {
  type: 'session:started';
  agentRef: string;
  model?: string;
  context: SessionContext;
  resumed?: boolean;
}
export interface TurnStartedPayload {
  type: 'session:turn_started';
  userMessageSequence: number;
}
export interface AgentTokenPayload {
  type: 'agent:token';
  token: string;
  model: string;
}
export interface AgentReasoningPayload {
  type: 'agent:reasoning';
  text: string;
  model: string;
}
export interface AgentToolCallPayload {
  type: 'agent:tool_call';
  toolId: string;
  callId: string;
  toolInput: Record<string, unknown>;
  model: string;
}
export interface AgentApprovalRequestedPayload {
  type: 'agent:approval_requested';
  toolId: string;
  callId: string;
  action: ApprovalAction;
  preview: ApprovalPreview;
}
export interface AgentToolResultPayload {
  type: 'agent:tool_result';
  toolId: string;
  callId: string;
  success: boolean;
  outputSummary: string;
  durationMs: number;
  errorCode?: ErrorCode;
}
export interface CostUpdatedPayload {
  type: 'cost:updated';
  model: string;
  inputTokens: number;
  outputTokens: number;
  costMicrocents: number;
  cumulativeCostMicrocents: number;
  priced: boolean;
}
export interface TurnCompletedPayload {
  type: 'session:turn_completed';
  stopReason: StopReason;
  tokensUsed: TokenUsage;
  error?: TurnError;
}
export interface SessionCompactingPayload {
  type: 'session:compacting';
  reason: CompactionReason;
}
export interface CompactionResultPayload {
  type: 'session:compacted' | 'session:trimmed';
  reason: CompactionReason;
  messagesBefore: number;
  messagesAfter: number;
  tokensBefore: number;
  tokensAfter: number;
  boundarySequence: number;
}
export interface BudgetWarningPayload {
  type: 'session:budget_warning';
  onExceed: 'warn' | 'pause_for_approval';
  limitMicrocents: number;
  spentMicrocents: number;
}
export interface SessionExportedPayload {
  type: 'session:exported';
  workflowPath: string;
  format: 'workflow' | 'jsonl';
}
export interface SessionCancelledPayload {
  type: 'session:cancelled';
}

export type EventPayload =
  | SessionStartedPayload
  | TurnStartedPayload
  | AgentTokenPayload
  | AgentReasoningPayload
  | AgentToolCallPayload
  | AgentApprovalRequestedPayload
  | AgentToolResultPayload
  | CostUpdatedPayload
  | TurnCompletedPayload
  | SessionCompactingPayload
  | CompactionResultPayload
  | BudgetWarningPayload
  | SessionExportedPayload
  | SessionCancelledPayload;

/** What the event bus adds to every payload. */
export interface EventStamp {
  sessionId: string;
  sequenceNumber: number;
  timestamp: string;
}

/** One `relavium/sessionEvent` notification: `{type, sessionId, sequenceNumber, timestamp, ...payload}`. */
export type SessionEvent = EventPayload & EventStamp;

// ---- params and results ------------------------------------------------------------------

export interface StartSessionParams {
  agentRef?: string;
  context?: PartialSessionContext;
  title?: string;
  source?: string;
}
export interface StartSessionResult {
  sessionId: string;
  agentRef: string;
  model?: string;
  context: SessionContext;
  status: SessionStatus;
}

export interface SessionRefParams {
  sessionId: string;
}

export interface SendMessageParams extends SessionRefParams {
  text: string;
  /** false: answer once the turn has begun (SendMessageAccepted); it ends as session:turn_completed. */
  wait?: boolean;
  /** `$/progress` begin/report/end for the turn on this token. */
  workDoneToken?: number | string;
}
/** Result of relavium/sendMessage with `wait: false`. */
export interface SendMessageAccepted {
  accepted: true;
  /** Absent when the turn ended before the message was recorded (its turn_completed says why). */
  userMessageSequence?: number;
  turnStartedSequence?: number;
}
export interface SendMessageResult {
  stopReason: StopReason;
  tokensUsed: TokenUsage;
  error?: TurnError;
  text: string;
  lastSequence: number;
}

export interface AbortTurnResult {
  aborted: boolean;
}

export interface ResumeSessionResult {
  session: AgentSessionRecord;
  messages: SessionMessage[];
  lastEventSequence: number;
}

export interface ListSessionsParams {
  workspace?: string;
  query?: string;
  status?: SessionStatus;
  limit?: number;
  cursor?: string;
}
export interface ListSessionsResult {
  sessions: SessionSummary[];
  nextCursor?: string;
}

export interface GetTranscriptParams extends SessionRefParams {
  beforeSequence?: number;
  limit?: number;
}
export interface GetTranscriptResult {
  messages: SessionMessage[];
  hasMore: boolean;
}

export interface SessionEventsParams extends SessionRefParams {
  afterSequence: number;
  limit?: number;
}
export interface SessionEventsResult {
  events: SessionEvent[];
}

export interface RenameSessionParams extends SessionRefParams {
  title: string;
}

export interface ExportSessionParams extends SessionRefParams {
  format?: 'workflow' | 'jsonl';
  open?: boolean;
}
export interface ExportSessionResult {
  format: 'workflow' | 'jsonl';
  content: string;
  suggestedPath: string;
  opened: boolean;
  /** The file the server wrote, if any (workspace exports folder, or the data directory). */
  savedPath?: string;
  /** What the user was told when nothing could be opened. */
  message?: string;
}

export interface ForkSessionParams extends SessionRefParams {
  atSequence: number;
}
export interface ForkSessionResult {
  sessionId: string;
}

export interface LspPosition {
  line: number;
  character: number;
}
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}
export interface EditorStateParams {
  uri: string;
  selection?: LspRange;
}

export interface RequestApprovalParams {
  sessionId: string;
  callId: string;
  toolId: string;
  action: ApprovalAction;
  preview: ApprovalPreview;
}
export interface RequestApprovalResult {
  decision: ApprovalDecision;
}

export interface OpenUntitledParams {
  language: string;
  content: string;
  title?: string;
}
export interface OpenUntitledResult {
  opened: boolean;
}

/** `capabilities.experimental.relavium` as the client declares it. */
export interface RelaviumClientCapabilities {
  approvals: boolean;
  openUntitled: boolean;
  editorState: boolean;
}

/** `initializationOptions` of `initialize`. */
export interface InitializationOptions {
  clientName: string;
  defaultAgent?: string;
  approval?: ApprovalMode;
}

/** `data.code` values of JSON-RPC domain errors beyond {@link ErrorCode}. */
export type DomainErrorCode = ErrorCode | 'session_not_found' | 'session_busy' | 'session_ended';
