/**
 * Chat items → what the webview lays out.
 *
 * Two rules keep the conversation readable: a call whose card would repeat another item
 * (`update_plan`, shown by the plan card) is left out once it succeeded, and two or more
 * consecutive read-only calls that finished are one group line ("Read 2 files, searched 1
 * pattern") that expands to the calls. A group keeps the id of its first call, so it stays
 * put while calls join it.
 */

import type { ChatItem, DisplayItem, ToolGroupItem, ToolItem } from '../shared/viewState';
import { isShownElsewhere } from './toolTitles';

/** Past this many members a group's revision would collide with another's: keep it simple. */
const MAX_GROUP_REVISION_SPREAD = 1024;

function groupable(item: ChatItem): item is ToolItem {
  return item.kind === 'tool' && item.readOnly && item.state === 'succeeded' && item.approval === undefined;
}

function hidden(item: ChatItem): boolean {
  return item.kind === 'tool' && isShownElsewhere(item.toolId) && item.state === 'succeeded';
}

/** A group's revision moves whenever a member changes, joins or leaves. */
function groupRevision(tools: readonly ToolItem[]): number {
  const newest = Math.max(...tools.map((tool) => tool.rev));
  return newest * MAX_GROUP_REVISION_SPREAD + Math.min(tools.length, MAX_GROUP_REVISION_SPREAD - 1);
}

function flush(run: ToolItem[], out: DisplayItem[]): void {
  const first = run[0];
  if (first === undefined) {
    return;
  }
  if (run.length === 1) {
    out.push(first);
  } else {
    const group: ToolGroupItem = {
      kind: 'toolGroup',
      id: `group:${first.id}`,
      rev: groupRevision(run),
      tools: [...run],
    };
    out.push(group);
  }
  run.length = 0;
}

/** The items in display order, grouped and filtered as the module doc says. */
export function displayItems(items: readonly ChatItem[]): DisplayItem[] {
  const out: DisplayItem[] = [];
  const run: ToolItem[] = [];
  for (const item of items) {
    if (hidden(item)) {
      continue;
    }
    if (groupable(item)) {
      run.push(item);
      continue;
    }
    flush(run, out);
    out.push(item);
  }
  flush(run, out);
  return out;
}
