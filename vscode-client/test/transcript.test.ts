import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { itemsFromMessages } from '../src/model/transcript';
import type { SessionMessage } from '../src/protocol';
import { message } from './fixtures';

let revision = 0;
const rev = (): number => ++revision;

describe('itemsFromMessages', () => {
  it('maps users, assistant text, reasoning, tool calls and their results', () => {
    const messages: SessionMessage[] = [
      message(1, 'user', [
        { type: 'text', text: 'fix the bug' },
        {
          type: 'media',
          mimeType: 'image/png',
          source: { kind: 'handle', handle: 'media://sha256-00' },
          name: 'shot.png',
        },
      ]),
      message(2, 'assistant', [
        { type: 'reasoning', text: 'look first', redacted: false },
        { type: 'text', text: 'Reading.' },
        { type: 'tool_call', id: 'c1', name: 'read_file', args: { path: 'app.py' } },
        { type: 'tool_call', id: 'c2', name: 'run_command', args: { command: 'pytest', args: ['-q'] } },
      ]),
      message(3, 'tool', [{ type: 'tool_result', toolCallId: 'c1', result: 'print(1)', isError: false }]),
      message(4, 'tool', [{ type: 'tool_result', toolCallId: 'c2', result: 'boom', isError: true }]),
      message(5, 'assistant', [{ type: 'text', text: 'Fixed.' }]),
    ];
    const items = itemsFromMessages(messages, rev);
    assert.deepEqual(
      items.map((item) => item.kind),
      ['user', 'assistant', 'tool', 'tool', 'assistant'],
    );
    const [user, assistant, read, run] = items;
    assert.equal(user?.kind === 'user' && user.text, 'fix the bug\n[shot.png]');
    assert.equal(user?.kind === 'user' && user.sequence, 1);
    assert.equal(assistant?.kind === 'assistant' && assistant.reasoning, 'look first');
    assert.equal(assistant?.kind === 'assistant' && assistant.text, 'Reading.');
    assert.equal(read?.kind === 'tool' && read.state, 'succeeded');
    assert.equal(read?.kind === 'tool' && read.outputSummary, 'print(1)');
    assert.equal(run?.kind === 'tool' && run.state, 'failed');
    assert.equal(run?.kind === 'tool' && run.inputSummary, 'pytest -q');
  });

  it('marks a tool call without a recorded result as interrupted', () => {
    const items = itemsFromMessages(
      [message(1, 'assistant', [{ type: 'tool_call', id: 'c9', name: 'write_file', args: {} }])],
      rev,
    );
    assert.equal(items[0]?.kind === 'tool' && items[0].state, 'interrupted');
  });

  it('shows compaction and interruption markers as notices and hides other system messages', () => {
    const compaction = {
      ...message(1, 'system', [{ type: 'text', text: 'summary' }]),
      compaction: { droppedThroughSequence: 0, mode: 'summarize' as const },
    };
    const interruption = {
      ...message(2, 'system', []),
      interruption: { interruptedAfterSequence: 1, reason: 'crash' as const },
    };
    const plain = message(3, 'system', [{ type: 'text', text: 'system prompt' }]);
    const items = itemsFromMessages([compaction, interruption, plain], rev);
    assert.deepEqual(
      items.map((item) => item.kind === 'notice' && item.tone),
      ['info', 'warning'],
    );
  });

  it('derives stable ids from sequence numbers and call ids', () => {
    const messages = [
      message(7, 'assistant', [
        { type: 'text', text: 'a' },
        { type: 'tool_call', id: 'x', name: 't', args: {} },
        { type: 'text', text: 'b' },
      ]),
    ];
    const first = itemsFromMessages(messages, rev).map((item) => item.id);
    const second = itemsFromMessages(messages, rev).map((item) => item.id);
    assert.deepEqual(first, ['m7-0', 'tool:x', 'm7-1']);
    assert.deepEqual(second, first);
  });
});
