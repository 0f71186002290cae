/**
 * Context chips: the selection or files attached to a message, shown by path. In the composer
 * the active editor's file (or selection) leads as an implicit chip — it travels with the next
 * message unless its × switches it off.
 */

import type { AttachmentChip } from '../model/contextParts';
import { actionButton, element } from './dom';
import { icon } from './icons';

const KIND_TITLES: Record<AttachmentChip['kind'], string> = {
  selection: 'Selection of',
  file: 'File',
  active: 'The file open in the editor:',
};

function chip(item: AttachmentChip, remove: HTMLElement | undefined, implicit: boolean): HTMLElement {
  const node = element('span', `chip chip-${item.kind}${implicit ? ' implicit' : ''}`);
  node.title = implicit
    ? `${KIND_TITLES[item.kind]} ${item.label} — goes with your next message (× leaves it out)`
    : `${KIND_TITLES[item.kind]} ${item.label}`;
  node.append(
    icon(item.kind === 'selection' ? 'selection' : 'file', 'icon chip-icon'),
    element('span', 'chip-label', item.label),
  );
  if (implicit) {
    node.append(element('span', 'chip-note', item.kind === 'selection' ? 'selection' : 'current file'));
  }
  if (remove !== undefined) {
    node.append(remove);
  }
  return node;
}

function removeButton(action: string, data: Record<string, string>, label: string): HTMLElement {
  const remove = actionButton('', action, data, 'chip-remove');
  remove.append(icon('cross'));
  remove.title = `Remove ${label}`;
  remove.setAttribute('aria-label', `Remove ${label}`);
  return remove;
}

/** A row of chips; `removable` adds × buttons (composer only); `implicit` leads when given. */
export function renderChips(
  chips: readonly AttachmentChip[],
  removable: boolean,
  implicit?: AttachmentChip,
): HTMLElement {
  const row = element('div', 'chips');
  if (implicit !== undefined) {
    row.append(chip(implicit, removeButton('dismissImplicit', {}, implicit.label), true));
  }
  for (const item of chips) {
    row.append(
      chip(item, removable ? removeButton('detach', { id: item.id }, item.label) : undefined, false),
    );
  }
  row.hidden = chips.length === 0 && implicit === undefined;
  return row;
}
