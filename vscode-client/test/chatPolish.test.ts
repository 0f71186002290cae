import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatModel } from '../src/model/chatModel';
import { chipFromText, toTextPart, type ContextAttachment } from '../src/model/contextParts';
import { shownChange } from '../src/model/format';
import { ViewSync } from '../src/model/viewSync';
import { SESSION, message, record, stampAll, token, turnStarted } from './fixtures';

const selection: ContextAttachment = {
  id: 'ctx-1',
  kind: 'selection',
  path: 'src/app.py',
  lines: { start: 3, end: 9 },
  language: 'python',
  text: 'def f():\n    return "```"\n',
};

describe('context attachments', () => {
  it('travel as a text part whose header brings the chip back', () => {
    const part = toTextPart(selection);
    assert.ok(part.text.startsWith('Attached selection: src/app.py lines 3-9\n````python\n'));
    assert.ok(part.text.includes('return "```"'), 'the text is fenced with a longer fence');
    assert.deepEqual(chipFromText(part.text, 'x'), { id: 'x', kind: 'selection', label: 'src/app.py:3-9' });
    assert.equal(chipFromText('Attached nothing', 'x'), undefined);
  });

  it('show as chips, not pasted text, in the composer, the pending bubble and the reloaded transcript', () => {
    const model = new ChatModel();
    model.startFresh(SESSION, 'agent', 'test-model');
    model.addAttachment(selection);
    model.addAttachment({ ...selection, id: 'ctx-2' }); // the same range replaces the first
    assert.deepEqual(model.view().attachments, [{ id: 'ctx-2', kind: 'selection', label: 'src/app.py:3-9' }]);
    const taken = model.takeAttachments();
    model.addPendingUser('What does it do?', taken);
    assert.deepEqual(model.view().attachments, []);
    const pending = model.items.at(-1);
    assert.equal(pending?.kind === 'user' ? pending.attachments?.[0]?.label : undefined, 'src/app.py:3-9');

    const reloaded = new ChatModel();
    reloaded.loadSession({
      record: record(),
      messages: [message(1, 'user', [{ type: 'text', text: 'What does it do?' }, toTextPart(selection)])],
      hasMore: false,
      lastEventSequence: 3,
    });
    const user = reloaded.items.find((item) => item.kind === 'user');
    assert.ok(user !== undefined);
    {
      assert.equal(user.text, 'What does it do?');
      assert.deepEqual(
        user.attachments?.map((chip) => chip.label),
        ['src/app.py:3-9'],
      );
    }
  });

  it('go into every patch so a reloaded webview shows them', () => {
    const model = new ChatModel();
    model.addAttachment(selection);
    const sync = new ViewSync();
    assert.equal(sync.diff(model.view()).attachments.length, 1);
    model.removeAttachment('ctx-1');
    assert.equal(sync.diff(model.view()).attachments.length, 0);
  });
});

describe('tool cards after a reload', () => {
  it('keep the approval decision and the duration from the event log', () => {
    const model = new ChatModel();
    const call = (id: string) => ({
      type: 'tool_call' as const,
      id,
      name: 'write_file',
      args: { path: 'a.py' },
    });
    const events = stampAll(1, [
      turnStarted(1),
      { type: 'agent:tool_call', toolId: 'write_file', callId: 'c1', toolInput: {}, model: 'm' },
      {
        type: 'agent:approval_requested',
        toolId: 'write_file',
        callId: 'c1',
        action: 'fs_write',
        preview: { path: 'a.py' },
      },
      {
        type: 'agent:tool_result',
        toolId: 'write_file',
        callId: 'c1',
        success: true,
        outputSummary: 'ok',
        durationMs: 1500,
      },
      {
        type: 'agent:approval_requested',
        toolId: 'write_file',
        callId: 'c2',
        action: 'fs_write',
        preview: { path: 'b.py' },
      },
      {
        type: 'agent:tool_result',
        toolId: 'write_file',
        callId: 'c2',
        success: false,
        outputSummary: 'denied',
        durationMs: 7,
        errorCode: 'tool_denied',
      },
      {
        type: 'session:turn_completed',
        stopReason: 'stop',
        tokensUsed: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
    ]);
    model.loadSession({
      record: record(),
      messages: [
        message(1, 'user', [{ type: 'text', text: 'write' }]),
        message(2, 'assistant', [call('c1'), call('c2')]),
        message(3, 'tool', [
          { type: 'tool_result', toolCallId: 'c1', result: 'ok', isError: false },
          { type: 'tool_result', toolCallId: 'c2', result: 'denied', isError: true },
        ]),
      ],
      hasMore: false,
      lastEventSequence: 7,
      // Only the whole log's tool events (the recent window may not reach back that far).
      recentEvents: [],
      toolEvents: events.filter((event) => event.type.startsWith('agent:')),
    });
    const cards = model.items.filter((item) => item.kind === 'tool');
    assert.deepEqual(
      cards.map((card) => [card.durationMs, card.approval?.state, card.approval?.answerable]),
      [
        [1500, 'approved', false],
        [7, 'rejected', false],
      ],
    );
    assert.equal(model.header.status, 'idle');
  });
});

describe('settled state', () => {
  it('settle() ends a turn whose completion was lost: nothing keeps claiming activity', () => {
    const model = new ChatModel();
    model.startFresh(SESSION, 'agent', 'test-model');
    model.addPendingUser('hi');
    for (const event of stampAll(1, [turnStarted(1), token('Hel')])) {
      model.applyEvent(event);
    }
    assert.equal(model.turnRunning, true);
    model.settle('idle');
    assert.equal(model.turnRunning, false);
    assert.equal(model.header.status, 'idle');
    const assistant = model.items.find((item) => item.kind === 'assistant');
    assert.equal(assistant?.kind === 'assistant' && assistant.streaming, false);
  });
});

describe('a code block applied outside a turn', () => {
  it('shows its card and approval, then leaves the session idle (never "answering")', () => {
    const model = new ChatModel();
    model.startFresh(SESSION, 'agent', 'test-model');
    const events = stampAll(1, [
      {
        type: 'agent:tool_call',
        toolId: 'write_file',
        callId: 'apply_1',
        toolInput: { path: 'a.py' },
        model: 'user',
      },
      {
        type: 'agent:approval_requested',
        toolId: 'write_file',
        callId: 'apply_1',
        action: 'fs_write',
        preview: { path: 'a.py' },
      },
    ]);
    for (const event of events) {
      model.applyEvent(event);
    }
    assert.equal(model.header.status, 'awaiting_approval');
    model.approvalDecided('apply_1', 'approve');
    assert.equal(model.header.status, 'idle');
    for (const event of stampAll(3, [
      {
        type: 'agent:tool_result',
        toolId: 'write_file',
        callId: 'apply_1',
        success: true,
        outputSummary: 'Replaced a.py',
        durationMs: 3,
      },
    ])) {
      model.applyEvent(event);
    }
    assert.equal(model.header.status, 'idle');
    assert.equal(model.turnRunning, false);
    const card = model.items.find((item) => item.kind === 'tool');
    assert.equal(card?.kind === 'tool' ? card.state : undefined, 'succeeded');
  });
});

describe('agent and model picks', () => {
  it('keep the picks for the next session across a new chat, and note a mid-session switch', () => {
    const model = new ChatModel();
    model.setNext({ agent: 'coder', model: 'loop/gpt-4.1' });
    model.clear();
    assert.equal(model.header.nextAgent, 'coder');
    assert.equal(model.header.nextModel, 'loop/gpt-4.1');
    model.startFresh(SESSION, 'coder', 'gpt-4o-mini');
    model.modelSwitched('gpt-4.1');
    assert.equal(model.footer.model, 'gpt-4.1');
    const notice = model.items.at(-1);
    assert.ok(notice?.kind === 'notice' && notice.text.includes('gpt-4.1'));
  });
});

describe('call ids reused across turns (local models number calls per turn)', () => {
  it('give each call its own card, before and after a reload, with its own approval', () => {
    const call = { type: 'tool_call' as const, id: 'call_0', name: 'write_file', args: { path: 'a.py' } };
    const approval = {
      type: 'agent:approval_requested' as const,
      toolId: 'write_file',
      callId: 'call_0',
      action: 'fs_write' as const,
      preview: { path: 'a.py' },
    };
    const result = (denied: boolean) => ({
      type: 'agent:tool_result' as const,
      toolId: 'write_file',
      callId: 'call_0',
      success: !denied,
      outputSummary: denied ? 'denied' : 'ok',
      durationMs: denied ? 5 : 9,
      ...(denied ? { errorCode: 'tool_denied' as const } : {}),
    });
    const model = new ChatModel();
    model.loadSession({
      record: record(),
      messages: [
        message(1, 'user', [{ type: 'text', text: 'one' }]),
        message(2, 'assistant', [call]),
        message(3, 'tool', [{ type: 'tool_result', toolCallId: 'call_0', result: 'ok', isError: false }]),
        message(4, 'user', [{ type: 'text', text: 'two' }]),
        message(5, 'assistant', [call]),
        message(6, 'tool', [{ type: 'tool_result', toolCallId: 'call_0', result: 'denied', isError: true }]),
      ],
      hasMore: false,
      lastEventSequence: 4,
      toolEvents: stampAll(1, [approval, result(false), approval, result(true)]),
    });
    const cards = model.items.filter((item) => item.kind === 'tool');
    assert.deepEqual(
      cards.map((card) => [card.id, card.approval?.state, card.durationMs]),
      [
        ['tool:call_0', 'approved', 9],
        ['tool:call_0#1', 'rejected', 5],
      ],
    );
    // A third turn reusing the id live gets a new card too.
    for (const event of stampAll(5, [turnStarted(7), { ...approval }, result(false)])) {
      model.applyEvent(event);
    }
    assert.deepEqual(
      model.items.filter((item) => item.kind === 'tool').map((card) => card.id),
      ['tool:call_0', 'tool:call_0#1', 'tool:call_0#2'],
    );
  });
});

describe('a file change nobody was asked about', () => {
  const diff = {
    path: 'a.py',
    created: false,
    unified: '--- a/a.py\n+++ b/a.py\n@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n[... diff cut: 40 more lines ...]\n',
    hunks: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1 }],
    stat: { added: 21, removed: 21 },
    truncated: true,
  };
  const events = stampAll(1, [
    turnStarted(1),
    { type: 'agent:tool_call', toolId: 'edit_file', callId: 'c1', toolInput: {}, model: 'm' },
    {
      type: 'agent:tool_result',
      toolId: 'edit_file',
      callId: 'c1',
      success: true,
      outputSummary: 'Edited a.py: 1 replacement (+21 -21 lines).',
      durationMs: 3,
      diff,
    },
  ]);
  const expected = { unified: diff.unified, added: 21, removed: 21, truncated: true };

  it('shows its whole (cut) diff in the card live', () => {
    const model = new ChatModel();
    model.startFresh(SESSION, 'agent', 'test-model');
    events.forEach((event) => model.applyEvent(event));
    const [card] = model.items.filter((item) => item.kind === 'tool');
    assert.ok(card !== undefined);
    assert.deepEqual(card.diff, expected);
    assert.deepEqual(shownChange(card), expected, 'no approval card shows it, so the card does');
  });

  it('shows it after a reload too, from the event log', () => {
    const model = new ChatModel();
    model.loadSession({
      record: record(),
      messages: [
        message(1, 'user', [{ type: 'text', text: 'edit' }]),
        message(2, 'assistant', [{ type: 'tool_call', id: 'c1', name: 'edit_file', args: { path: 'a.py' } }]),
        message(3, 'tool', [{ type: 'tool_result', toolCallId: 'c1', result: 'ok', isError: false }]),
      ],
      hasMore: false,
      lastEventSequence: 3,
      recentEvents: [],
      toolEvents: events.filter((event) => event.type.startsWith('agent:')),
    });
    const [card] = model.items.filter((item) => item.kind === 'tool');
    assert.ok(card !== undefined);
    assert.deepEqual(shownChange(card), expected);
  });

  it('is not shown twice when the approval card already shows it', () => {
    const model = new ChatModel();
    model.startFresh(SESSION, 'agent', 'test-model');
    events.slice(0, 2).forEach((event) => model.applyEvent(event));
    model.openApproval({
      sessionId: SESSION,
      callId: 'c1',
      toolId: 'edit_file',
      action: 'fs_write',
      preview: { path: 'a.py' },
      diff,
    });
    model.approvalDecided('c1', 'approve');
    events.slice(2).forEach((event) => model.applyEvent(event));
    const [card] = model.items.filter((item) => item.kind === 'tool');
    assert.ok(card !== undefined);
    assert.equal(card.approval?.diff?.added, 21);
    assert.equal(shownChange(card), undefined);
  });
});
