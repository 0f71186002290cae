/** Builders for protocol objects used across the unit tests. */

import type {
  AgentSessionRecord,
  DurableContentPart,
  EventPayload,
  MessageRole,
  SessionEvent,
  SessionMessage,
} from '../src/protocol';

export const SESSION = 'session-1';

/** Stamp a payload as the server's bus would. */
export function stamp(sequenceNumber: number, payload: EventPayload, sessionId = SESSION): SessionEvent {
  return {
    ...payload,
    sessionId,
    sequenceNumber,
    timestamp: `2026-01-01T00:00:${String(sequenceNumber % 60).padStart(2, '0')}Z`,
  };
}

/** Stamp a list of payloads with consecutive sequence numbers starting at `first`. */
export function stampAll(
  first: number,
  payloads: readonly EventPayload[],
  sessionId = SESSION,
): SessionEvent[] {
  return payloads.map((payload, index) => stamp(first + index, payload, sessionId));
}

export const token = (text: string): EventPayload => ({
  type: 'agent:token',
  token: text,
  model: 'test-model',
});

export const turnStarted = (userMessageSequence: number): EventPayload => ({
  type: 'session:turn_started',
  userMessageSequence,
});

export const turnCompleted = (
  extra: Partial<Extract<EventPayload, { type: 'session:turn_completed' }>> = {},
): EventPayload => ({
  type: 'session:turn_completed',
  stopReason: 'stop',
  tokensUsed: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
  ...extra,
});

/** A durable message. */
export function message(
  sequenceNumber: number,
  role: MessageRole,
  content: DurableContentPart[],
  sessionId = SESSION,
): SessionMessage {
  return {
    id: `msg-${sequenceNumber}`,
    sessionId,
    sequenceNumber,
    role,
    content,
    timestamp: '2026-01-01T00:00:00Z',
  };
}

/** A session record. */
export function record(overrides: Partial<AgentSessionRecord> = {}): AgentSessionRecord {
  return {
    id: SESSION,
    agentSlug: 'relavium-default',
    agentSnapshot: {},
    title: 'A chat',
    modelId: 'test-model',
    context: { workingDir: '/work', fsScopeTier: 'sandboxed' },
    status: 'idle',
    source: { kind: 'vscode', interactive: true },
    totals: { inputTokens: 100, outputTokens: 50, costMicrocents: 1234 },
    messageCount: 2,
    turnCount: 1,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    ...overrides,
  };
}
