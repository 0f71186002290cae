/**
 * What a pseudoterminal showing a command's tool card must write next.
 *
 * The card keeps only the tail of the live output (`liveOutput`) and a running count of the
 * characters received (`liveOutputChars`), so the mirror writes exactly the characters that
 * arrived since its last look; once the call has a result it writes the result when no live
 * output was seen (or some was missed) and a closing line. Pure: no `vscode` import.
 */

import type { ToolItem } from '../shared/viewState';

/** Terminals want CRLF line ends. */
export function toTerminalText(text: string): string {
  return text.replace(/\r?\n/g, '\r\n');
}

export class TerminalMirror {
  private seen = 0;
  private ended = false;
  private lineOpen = false; // the last write did not end its line

  /** The text to write for the card's current state ('' when nothing is new). */
  next(card: ToolItem | undefined): string {
    if (this.ended || card === undefined) {
      return '';
    }
    let out = '';
    const total = card.liveOutputChars ?? 0;
    const live = card.liveOutput ?? '';
    if (total > this.seen && live !== '') {
      const fresh = total - this.seen;
      out += fresh < live.length ? live.slice(live.length - fresh) : live;
      this.seen = total;
    }
    if (card.state === 'succeeded' || card.state === 'failed') {
      const summary = card.outputSummary ?? '';
      if (this.seen === 0 || total > this.seen) {
        // Nothing streamed here, or the last pieces came with the result: show the result.
        out += (this.seen > 0 ? '\n…\n' : '') + summary;
      }
      if (out !== '' ? !out.endsWith('\n') : this.lineOpen) {
        out += '\n';
      }
      out += `── ${card.state} ──\n`;
      this.ended = true;
    }
    if (out !== '') {
      this.lineOpen = !out.endsWith('\n');
    }
    return toTerminalText(out);
  }

  /** Whether the closing line was written (nothing more will come). */
  get done(): boolean {
    return this.ended;
  }
}
