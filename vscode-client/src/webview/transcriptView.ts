/**
 * Applies view patches to the transcript list: replaces changed items, keeps the order the
 * host sent, preserves which foldable sections the user opened, and follows the bottom while
 * the user is reading there.
 */

import type { ChatItem, ViewPatch } from '../shared/viewState';
import { renderItem, type ItemContext } from './items';

/** Pixels from the bottom within which the view keeps following new output. */
const FOLLOW_THRESHOLD = 48;

export class TranscriptView {
  private readonly nodes = new Map<string, HTMLElement>();
  private readonly items = new Map<string, ChatItem>();
  private context: ItemContext = { canFork: false, canApply: false };

  constructor(
    private readonly scroller: HTMLElement,
    private readonly list: HTMLElement,
  ) {}

  /** The text of a message (for "Copy"). */
  textOf(itemId: string): string {
    const item = this.items.get(itemId);
    return item?.kind === 'user' || item?.kind === 'assistant' ? item.text : '';
  }

  /** The newest user message's text (Up in an empty composer recalls it). */
  lastUserText(): string | undefined {
    let text: string | undefined;
    for (const node of this.list.children) {
      const item = this.items.get((node as HTMLElement).dataset.itemId ?? '');
      if (item?.kind === 'user') {
        text = item.text;
      }
    }
    return text;
  }

  /** Apply one patch from the host. */
  apply(patch: ViewPatch, context: ItemContext): void {
    const following =
      this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight < FOLLOW_THRESHOLD;
    if (patch.full) {
      this.nodes.clear();
      this.items.clear();
      this.list.replaceChildren();
    }
    const contextChanged =
      context.canFork !== this.context.canFork || context.canApply !== this.context.canApply;
    this.context = context;
    for (const item of patch.upserts) {
      this.items.set(item.id, item);
      this.render(item);
    }
    if (contextChanged) {
      for (const item of this.items.values()) {
        if (item.kind === 'user' || item.kind === 'assistant') {
          this.render(item);
        }
      }
    }
    if (patch.order !== undefined) {
      this.reorder(patch.order);
    }
    this.trackLastUser();
    if (following || patch.full) {
      this.scroller.scrollTop = this.scroller.scrollHeight;
    }
  }

  /** "Retry" sits on the newest user message: move it when another one arrives. */
  private trackLastUser(): void {
    let last: string | undefined;
    for (const node of this.list.children) {
      const id = (node as HTMLElement).dataset.itemId ?? '';
      if (this.items.get(id)?.kind === 'user') {
        last = id;
      }
    }
    const previous = this.context.lastUserId;
    if (last === previous) {
      return;
    }
    this.context = { ...this.context, lastUserId: last };
    for (const id of [previous, last]) {
      const item = id === undefined ? undefined : this.items.get(id);
      if (item !== undefined) {
        this.render(item);
      }
    }
  }

  private render(item: ChatItem): void {
    const fresh = renderItem(item, this.context);
    const previous = this.nodes.get(item.id);
    if (previous !== undefined) {
      for (const details of previous.querySelectorAll<HTMLDetailsElement>('details[data-key]')) {
        const twin = fresh.querySelector<HTMLDetailsElement>(
          `details[data-key="${details.dataset.key ?? ''}"]`,
        );
        if (twin !== null) {
          twin.open = details.open;
        }
      }
      previous.replaceWith(fresh);
    }
    this.nodes.set(item.id, fresh);
  }

  private reorder(order: readonly string[]): void {
    const keep = new Set(order);
    for (const [id, node] of this.nodes) {
      if (!keep.has(id)) {
        node.remove();
        this.nodes.delete(id);
        this.items.delete(id);
      }
    }
    let cursor = this.list.firstElementChild;
    for (const id of order) {
      const node = this.nodes.get(id);
      if (node === undefined) {
        continue;
      }
      if (node === cursor) {
        cursor = cursor.nextElementSibling;
      } else {
        this.list.insertBefore(node, cursor);
      }
    }
  }
}
