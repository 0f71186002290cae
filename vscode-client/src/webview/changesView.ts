/**
 * The review card of a turn's changes: "2 files changed +3 −1", each file with its counts —
 * a click opens its diff against the turn's checkpoint — and Keep / Undo per file and for all
 * (docs/design.md §6.4).
 */

import { baseName } from '../model/toolTitles';
import type { TurnChangedFile } from '../protocol';
import type { ChangesItem } from '../shared/viewState';
import { actionButton, element } from './dom';
import { icon } from './icons';

const REVIEW_LABELS = { kept: 'kept', undone: 'undone' } as const;

function directory(path: string): string {
  const name = baseName(path);
  return path.length > name.length ? path.slice(0, path.length - name.length).replace(/[\\/]$/, '') : '';
}

/** Keep / Undo for one file (`path`) or, without it, for every file of the turn. */
function reviewButtons(item: ChangesItem, path: string | undefined): HTMLElement[] {
  const data = { seq: String(item.userSequence), ...(path === undefined ? {} : { path }) };
  const all = path === undefined;
  const keep = actionButton(
    all ? 'Keep all' : '',
    'reviewChanges',
    { ...data, decision: 'keep' },
    'review-button',
  );
  keep.prepend(icon('check'));
  keep.title = all ? 'Keep every change of this turn' : `Keep the change to ${path}`;
  const undo = actionButton(
    all ? 'Undo all' : '',
    'reviewChanges',
    { ...data, decision: 'undo' },
    'review-button',
  );
  undo.prepend(icon('undo'));
  undo.title = all
    ? 'Put every file back as it was before this turn (files you changed since are left alone)'
    : `Undo: put ${path} back as it was before this turn`;
  for (const button of [keep, undo]) {
    button.disabled = item.busy;
    button.setAttribute('aria-label', button.title);
  }
  return [keep, undo];
}

function fileRow(item: ChangesItem, file: TurnChangedFile): HTMLElement {
  const row = element('li', `changes-file review-${file.review}`);
  const open = actionButton(
    '',
    'openChange',
    { seq: String(item.userSequence), path: file.path },
    'changes-open',
  );
  open.title = `Open the diff of ${file.path} against the turn's checkpoint`;
  open.append(icon('file'), element('span', 'changes-name', baseName(file.path)));
  const where = directory(file.path);
  if (where !== '') {
    open.append(element('span', 'changes-dir', where));
  }
  open.setAttribute('aria-label', `${file.path}: open its diff`);
  row.append(open);
  const flags = [file.created ? 'new' : '', file.deleted ? 'deleted' : ''].filter(Boolean).join(', ');
  if (flags !== '') {
    row.append(element('span', 'changes-flag', flags));
  }
  row.append(element('span', 'changes-stat', `+${file.added} −${file.removed}`));
  if (file.review === 'pending') {
    const buttons = element('span', 'changes-actions');
    buttons.append(...reviewButtons(item, file.path));
    row.append(buttons);
  } else {
    row.append(element('span', 'changes-review', REVIEW_LABELS[file.review]));
  }
  return row;
}

/** The card. */
export function renderChanges(item: ChangesItem): HTMLElement {
  const node = element('div', 'changes-card');
  const added = item.files.reduce((sum, file) => sum + file.added, 0);
  const removed = item.files.reduce((sum, file) => sum + file.removed, 0);
  const count = item.files.length;
  const head = element('div', 'changes-head');
  head.append(
    element('span', 'changes-title', `${count} file${count === 1 ? '' : 's'} changed`),
    element('span', 'changes-stat', `+${added} −${removed}`),
  );
  const pending = item.files.filter((file) => file.review === 'pending').length;
  if (pending === 0) {
    head.append(element('span', 'changes-review', 'reviewed'));
  }
  node.append(head);
  const list = element('ul', 'changes-files');
  list.append(...item.files.map((file) => fileRow(item, file)));
  node.append(list);
  if (pending > 1) {
    const all = element('div', 'changes-actions changes-all');
    all.append(...reviewButtons(item, undefined));
    node.append(all);
  }
  return node;
}
