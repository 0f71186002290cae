import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatModel } from '../src/model/chatModel';
import { PLAN_ITEM_ID, planProgress } from '../src/model/plan';
import type { EventPayload, PlanEntry } from '../src/protocol';
import type { PlanItem } from '../src/shared/viewState';
import { SESSION, message, record, stamp, token, turnStarted } from './fixtures';

const steps: PlanEntry[] = [
  { content: 'Search for the parser', status: 'completed', priority: 'medium' },
  { content: 'Fix the off-by-one', status: 'in_progress', priority: 'high' },
  { content: 'Run the tests', status: 'pending', priority: 'medium' },
];

const planUpdated = (entries: PlanEntry[], explanation?: string): EventPayload => ({
  type: 'agent:plan_updated',
  entries,
  ...(explanation === undefined ? {} : { explanation }),
});

function thePlan(model: ChatModel): PlanItem | undefined {
  return model.items.find((item): item is PlanItem => item.kind === 'plan');
}

function kinds(model: ChatModel): string[] {
  return model.items.map((item) => item.kind);
}

describe('ChatModel: the agent plan', () => {
  it('shows one checklist that follows the latest update and disappears when cleared', () => {
    const model = new ChatModel();
    model.startFresh(SESSION, 'relavium-default', 'test-model');
    model.addPendingUser('fix it');
    model.applyEvent(stamp(1, turnStarted(1)));
    model.applyEvent(stamp(2, planUpdated(steps.slice(0, 1), 'first look')));
    model.applyEvent(stamp(3, token('Looking.')));
    assert.deepEqual(kinds(model), ['user', 'plan', 'assistant']);
    assert.equal(thePlan(model)?.explanation, 'first look');
    const before = thePlan(model)?.rev ?? 0;
    model.applyEvent(stamp(4, planUpdated(steps)));
    assert.deepEqual(kinds(model), ['user', 'assistant', 'plan'], 'an update moves the plan below');
    const plan = thePlan(model);
    assert.ok(plan !== undefined);
    assert.equal(plan.id, PLAN_ITEM_ID);
    assert.ok(plan.rev > before);
    assert.deepEqual(
      plan.entries.map((entry) => entry.status),
      ['completed', 'in_progress', 'pending'],
    );
    assert.equal(plan.explanation, undefined);
    assert.equal(planProgress(plan), '1/3 done');
    model.applyEvent(stamp(5, planUpdated([])));
    assert.equal(thePlan(model), undefined);
  });

  it('shows the plan resumeSession returned when a stored session opens', () => {
    const model = new ChatModel();
    model.beginLoading(SESSION);
    model.loadSession({
      record: record(),
      messages: [message(1, 'user', [{ type: 'text', text: 'hi' }])],
      hasMore: false,
      lastEventSequence: 9,
      plan: steps,
    });
    assert.deepEqual(kinds(model), ['user', 'plan']);
    assert.equal(thePlan(model)?.entries[1]?.content, 'Fix the off-by-one');
  });
});

describe('ChatModel: live command output', () => {
  it('shows the tail of agent:tool_output in the running card until the result', () => {
    const model = new ChatModel();
    model.startFresh(SESSION, 'relavium-default', 'test-model');
    model.applyEvent(stamp(1, turnStarted(1)));
    model.applyEvent(
      stamp(2, { type: 'agent:tool_call', toolId: 'run_command', callId: 'c1', toolInput: {}, model: 'm' }),
    );
    model.applyEvent(
      stamp(3, {
        type: 'agent:tool_output',
        toolId: 'run_command',
        callId: 'c1',
        text: 'a\n',
        truncated: false,
      }),
    );
    model.applyEvent(
      stamp(4, {
        type: 'agent:tool_output',
        toolId: 'run_command',
        callId: 'c1',
        text: 'x'.repeat(5000),
        truncated: false,
      }),
    );
    const card = model.items.find((item) => item.kind === 'tool');
    assert.ok(card?.kind === 'tool');
    const live = card.liveOutput ?? '';
    assert.equal(live.length, 4001);
    assert.ok(live.startsWith('…'));
    model.applyEvent(
      stamp(5, {
        type: 'agent:tool_result',
        toolId: 'run_command',
        callId: 'c1',
        success: true,
        outputSummary: 'done',
        durationMs: 5,
      }),
    );
    assert.equal(card.liveOutput, undefined);
  });
});
