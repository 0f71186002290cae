/**
 * Applies view patches to the transcript list: replaces changed items, keeps the order the
 * host sent, preserves which foldable sections the user opened, and follows the bottom while
 * the user is reading there.
 *
 * Long chats stay fast: a patch touches only the items it carries (a streamed token re-renders
 * one message), whether a turn runs is a class on the list (no re-render of every message
 * when a turn starts or ends), and the items sit in blocks of {@link CHUNK} that the browser
 * neither lays out nor paints while out of view (`.chunk`, `content-visibility` in chat.css).
 * Blocks, not items: a list of 2,000 boxes costs a layout pass over 2,000 boxes on every
 * token even when they are skipped, about 10 ms here; 80 blocks cost a fraction of that.
 * Because blocks get their real height only when they scroll into view, "follow the bottom"
 * is a state — set by where the user scrolled — that a resize observer keeps true, not a
 * one-off scroll after each patch.
 */

import type { DisplayItem, ViewPatch } from '../shared/viewState';
import { element } from './dom';
import { renderItem, updateStreamingAnswer, type ItemContext } from './items';

/** Items per block (the unit skipped while out of view). */
const CHUNK = 10;

/** The foldable sections of an item's element (itself included), by key and position. */
function foldables(root: HTMLElement): Map<string, HTMLDetailsElement> {
  const found = new Map<string, HTMLDetailsElement>();
  const all = [root, ...root.querySelectorAll<HTMLElement>('details[data-key]')];
  for (const node of all) {
    if (node instanceof HTMLDetailsElement && node.dataset.key !== undefined) {
      const owner = node.closest<HTMLElement>('[data-call-id]')?.dataset.callId ?? '';
      let key = `${owner}/${node.dataset.key}`;
      while (found.has(key)) {
        key += '+';
      }
      found.set(key, node);
    }
  }
  return found;
}

function foldStates(root: HTMLElement): Map<string, boolean> {
  return new Map([...foldables(root)].map(([key, details]) => [key, details.open]));
}

/** Pixels from the bottom within which the view keeps following new output. */
const FOLLOW_THRESHOLD = 48;

export class TranscriptView {
  private readonly nodes = new Map<string, HTMLElement>();
  private readonly items = new Map<string, DisplayItem>();
  /** The item ids in display order, and the blocks holding them. */
  private order: readonly string[] = [];
  private readonly chunks: HTMLElement[] = [];
  private context: ItemContext = {};
  /** Whether the view keeps the newest output in sight (the user is at the bottom). */
  private following = true;

  constructor(
    private readonly scroller: HTMLElement,
    private readonly list: HTMLElement,
  ) {
    scroller.addEventListener(
      'scroll',
      () => {
        this.following =
          scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < FOLLOW_THRESHOLD;
      },
      { passive: true },
    );
    new ResizeObserver(() => {
      this.keepFollowing();
    }).observe(list);
  }

  private keepFollowing(): void {
    if (this.following) {
      this.scroller.scrollTop = this.scroller.scrollHeight;
    }
  }

  /** The text of a message (for "Copy"). */
  textOf(itemId: string): string {
    const item = this.items.get(itemId);
    return item?.kind === 'user' || item?.kind === 'assistant' ? item.text : '';
  }

  /** The newest user message's text (Up in an empty composer recalls it). */
  lastUserText(): string | undefined {
    const id = this.order.findLast((candidate) => this.items.get(candidate)?.kind === 'user');
    const item = id === undefined ? undefined : this.items.get(id);
    return item?.kind === 'user' ? item.text : undefined;
  }

  /** Whether nothing is shown. */
  get empty(): boolean {
    return this.order.length === 0;
  }

  /** Apply one patch from the host; `running`: a turn runs, `hasSession`: a chat exists. */
  apply(patch: ViewPatch, state: { running: boolean; hasSession: boolean }): void {
    if (patch.full) {
      this.nodes.clear();
      this.items.clear();
      this.order = [];
      this.chunks.length = 0;
      this.list.replaceChildren();
      this.following = true;
    }
    const order = patch.order ?? this.order;
    this.list.classList.toggle('running', state.running);
    this.list.classList.toggle('no-apply', state.running || !state.hasSession);
    let users = patch.full || patch.order !== undefined;
    for (const item of patch.upserts) {
      this.items.set(item.id, item);
      this.render(item, order);
      users ||= item.kind === 'user';
    }
    if (patch.order !== undefined) {
      this.reorder(patch.order);
    }
    if (users) {
      this.trackLastUser();
    }
    this.keepFollowing();
  }

  /** "Retry" sits on the newest user message: move it when another one arrives. */
  private trackLastUser(): void {
    const last = this.order.findLast((id) => this.items.get(id)?.kind === 'user');
    const previous = this.context.lastUserId;
    if (last === previous) {
      return;
    }
    this.context = { ...this.context, lastUserId: last };
    for (const id of [previous, last]) {
      const item = id === undefined ? undefined : this.items.get(id);
      if (item !== undefined) {
        this.render(item, this.order);
      }
    }
  }

  private render(item: DisplayItem, order: readonly string[]): void {
    const previous = this.nodes.get(item.id);
    if (item.kind === 'assistant' && previous !== undefined && updateStreamingAnswer(previous, item)) {
      return; // a token: the answer's text only
    }
    const fresh = renderItem(item, this.context);
    if (item.kind === 'assistant') {
      // Text after the agent's tool calls continues the same answer: one header per answer.
      const before = order[order.indexOf(item.id) - 1];
      const previousKind = before === undefined ? undefined : this.items.get(before)?.kind;
      fresh.classList.toggle('continued', previousKind !== undefined && previousKind !== 'user');
    }
    if (previous !== undefined) {
      // What the user unfolded stays unfolded (and the reverse) across re-renders.
      const opened = foldStates(previous);
      for (const [key, details] of foldables(fresh)) {
        const open = opened.get(key);
        if (open !== undefined) {
          details.open = open;
        }
      }
      previous.replaceWith(fresh);
    }
    this.nodes.set(item.id, fresh);
  }

  /** Put every item in its block, in order (only what moved is touched). */
  private reorder(order: readonly string[]): void {
    const keep = new Set(order);
    for (const [id, node] of this.nodes) {
      if (!keep.has(id)) {
        node.remove();
        this.nodes.delete(id);
        this.items.delete(id);
      }
    }
    this.order = [...order];
    const needed = Math.ceil(order.length / CHUNK);
    while (this.chunks.length < needed) {
      const chunk = element('div', 'chunk');
      this.list.append(chunk);
      this.chunks.push(chunk);
    }
    this.chunks.forEach((chunk, index) => {
      // Nodes still after the cursor belong to later blocks: they move when those are placed.
      let cursor = chunk.firstElementChild;
      for (const id of order.slice(index * CHUNK, (index + 1) * CHUNK)) {
        const node = this.nodes.get(id);
        if (node === undefined) {
          continue;
        }
        if (node === cursor) {
          cursor = cursor.nextElementSibling;
        } else {
          chunk.insertBefore(node, cursor);
        }
      }
    });
    while (this.chunks.length > needed) {
      this.chunks.pop()?.remove();
    }
  }
}
