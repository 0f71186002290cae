/** Context chips: the selection or files attached to a message, shown by path. */

import type { AttachmentChip } from '../model/contextParts';
import { actionButton, element } from './dom';

const KIND_ICONS: Record<AttachmentChip['kind'], string> = { selection: '⌗', file: '📄' };

/** A row of chips; `removable` adds a × button that detaches the chip (composer only). */
export function renderChips(chips: readonly AttachmentChip[], removable: boolean): HTMLElement {
  const row = element('div', 'chips');
  for (const chip of chips) {
    const node = element('span', `chip chip-${chip.kind}`);
    node.title = chip.kind === 'selection' ? `Selection of ${chip.label}` : `File ${chip.label}`;
    node.append(
      element('span', 'chip-icon', KIND_ICONS[chip.kind]),
      element('span', 'chip-label', chip.label),
    );
    if (removable) {
      const remove = actionButton('×', 'detach', { id: chip.id }, 'chip-remove');
      remove.title = `Remove ${chip.label}`;
      remove.setAttribute('aria-label', `Remove ${chip.label}`);
      node.append(remove);
    }
    row.append(node);
  }
  row.hidden = chips.length === 0;
  return row;
}
