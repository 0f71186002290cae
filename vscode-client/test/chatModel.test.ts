import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatModel, type ModelEffect } from '../src/model/chatModel';
import { formatCache } from '../src/model/format';
import type { EventPayload, SessionEvent } from '../src/protocol';
import type { ChatItem, ToolItem } from '../src/shared/viewState';
import { SESSION, message, record, stamp, stampAll, token, turnCompleted, turnStarted } from './fixtures';

function fresh(): ChatModel {
  const model = new ChatModel();
  model.startFresh(SESSION, 'relavium-default', 'test-model');
  return model;
}

function feed(model: ChatModel, events: readonly SessionEvent[]): ModelEffect[] {
  return events.flatMap((event) => model.applyEvent(event));
}

function kinds(model: ChatModel): string[] {
  return model.items.map((item) => item.kind);
}

function only<K extends ChatItem['kind']>(model: ChatModel, kind: K): Extract<ChatItem, { kind: K }>[] {
  return model.items.filter((item): item is Extract<ChatItem, { kind: K }> => item.kind === kind);
}

/** The `index`-th item of a kind (negative counts from the end); fails the test if absent. */
function nth<K extends ChatItem['kind']>(
  model: ChatModel,
  kind: K,
  index = 0,
): Extract<ChatItem, { kind: K }> {
  const item = only(model, kind).at(index);
  assert.ok(item, `no ${kind} item at ${index}`);
  return item;
}

const toolCall = (callId: string, input: Record<string, unknown> = { path: 'src/app.py' }): EventPayload => ({
  type: 'agent:tool_call',
  toolId: 'write_file',
  callId,
  toolInput: input,
  model: 'test-model',
});

const toolResult = (callId: string, success = true, errorCode?: 'tool_denied'): EventPayload => ({
  type: 'agent:tool_result',
  toolId: 'write_file',
  callId,
  success,
  outputSummary: success ? 'wrote 12 lines' : 'denied',
  durationMs: 42,
  ...(errorCode === undefined ? {} : { errorCode }),
});

const approvalRequested = (callId: string): EventPayload => ({
  type: 'agent:approval_requested',
  toolId: 'write_file',
  callId,
  action: 'fs_write',
  preview: { path: 'src/app.py' },
});

describe('ChatModel: streaming', () => {
  it('coalesces token deltas into one assistant item and settles it on completion', () => {
    const model = fresh();
    model.addPendingUser('hello?');
    feed(model, stampAll(1, [turnStarted(1), token('Hel'), token('lo '), token('world')]));
    assert.deepEqual(kinds(model), ['user', 'assistant']);
    const assistant = nth(model, 'assistant');
    assert.equal(assistant.text, 'Hello world');
    assert.equal(assistant.streaming, true);
    assert.equal(model.header.status, 'streaming');
    assert.equal(nth(model, 'user').sequence, 1, 'turn_started gives the user message its sequence');
    feed(model, [stamp(5, turnCompleted())]);
    assert.equal(nth(model, 'assistant').streaming, false);
    assert.equal(model.header.status, 'idle');
    assert.equal(model.turnRunning, false);
  });

  it('folds reasoning into the assistant item without mixing it into the answer', () => {
    const model = fresh();
    feed(
      model,
      stampAll(1, [turnStarted(1), { type: 'agent:reasoning', text: 'think', model: 'm' }, token('answer')]),
    );
    const assistant = nth(model, 'assistant');
    assert.equal(assistant.reasoning, 'think');
    assert.equal(assistant.text, 'answer');
  });

  it('bumps the revision of every item it changes', () => {
    const model = fresh();
    feed(model, stampAll(1, [turnStarted(1), token('a')]));
    const before = nth(model, 'assistant').rev;
    feed(model, [stamp(3, token('b'))]);
    assert.ok(nth(model, 'assistant').rev > before);
  });
});

describe('ChatModel: tool cards', () => {
  it('shows MCP calls, and the question to trust a project server, as ordinary cards', () => {
    const model = fresh();
    model.addPendingUser('say hi');
    const trust = { toolId: 'mcp:probe', callId: 'mcp-trust-1' };
    const echo = { toolId: 'mcp__probe__echo', callId: 'c1' };
    feed(
      model,
      stampAll(1, [
        turnStarted(1),
        {
          type: 'agent:tool_call',
          ...trust,
          toolInput: { trust: 'probe', command: 'probe --stdio' },
          model: 'm',
        },
        {
          type: 'agent:approval_requested',
          ...trust,
          action: 'process',
          preview: { command: 'probe --stdio' },
        },
        { type: 'agent:tool_result', ...trust, success: true, outputSummary: 'Trusted.', durationMs: 0 },
        { type: 'agent:tool_call', ...echo, toolInput: { text: 'hi' }, model: 'm' },
        {
          type: 'agent:approval_requested',
          ...echo,
          action: 'process',
          preview: { command: 'MCP probe: echo' },
        },
        { type: 'agent:tool_result', ...echo, success: true, outputSummary: 'hi', durationMs: 3 },
        token('It said hi.'),
        turnCompleted(),
      ]),
    );
    assert.deepEqual(kinds(model), ['user', 'tool', 'tool', 'assistant']);
    const asked = nth(model, 'tool', 0);
    const called = nth(model, 'tool', 1);
    assert.equal(asked.toolId, 'mcp:probe');
    assert.equal(asked.inputSummary, 'probe --stdio trust: probe');
    assert.equal(asked.state, 'succeeded');
    assert.equal(asked.approval?.state, 'approved');
    assert.equal(called.toolId, 'mcp__probe__echo');
    assert.equal(called.state, 'succeeded');
    assert.equal(called.outputSummary, 'hi');
  });

  it('puts a card between the text before and after a tool call', () => {
    const model = fresh();
    model.addPendingUser('fix it');
    feed(
      model,
      stampAll(1, [
        turnStarted(1),
        token('Let me look.'),
        toolCall('c1'),
        toolResult('c1'),
        token('Done.'),
        turnCompleted(),
      ]),
    );
    assert.deepEqual(kinds(model), ['user', 'assistant', 'tool', 'assistant']);
    const card = nth(model, 'tool');
    assert.equal(card.toolId, 'write_file');
    assert.equal(card.inputSummary, 'src/app.py');
    assert.equal(card.state, 'succeeded');
    assert.equal(card.durationMs, 42);
    assert.equal(card.outputSummary, 'wrote 12 lines');
    assert.deepEqual(
      only(model, 'assistant').map((item) => item.text),
      ['Let me look.', 'Done.'],
    );
  });

  it('marks failed tools', () => {
    const model = fresh();
    feed(model, stampAll(1, [turnStarted(1), toolCall('c1'), toolResult('c1', false)]));
    assert.equal(nth(model, 'tool').state, 'failed');
  });

  it('summarises bulky inputs instead of echoing them', () => {
    const model = fresh();
    const content = 'x'.repeat(5000);
    feed(model, stampAll(1, [turnStarted(1), toolCall('c1', { path: 'a.txt', content })]));
    const summary = nth(model, 'tool').inputSummary;
    assert.ok(summary.includes('a.txt'));
    assert.ok(summary.includes('content: 5000 chars'));
    assert.ok(summary.length < 200);
  });
});

describe('ChatModel: approvals', () => {
  it('enables inline buttons only while this client holds the request, then records the decision', () => {
    const model = fresh();
    feed(model, stampAll(1, [turnStarted(1), toolCall('c1'), approvalRequested('c1')]));
    let card: ToolItem = nth(model, 'tool');
    assert.equal(card.state, 'awaiting_approval');
    assert.equal(card.approval?.answerable, false, 'the event alone does not make it answerable');
    assert.equal(model.header.status, 'awaiting_approval');
    model.openApproval({
      sessionId: SESSION,
      callId: 'c1',
      toolId: 'write_file',
      action: 'fs_write',
      preview: { path: 'src/app.py' },
    });
    card = nth(model, 'tool');
    assert.equal(card.approval?.answerable, true);
    model.approvalDecided('c1', 'approve_always');
    card = nth(model, 'tool');
    assert.deepEqual(
      { state: card.approval?.state, answerable: card.approval?.answerable },
      { state: 'approved_always', answerable: false },
    );
    assert.equal(model.header.status, 'streaming');
    feed(model, [stamp(4, toolResult('c1'))]);
    assert.equal(nth(model, 'tool').state, 'succeeded');
  });

  it('keeps the request answerable when the event arrives after the request', () => {
    const model = fresh();
    feed(model, stampAll(1, [turnStarted(1), toolCall('c1')]));
    model.openApproval({
      sessionId: SESSION,
      callId: 'c1',
      toolId: 'write_file',
      action: 'fs_write',
      preview: { path: 'a' },
      diff: {
        path: 'a',
        created: false,
        unified: '--- a/a\n+++ b/a\n@@ -1,1 +1,1 @@\n-x\n+y\n',
        hunks: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1 }],
        stat: { added: 1, removed: 1 },
        truncated: false,
      },
    });
    feed(model, [stamp(3, approvalRequested('c1'))]);
    assert.equal(nth(model, 'tool').approval?.answerable, true);
    // the card keeps the diff the request carried, and after the answer too
    assert.equal(nth(model, 'tool').approval?.diff?.added, 1);
    model.approvalDecided('c1', 'approve');
    assert.match(nth(model, 'tool').approval?.diff?.unified ?? '', /\+y/);
  });

  it('infers a rejection decided elsewhere from a tool_denied result', () => {
    const model = fresh();
    feed(
      model,
      stampAll(1, [
        turnStarted(1),
        toolCall('c1'),
        approvalRequested('c1'),
        toolResult('c1', false, 'tool_denied'),
      ]),
    );
    const card = nth(model, 'tool');
    assert.equal(card.approval?.state, 'rejected');
    assert.equal(card.state, 'failed');
  });

  it('turns leftover buttons inert when the turn completes', () => {
    const model = fresh();
    feed(model, stampAll(1, [turnStarted(1), toolCall('c1')]));
    model.openApproval({
      sessionId: SESSION,
      callId: 'c1',
      toolId: 'write_file',
      action: 'fs_write',
      preview: {},
    });
    feed(model, [
      stamp(
        3,
        turnCompleted({
          stopReason: 'error',
          error: { code: 'cancelled', message: 'gone', retryable: false },
        }),
      ),
    ]);
    assert.equal(nth(model, 'tool').approval?.answerable, false);
  });
});

describe('ChatModel: a rejected Apply', () => {
  it('is one neutral card: the rejection and its result land on the same card', () => {
    const model = fresh();
    const call = (
      type: 'agent:tool_call' | 'agent:approval_requested' | 'agent:tool_result',
    ): EventPayload =>
      type === 'agent:tool_call'
        ? { type, toolId: 'write_file', callId: 'apply_1', toolInput: { path: 'a.toml' }, model: 'user' }
        : type === 'agent:approval_requested'
          ? { type, toolId: 'write_file', callId: 'apply_1', action: 'fs_write', preview: { path: 'a.toml' } }
          : {
              type,
              toolId: 'write_file',
              callId: 'apply_1',
              success: false,
              outputSummary: 'The user rejected this write_file call; do not retry it unasked.',
              durationMs: 1,
              errorCode: 'tool_denied',
            };
    feed(model, stampAll(1, [call('agent:tool_call'), call('agent:approval_requested')]));
    model.openApproval({
      sessionId: SESSION,
      callId: 'apply_1',
      toolId: 'write_file',
      action: 'fs_write',
      preview: { path: 'a.toml' },
    });
    model.approvalDecided('apply_1', 'reject');
    feed(model, [stamp(3, call('agent:tool_result'))]);
    const cards = only(model, 'tool');
    assert.equal(cards.length, 1);
    assert.equal(cards[0]?.approval?.state, 'rejected');
    assert.equal(model.header.status, 'idle');
  });
});

describe('ChatModel: turn completion and errors', () => {
  it('renders a turn error with its code and the text to retry', () => {
    const model = fresh();
    model.addPendingUser('explain');
    feed(
      model,
      stampAll(1, [
        turnStarted(1),
        turnCompleted({
          stopReason: 'error',
          error: { code: 'provider_rate_limit', message: 'Slow down', retryable: true },
        }),
      ]),
    );
    const error = nth(model, 'error');
    assert.equal(error.code, 'provider_rate_limit');
    assert.equal(error.message, 'Slow down');
    assert.equal(error.retryable, true);
    assert.equal(error.retryText, 'explain');
  });

  it('keeps an aborted message, marked, with what the turn did, and gives it back to the composer', () => {
    const model = fresh();
    const chip = {
      id: 'a1',
      kind: 'selection' as const,
      path: 'src/app.py',
      lines: { start: 1, end: 2 },
      language: 'python',
      text: 'x',
    };
    model.addPendingUser('long task', [chip]);
    assert.equal(model.composerLocked, true, 'locked the moment the message is on its way');
    const effects = feed(
      model,
      stampAll(1, [
        turnStarted(1),
        token('partial'),
        toolCall('c1'),
        toolResult('c1'),
        toolCall('c2'),
        approvalRequested('c2'),
        turnCompleted({ stopReason: 'aborted' }),
      ]),
    );
    assert.deepEqual(kinds(model), ['user', 'assistant', 'tool', 'tool', 'notice']);
    assert.equal(nth(model, 'user').outcome, 'cancelled');
    assert.equal(nth(model, 'assistant').text, 'partial');
    const waiting = nth(model, 'tool', -1);
    assert.equal(waiting.state, 'interrupted');
    assert.equal(waiting.approval?.state, 'cancelled', 'nobody approved it');
    assert.deepEqual(effects, [
      { kind: 'restoreDraft', text: 'long task', attachments: [chip] },
      { kind: 'fetchChanges', sessionId: SESSION, userSequence: 1 },
    ]);
    assert.equal(model.header.status, 'idle');
    assert.equal(model.composerLocked, false);
  });

  it('a message refused before its turn began (the turn limit) frees the composer, with Retry', () => {
    const model = fresh();
    model.addPendingUser('one more');
    feed(model, [
      stamp(
        1,
        turnCompleted({
          stopReason: 'error',
          error: { code: 'turn_limit', message: 'limit of 50 turns', retryable: false },
        }),
      ),
    ]);
    assert.equal(model.composerLocked, false);
    const error = nth(model, 'error');
    assert.equal(error.code, 'turn_limit');
    assert.equal(error.retryText, 'one more');
  });

  it('a tool result of an aborted call cancels its approval (never "approved")', () => {
    const model = fresh();
    feed(model, stampAll(1, [turnStarted(1), toolCall('c1'), approvalRequested('c1')]));
    feed(model, [
      stamp(4, {
        type: 'agent:tool_result',
        toolId: 'write_file',
        callId: 'c1',
        success: false,
        outputSummary: 'The turn was aborted; the call did not complete.',
        durationMs: 3,
        errorCode: 'cancelled',
      }),
    ]);
    assert.equal(nth(model, 'tool').approval?.state, 'cancelled');
  });

  it('stops the turn when the server goes away: cards interrupted, approvals cancelled, Retry offered', () => {
    const model = fresh();
    model.addPendingUser('fix it');
    feed(model, stampAll(1, [turnStarted(1), toolCall('c1'), approvalRequested('c1')]));
    model.openApproval({
      sessionId: SESSION,
      callId: 'c1',
      toolId: 'write_file',
      action: 'fs_write',
      preview: { path: 'src/app.py' },
    });
    assert.equal(model.composerLocked, true);
    model.serverStopped();
    const card = nth(model, 'tool');
    assert.equal(card.state, 'interrupted');
    assert.deepEqual([card.approval?.state, card.approval?.answerable], ['cancelled', false]);
    assert.equal(nth(model, 'user').outcome, 'interrupted');
    const notice = nth(model, 'notice', -1);
    assert.match(notice.text, /server restarted — this turn was stopped/);
    assert.deepEqual(notice.action, { kind: 'retry', label: 'Retry', text: 'fix it' });
    assert.equal(model.composerLocked, false, 'Enter works again at once');
    model.serverStopped();
    assert.equal(only(model, 'notice').length, 1, 'said once');
  });

  it('a message whose turn never started is kept, marked, when the server goes away', () => {
    const model = fresh();
    model.addPendingUser('first message');
    model.serverStopped();
    assert.equal(nth(model, 'user').outcome, 'interrupted');
    assert.deepEqual(nth(model, 'notice').action, { kind: 'retry', label: 'Retry', text: 'first message' });
  });

  it('keeps an aborted turn that changed files on screen', () => {
    const model = fresh();
    model.addPendingUser('edit two files');
    const effects = feed(
      model,
      stampAll(1, [
        turnStarted(1),
        toolCall('c1'),
        toolResult('c1'),
        turnCompleted({ stopReason: 'aborted', kept: true }),
      ]),
    );
    assert.deepEqual(kinds(model), ['user', 'tool', 'notice']);
    assert.match(nth(model, 'notice').text, /changed files/);
    assert.equal(nth(model, 'user').outcome, 'cancelled');
    // Stored with its changes: no draft to restore; the review card is asked for.
    assert.deepEqual(effects, [{ kind: 'fetchChanges', sessionId: SESSION, userSequence: 1 }]);
  });

  it('says what compaction inside a turn cleared and summarised', () => {
    const model = fresh();
    feed(
      model,
      stampAll(1, [
        { type: 'session:compacting', reason: 'context_window' },
        {
          type: 'session:compacted',
          reason: 'context_window',
          messagesBefore: 30,
          messagesAfter: 9,
          tokensBefore: 13000,
          tokensAfter: 6000,
          boundarySequence: 41,
          clearedToolResults: 7,
          summarizedMessages: 12,
        },
      ]),
    );
    assert.match(nth(model, 'notice').text, /7 tool outputs cleared .* 12 messages summarised/);
  });

  it('says how a replay went when it completes', () => {
    const model = fresh();
    const report = {
      sessionId: 'original',
      replaySessionId: SESSION,
      mode: 'auto' as const,
      cassette: 'stored' as const,
      turnsReplayed: 2,
      skippedTurnSequences: [],
      skippedSystemMessages: 0,
      liveToolCalls: 1,
      recordedToolCalls: 3,
      missingRecordings: 0,
      differences: ['message 3 (tool): content differs'],
      matches: false,
      stopped: false,
    };
    feed(model, stampAll(1, [{ type: 'session:replay_completed', report }]));
    const notice = nth(model, 'notice');
    assert.match(
      notice.text,
      /Replay \(auto\) finished: 2 turn\(s\), 1 difference\(s\); tool calls: 3 from the recording, 1 run again/,
    );
    assert.equal(notice.tone, 'warning');
  });

  it('notes an answer cut off by the output limit', () => {
    const model = fresh();
    feed(model, stampAll(1, [turnStarted(1), token('abc'), turnCompleted({ stopReason: 'length' })]));
    assert.match(nth(model, 'notice').text, /output limit/);
  });

  it('turns a refused send into an error card with a retry and drops the unsent message', () => {
    const model = fresh();
    const pending = model.addPendingUser('hi');
    model.sendFailed(pending, 'session_busy', 'A turn is already running', 'hi');
    assert.deepEqual(kinds(model), ['error']);
    assert.equal(nth(model, 'error').retryText, 'hi');
  });

  it('ends the session on session:cancelled', () => {
    const model = fresh();
    feed(model, [stamp(1, { type: 'session:cancelled' })]);
    assert.equal(model.header.status, 'ended');
  });

  it('updates one notice from compacting to compacted', () => {
    const model = fresh();
    feed(
      model,
      stampAll(1, [
        { type: 'session:compacting', reason: 'threshold' },
        {
          type: 'session:compacted',
          reason: 'threshold',
          messagesBefore: 40,
          messagesAfter: 5,
          tokensBefore: 9000,
          tokensAfter: 800,
          boundarySequence: 36,
        },
      ]),
    );
    const notices = only(model, 'notice');
    assert.equal(notices.length, 1);
    assert.match(nth(model, 'notice').text, /40 → 5 messages/);
  });
});

describe('ChatModel: footer', () => {
  it('adds tokens per call, takes the cumulative cost, and stays unpriced once unpriced', () => {
    const model = fresh();
    feed(
      model,
      stampAll(1, [
        {
          type: 'cost:updated',
          model: 'm1',
          inputTokens: 10,
          outputTokens: 2,
          costMicrocents: 500,
          cumulativeCostMicrocents: 500,
          priced: true,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        },
        {
          type: 'cost:updated',
          model: 'local',
          inputTokens: 5,
          outputTokens: 1,
          costMicrocents: 0,
          cumulativeCostMicrocents: 500,
          priced: false,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        },
      ]),
    );
    assert.deepEqual(model.footer, {
      model: 'local',
      inputTokens: 15,
      outputTokens: 3,
      costMicrocents: 500,
      priced: false,
    });
  });
});

describe('ChatModel: footer with prompt caching', () => {
  it('adds up cache reads and writes so the footer can show them', () => {
    const model = fresh();
    const call = (read: number, write: number, cumulative: number) => ({
      type: 'cost:updated' as const,
      model: 'claude-sonnet-4-5',
      inputTokens: 2000,
      outputTokens: 100,
      costMicrocents: 1,
      cumulativeCostMicrocents: cumulative,
      priced: true,
      cacheReadTokens: read,
      cacheWriteTokens: write,
    });
    feed(model, stampAll(1, [call(0, 1500, 900), call(1500, 400, 1200)]));
    assert.equal(model.footer.cacheReadTokens, 1500);
    assert.equal(model.footer.cacheWriteTokens, 1900);
    assert.equal(model.footer.inputTokens, 4000);
    assert.equal(formatCache(model.footer), ' (1.5k cached, 1.9k cache write)');
    assert.equal(formatCache({ cacheReadTokens: 0 }), '');
  });
});

describe('ChatModel: gap detection', () => {
  it('requests the backlog after a skipped sequence and applies it without duplicating events', () => {
    const model = fresh();
    model.addPendingUser('q');
    feed(model, stampAll(1, [turnStarted(1), token('a'), token('b')]));
    const gap = model.applyEvent(stamp(6, token('e')));
    assert.deepEqual(gap, [{ kind: 'fetchBacklog', sessionId: SESSION, afterSequence: 3 }]);
    assert.deepEqual(model.applyEvent(stamp(7, token('f'))), [], 'no second fetch while one is pending');
    assert.equal(nth(model, 'assistant').text, 'ab', 'nothing past the hole is shown yet');
    const effects = model.applyBacklog(
      SESSION,
      stampAll(2, [token('a'), token('b'), token('c'), token('d'), token('e')]),
    );
    assert.deepEqual(effects, []);
    assert.equal(nth(model, 'assistant').text, 'abcdef');
    model.applyEvent(stamp(5, token('late duplicate')));
    assert.equal(nth(model, 'assistant').text, 'abcdef');
  });

  it('ignores a backlog answer for a session it no longer shows', () => {
    const model = fresh();
    model.applyEvent(stamp(3, token('x')));
    model.clear();
    assert.deepEqual(model.applyBacklog(SESSION, [stamp(1, token('a'))]), []);
    assert.deepEqual(model.items, []);
  });

  it('keeps events that arrive before the session is known and applies them once it is', () => {
    const model = new ChatModel();
    model.addPendingUser('first');
    // The server streams events while startSession is still returning.
    model.applyEvent(
      stamp(
        1,
        {
          type: 'session:started',
          agentRef: 'relavium-default',
          model: 'test-model',
          context: { workingDir: '/w', fsScopeTier: 'sandboxed' },
          resumed: false,
        },
        'new-session',
      ),
    );
    model.applyEvent(stamp(2, turnStarted(1), 'new-session'));
    model.applyEvent(stamp(3, token('hi'), 'new-session'));
    model.startFresh('new-session', 'relavium-default');
    assert.deepEqual(kinds(model), ['user', 'assistant']);
    assert.equal(nth(model, 'user').text, 'first');
    assert.equal(nth(model, 'assistant').text, 'hi');
  });
});

describe('ChatModel: rebuilding from the server', () => {
  it('rebuilds from the transcript and continues with live events after lastEventSequence', () => {
    const model = new ChatModel();
    model.beginLoading(SESSION);
    assert.equal(model.header.loading, true);
    model.loadSession({
      record: record(),
      messages: [
        message(1, 'user', [{ type: 'text', text: 'hi' }]),
        message(2, 'assistant', [{ type: 'text', text: 'hello' }]),
      ],
      hasMore: true,
      lastEventSequence: 20,
    });
    assert.deepEqual(kinds(model), ['user', 'assistant']);
    assert.equal(model.header.hasMoreHistory, true);
    assert.equal(model.header.title, 'A chat');
    assert.deepEqual(model.footer, {
      model: 'test-model',
      inputTokens: 100,
      outputTokens: 50,
      costMicrocents: 1234,
      priced: true,
    });
    assert.deepEqual(model.applyEvent(stamp(20, token('old'))), [], 'already reflected by the transcript');
    model.addPendingUser('again');
    feed(model, stampAll(21, [turnStarted(3), token('live')]));
    assert.equal(nth(model, 'assistant', -1).text, 'live');
  });

  it('replays a turn that is still running without duplicating its committed messages', () => {
    const model = new ChatModel();
    model.beginLoading(SESSION);
    const recentEvents = stampAll(10, [
      turnStarted(3),
      toolCall('c1'),
      toolResult('c1'),
      {
        type: 'cost:updated',
        model: 'test-model',
        inputTokens: 7,
        outputTokens: 7,
        costMicrocents: 100,
        cumulativeCostMicrocents: 1334,
        priced: true,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      },
      token('still '),
    ]);
    model.loadSession({
      record: record({ status: 'streaming' }),
      messages: [
        message(1, 'user', [{ type: 'text', text: 'one' }]),
        message(2, 'assistant', [{ type: 'text', text: 'first answer' }]),
        message(3, 'user', [{ type: 'text', text: 'two' }]),
        // Committed mid-turn; the replayed events describe the same call.
        message(4, 'assistant', [
          { type: 'tool_call', id: 'c1', name: 'write_file', args: { path: 'src/app.py' } },
        ]),
        message(5, 'tool', [{ type: 'tool_result', toolCallId: 'c1', result: 'ok', isError: false }]),
      ],
      hasMore: false,
      lastEventSequence: 14,
      recentEvents,
    });
    assert.deepEqual(kinds(model), ['user', 'assistant', 'user', 'tool', 'assistant']);
    assert.equal(model.header.status, 'streaming');
    assert.equal(nth(model, 'assistant', -1).streaming, true);
    assert.equal(model.footer.inputTokens, 100, 'replayed costs are already in the record totals');
    assert.equal(model.footer.costMicrocents, 1334);
    feed(model, [stamp(14, token('still ')), stamp(15, token('going'))]);
    assert.equal(nth(model, 'assistant', -1).text, 'still going');
    feed(model, [stamp(16, turnCompleted())]);
    assert.equal(model.header.status, 'idle');
  });

  it('after a server restart shows the cut turn as stopped, not as still waiting for approval', () => {
    const model = new ChatModel();
    model.beginLoading(SESSION);
    // The log has the turn's start and its approval request, never its end: the old server
    // died; the new one marked the turn interrupted when it loaded the session.
    const recentEvents = stampAll(10, [turnStarted(1), toolCall('c1'), approvalRequested('c1')]);
    model.loadSession({
      record: record({ status: 'idle' }),
      messages: [
        message(1, 'user', [{ type: 'text', text: 'fix it' }]),
        message(2, 'assistant', [
          { type: 'tool_call', id: 'c1', name: 'write_file', args: { path: 'src/app.py' } },
        ]),
        { ...message(3, 'system', []), interruption: { interruptedAfterSequence: 2, reason: 'crash' } },
      ],
      hasMore: false,
      lastEventSequence: 12,
      recentEvents,
    });
    assert.equal(model.header.status, 'idle');
    assert.equal(model.composerLocked, false);
    const card = nth(model, 'tool');
    assert.equal(card.state, 'interrupted');
    assert.equal(card.approval?.state, 'cancelled', 'not "Waiting for your decision" for good');
    assert.equal(nth(model, 'user').outcome, 'interrupted');
    const notice = nth(model, 'notice');
    assert.match(notice.text, /server restarted/);
    assert.deepEqual(notice.action, { kind: 'retry', label: 'Retry', text: 'fix it' });
  });

  it('puts a review card after its turn, updates it in place and drops it when empty', () => {
    const model = new ChatModel();
    model.beginLoading(SESSION);
    model.loadSession({
      record: record(),
      messages: [
        message(1, 'user', [{ type: 'text', text: 'one' }]),
        message(2, 'assistant', [{ type: 'text', text: 'done one' }]),
        message(3, 'user', [{ type: 'text', text: 'two' }]),
        message(4, 'assistant', [{ type: 'text', text: 'done two' }]),
      ],
      hasMore: false,
      lastEventSequence: 0,
      plan: [{ content: 'step', status: 'pending', priority: 'medium' }],
    });
    const file = {
      path: 'a.py',
      created: false,
      deleted: false,
      added: 2,
      removed: 1,
      review: 'pending' as const,
    };
    model.showChanges(1, [file]);
    model.showChanges(3, [file]);
    assert.deepEqual(kinds(model), ['user', 'assistant', 'changes', 'user', 'assistant', 'changes', 'plan']);
    model.showChanges(1, [{ ...file, review: 'kept' }]);
    assert.equal(nth(model, 'changes').files[0]?.review, 'kept');
    assert.equal(only(model, 'changes').length, 2);
    model.showChanges(3, []);
    assert.deepEqual(kinds(model), ['user', 'assistant', 'changes', 'user', 'assistant', 'plan']);
  });

  it('prepends older pages without duplicating items', () => {
    const model = new ChatModel();
    model.beginLoading(SESSION);
    model.loadSession({
      record: record(),
      messages: [message(3, 'user', [{ type: 'text', text: 'c' }])],
      hasMore: true,
      lastEventSequence: 0,
    });
    assert.equal(model.oldestSequence, 3);
    model.prependHistory(
      [message(1, 'user', [{ type: 'text', text: 'a' }]), message(3, 'user', [{ type: 'text', text: 'c' }])],
      false,
    );
    assert.deepEqual(
      only(model, 'user').map((item) => item.text),
      ['a', 'c'],
    );
    assert.equal(model.header.hasMoreHistory, false);
    assert.equal(model.oldestSequence, 1);
  });
});
