/**
 * Turns successive view states into small patches for the webview.
 *
 * Streaming changes one item many times a second; re-sending a long transcript each time
 * would be wasteful, so only items whose revision moved are sent, plus the id order when it
 * changed. {@link ViewSync.reset} forces a full patch (a new or reloaded webview).
 */

import type { ChatViewState, ViewPatch } from '../shared/viewState';

export class ViewSync {
  private sentRevisions = new Map<string, number>();
  private sentOrder: string[] = [];
  private needsFull = true;

  /** Forget what the webview has: the next patch carries everything. */
  reset(): void {
    this.needsFull = true;
  }

  /** The patch that brings the webview from what was last sent to `state`. */
  diff(state: ChatViewState): ViewPatch {
    const full = this.needsFull;
    if (full) {
      this.sentRevisions = new Map();
      this.sentOrder = [];
      this.needsFull = false;
    }
    const upserts = state.items.filter((item) => this.sentRevisions.get(item.id) !== item.rev);
    const order = state.items.map((item) => item.id);
    const orderChanged =
      full ||
      order.length !== this.sentOrder.length ||
      order.some((id, index) => id !== this.sentOrder[index]);
    this.sentRevisions = new Map(state.items.map((item) => [item.id, item.rev]));
    this.sentOrder = order;
    return {
      full,
      header: state.header,
      footer: state.footer,
      connection: state.connection,
      attachments: [...state.attachments],
      composer: state.composer,
      upserts: upserts.map((item) => ({ ...item })),
      order: orderChanged ? order : undefined,
    };
  }
}
