/**
 * The agent's plan (`update_plan`) as one checklist item in the chat.
 *
 * There is at most one plan item. Each `agent:plan_updated` replaces its entries and moves it
 * to the bottom, next to what the agent is doing now; an empty plan removes it. Opening a
 * stored session shows the plan `resumeSession` returned.
 */

import type { PlanEntry } from '../protocol';
import type { ChatItem, PlanItem } from '../shared/viewState';

export const PLAN_ITEM_ID = 'plan';

/** The parts of the view-model the plan touches. */
export interface PlanContext {
  items: ChatItem[];
  nextRev(): number;
}

/** Replace the shown plan (an empty list removes it). */
export function showPlan(ctx: PlanContext, entries: readonly PlanEntry[], explanation?: string): void {
  ctx.items = ctx.items.filter((item) => item.id !== PLAN_ITEM_ID);
  if (entries.length === 0) {
    return;
  }
  const item: PlanItem = {
    kind: 'plan',
    id: PLAN_ITEM_ID,
    rev: ctx.nextRev(),
    entries: entries.map((entry) => ({
      content: entry.content,
      status: entry.status,
      priority: entry.priority,
    })),
    ...(explanation === undefined ? {} : { explanation }),
  };
  ctx.items.push(item);
}

/** "2/5 done": the plan's progress in a few characters. */
export function planProgress(item: PlanItem): string {
  const done = item.entries.filter((entry) => entry.status === 'completed').length;
  return `${done}/${item.entries.length} done`;
}
