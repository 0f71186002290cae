/** The plan item → a checklist (done steps ticked, the current one marked as in progress). */

import { planProgress } from '../model/plan';
import type { PlanItem } from '../shared/viewState';
import { element } from './dom';
import { icon } from './icons';

const MARKS = { pending: 'circle', in_progress: 'progress', completed: 'check' } as const;
const LABELS = { pending: 'to do', in_progress: 'in progress', completed: 'done' } as const;

/** Build the checklist element for the plan item. */
export function renderPlan(item: PlanItem): HTMLElement {
  const node = element('div', 'plan-card');
  const head = element('div', 'plan-head');
  head.append(element('span', 'plan-title', 'Plan'), element('span', 'plan-progress', planProgress(item)));
  node.append(head);
  if (item.explanation !== undefined && item.explanation !== '') {
    node.append(element('div', 'plan-explanation', item.explanation));
  }
  const list = element('ul', 'plan-entries');
  list.setAttribute('role', 'list');
  for (const entry of item.entries) {
    const row = element('li', `plan-entry status-${entry.status} priority-${entry.priority}`);
    row.title = LABELS[entry.status];
    row.append(icon(MARKS[entry.status], 'icon plan-mark'), element('span', 'plan-text', entry.content));
    list.append(row);
  }
  node.append(list);
  return node;
}
