/**
 * View-model throughput: how fast streamed events become webview patches, how long a reload
 * takes to rebuild a long transcript, and how long the markdown parser needs for big answers.
 * Prints numbers and ratios; it is not a pass/fail test.  Run: `npm run bench`.
 */

import { performance } from 'node:perf_hooks';
import { ChatModel } from '../src/model/chatModel';
import { ViewSync } from '../src/model/viewSync';
import type { SessionEvent, SessionMessage } from '../src/protocol';
import { parseMarkdown } from '../src/webview/markdown';

const SESSION = 'bench-session';

function event(sequenceNumber: number, payload: Record<string, unknown>): SessionEvent {
  return {
    ...payload,
    sessionId: SESSION,
    sequenceNumber,
    timestamp: '2026-01-01T00:00:00Z',
  } as SessionEvent;
}

/** Median of five timed runs after a warm-up (the machine is shared, single runs are noisy). */
function time(label: string, run: () => void): number {
  run();
  const samples: number[] = [];
  for (let round = 0; round < 5; round += 1) {
    const started = performance.now();
    run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const elapsed = samples[2] ?? 0;
  console.log(`${label.padEnd(58)} ${elapsed.toFixed(1).padStart(9)} ms`);
  return elapsed;
}

function streamTokens(count: number, flushEvery: number): void {
  const model = new ChatModel();
  model.startFresh(SESSION, 'agent');
  const sync = new ViewSync();
  model.addPendingUser('go');
  model.applyEvent(event(1, { type: 'session:turn_started', userMessageSequence: 1 }));
  for (let index = 0; index < count; index += 1) {
    model.applyEvent(event(index + 2, { type: 'agent:token', token: 'word ', model: 'm' }));
    if (index % flushEvery === 0) {
      sync.diff(model.view());
    }
  }
  sync.diff(model.view());
}

function transcript(messages: number): SessionMessage[] {
  return Array.from({ length: messages }, (_, index) => ({
    id: `m${index + 1}`,
    sessionId: SESSION,
    sequenceNumber: index + 1,
    role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: [{ type: 'text' as const, text: `message ${index} `.repeat(40) }],
    timestamp: '2026-01-01T00:00:00Z',
  }));
}

function rebuild(messages: SessionMessage[]): void {
  const model = new ChatModel();
  model.beginLoading(SESSION);
  model.loadSession({
    record: {
      id: SESSION,
      agentSlug: 'agent',
      agentSnapshot: {},
      context: { workingDir: '/w', fsScopeTier: 'sandboxed' },
      status: 'idle',
      source: { kind: 'vscode', interactive: true },
      totals: { inputTokens: 0, outputTokens: 0, costMicrocents: 0 },
      messageCount: messages.length,
      turnCount: 0,
      createdAt: '',
      updatedAt: '',
    },
    messages,
    hasMore: false,
    lastEventSequence: 0,
  });
  new ViewSync().diff(model.view());
}

function shuffledBacklog(count: number): void {
  const model = new ChatModel();
  model.startFresh(SESSION, 'agent');
  model.applyEvent(event(1, { type: 'session:turn_started', userMessageSequence: 1 }));
  // Every other notification is lost; the backlog fills the holes.
  for (let sequence = 3; sequence <= count; sequence += 2) {
    model.applyEvent(event(sequence, { type: 'agent:token', token: 'x', model: 'm' }));
  }
  const backlog = Array.from({ length: count - 1 }, (_, index) =>
    event(index + 2, { type: 'agent:token', token: 'x', model: 'm' }),
  );
  model.applyBacklog(SESSION, backlog);
}

const answer = (kilobytes: number): string => {
  const unit =
    '## Heading\n\nSome **bold** and `code` and a [link](https://example.com).\n\n- item one\n- item two\n\n```ts\nconst x = 1;\n```\n\n';
  return unit.repeat(Math.ceil((kilobytes * 1024) / unit.length));
};

console.log('relavium vscode-client view-model benchmark (median of 5 runs)');
const page100 = transcript(100);
const page1000 = transcript(1_000);
const answer10 = answer(10);
const answer100 = answer(100);
const tokens10k = time('stream 10,000 tokens, patch every 20 tokens', () => {
  streamTokens(10_000, 20);
});
const tokens40k = time('stream 40,000 tokens, patch every 20 tokens', () => {
  streamTokens(40_000, 20);
});
console.log(`  per-token cost ratio 40k/10k (1.0 = linear): ${(tokens40k / tokens10k / 4).toFixed(2)}`);
const small = time('rebuild view from a 100-message transcript page', () => {
  rebuild(page100);
});
const large = time('rebuild view from a 1,000-message transcript', () => {
  rebuild(page1000);
});
console.log(`  ratio 1,000/100 messages: ${(large / small).toFixed(1)}x`);
time('apply a 5,000-event backlog over 2,500 buffered events', () => {
  shuffledBacklog(5_000);
});
const md10 = time('parse a 10 KB markdown answer', () => {
  parseMarkdown(answer10);
});
const md100 = time('parse a 100 KB markdown answer', () => {
  parseMarkdown(answer100);
});
console.log(`  ratio 100 KB/10 KB: ${(md100 / md10).toFixed(1)}x`);
