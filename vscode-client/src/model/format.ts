/** Small, pure text helpers for the chat view: summaries, truncation, money and counts. */

import type { FileDiff, RewindResult } from '../protocol';
import type { ApprovalDiffView, ToolItem } from '../shared/viewState';

const INPUT_SUMMARY_CHARS = 160;
export const OUTPUT_SUMMARY_CHARS = 600;

/** Cut `text` to at most `max` characters, marking the cut with an ellipsis. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) {
    return text;
  }
  return `${text.slice(0, Math.max(0, max - 1))}…`;
}

function scalar(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) {
    return String(value);
  }
  // JSON.stringify yields undefined for undefined and functions, whatever its typing says.
  const json = JSON.stringify(value) as string | undefined;
  return json ?? '';
}

/** The size of a bulky value: a long string, or the server's `{length, head}` sanitized form. */
function bulkySize(value: unknown): number | undefined {
  if (typeof value === 'string') {
    return value.length > 40 ? value.length : undefined;
  }
  if (typeof value === 'object' && value !== null && 'length' in value) {
    const { length } = value;
    return typeof length === 'number' ? length : undefined;
  }
  return undefined;
}

/**
 * One line describing a tool call's input. Path- and command-like fields lead because they
 * are what a reviewer needs to see; bulky fields (file contents) are reduced to their size.
 */
export function summarizeToolInput(input: Record<string, unknown>): string {
  const pieces: string[] = [];
  const leading = ['path', 'command', 'url', 'query', 'pattern'];
  for (const key of leading) {
    if (key in input) {
      pieces.push(scalar(input[key]));
    }
  }
  const args = input.args;
  if (Array.isArray(args)) {
    pieces.push(args.map(scalar).join(' '));
  }
  for (const [key, value] of Object.entries(input)) {
    if (leading.includes(key) || key === 'args') {
      continue;
    }
    const size = bulkySize(value);
    if (size !== undefined) {
      pieces.push(`${key}: ${size} chars`);
    } else {
      pieces.push(`${key}: ${scalar(value)}`);
    }
  }
  return truncate(pieces.join('  ').replace(/\s+/g, ' ').trim(), INPUT_SUMMARY_CHARS);
}

/** Microcents (1e-6 cent) as dollars, with enough digits to show small per-turn costs. */
export function formatCost(microcents: number, priced: boolean): string {
  const dollars = microcents / 100_000_000;
  const digits = dollars !== 0 && dollars < 0.01 ? 4 : 2;
  const text = `$${dollars.toFixed(digits)}`;
  return priced ? text : `${text} (unpriced model)`;
}

/** A token count as people read it: 950, 12.3k, 4.1M. */
export function formatTokens(count: number): string {
  if (count < 1000) {
    return String(count);
  }
  if (count < 1_000_000) {
    return `${(count / 1000).toFixed(count < 10_000 ? 1 : 0)}k`;
  }
  return `${(count / 1_000_000).toFixed(1)}M`;
}

/** A duration in milliseconds as a short label. */
export function formatDuration(ms: number): string {
  if (ms < 1000) {
    return `${ms} ms`;
  }
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** The prompt-cache part of the input, as " (12.3k cached, 2.0k cache write)", or "". */
export function formatCache(usage: { cacheReadTokens?: number; cacheWriteTokens?: number }): string {
  const pieces: string[] = [];
  if (usage.cacheReadTokens) {
    pieces.push(`${formatTokens(usage.cacheReadTokens)} cached`);
  }
  if (usage.cacheWriteTokens) {
    pieces.push(`${formatTokens(usage.cacheWriteTokens)} cache write`);
  }
  return pieces.length > 0 ? ` (${pieces.join(', ')})` : '';
}

/** The view of a file change's diff (an approval request's, or a tool result's). */
export function diffView(diff: FileDiff): ApprovalDiffView {
  return {
    unified: diff.unified,
    added: diff.stat.added,
    removed: diff.stat.removed,
    truncated: diff.truncated,
  };
}

/**
 * The diff a tool card shows on its own: the change the tool made when nobody was asked about
 * it (e.g. after "always allow"); an approval section shows its change itself.
 */
export function shownChange(card: ToolItem): ApprovalDiffView | undefined {
  return card.approval === undefined ? card.diff : undefined;
}

/** What a rewind did, in one line for a notice. */
export function describeRewind(result: RewindResult): string {
  const parts = [`${result.restored.length + result.deleted.length} file(s) restored`];
  if (result.conflicts.length > 0) {
    parts.push(`left alone (you changed them since): ${result.conflicts.map((c) => c.path).join(', ')}`);
  }
  if (result.failed.length > 0) {
    parts.push(`not restored: ${result.failed.map((f) => `${f.path} (${f.reason})`).join(', ')}`);
  }
  return parts.join('; ');
}
