/**
 * Orders one session's event stream and detects gaps.
 *
 * The server stamps every event with a per-session `sequenceNumber` and keeps them all in a
 * durable log. Notifications can still be missed (a restart, a reload, a dropped message), so
 * the sequencer releases events strictly in order, buffers what arrives early, and asks for a
 * backlog fetch (`relavium/sessionEvents {afterSequence}`) when it sees a hole. Events it has
 * already released are dropped, so a backlog that overlaps live notifications never
 * duplicates anything.
 */

import type { SessionEvent } from '../protocol';

/** What the caller must do with an accepted event or backlog page. */
export interface SequencerOutput {
  /** Events to apply now, in sequence order. */
  ready: SessionEvent[];
  /** When set, fetch `sessionEvents {afterSequence: fetchAfter}` and pass it to `acceptBacklog`. */
  fetchAfter?: number;
}

/** Keeps early events for a while; past this many the oldest hole is given up on. */
const MAX_BUFFERED = 5000;

export class EventSequencer {
  private lastApplied: number | undefined;
  private readonly early = new Map<number, SessionEvent>();
  private backlogInFlight = false;

  /** The sequence of the last released event, or undefined before {@link start}. */
  get lastSequence(): number | undefined {
    return this.lastApplied;
  }

  /** Whether a backlog fetch has been requested and not yet answered. */
  get awaitingBacklog(): boolean {
    return this.backlogInFlight;
  }

  /**
   * Begin releasing events after `lastSequence` (the point the loaded state already covers).
   * Events buffered before this call are released or trigger a fetch as usual.
   */
  start(lastSequence: number): SequencerOutput {
    this.lastApplied = lastSequence;
    this.backlogInFlight = false;
    this.dropApplied();
    return this.drain();
  }

  /** Accept one live event. Before {@link start} every event is only buffered. */
  accept(event: SessionEvent): SequencerOutput {
    const sequence = event.sequenceNumber;
    if (this.lastApplied !== undefined && sequence <= this.lastApplied) {
      return { ready: [] };
    }
    if (!this.early.has(sequence)) {
      this.early.set(sequence, event);
    }
    if (this.lastApplied === undefined) {
      this.trimBuffer();
      return { ready: [] };
    }
    if (this.early.size > MAX_BUFFERED) {
      return this.skipHole();
    }
    return this.drain();
  }

  /**
   * Accept the answer to a requested backlog fetch. The durable log is authoritative: every
   * event in it past the last released one is applied in order, then buffered live events
   * continue. When the log had nothing new for a hole, the hole is skipped so the stream
   * never stalls.
   */
  acceptBacklog(events: readonly SessionEvent[]): SequencerOutput {
    this.backlogInFlight = false;
    if (this.lastApplied === undefined) {
      return { ready: [] };
    }
    const ready: SessionEvent[] = [];
    const sorted = [...events].sort((a, b) => a.sequenceNumber - b.sequenceNumber);
    for (const event of sorted) {
      if (event.sequenceNumber > this.lastApplied) {
        ready.push(event);
        this.lastApplied = event.sequenceNumber;
        this.early.delete(event.sequenceNumber);
      }
    }
    const progressed = ready.length > 0;
    this.dropApplied();
    const rest = progressed ? this.drain() : this.skipHole();
    return { ready: [...ready, ...rest.ready], fetchAfter: rest.fetchAfter };
  }

  /** A backlog fetch failed: skip the hole rather than freeze the view. */
  backlogFailed(): SequencerOutput {
    this.backlogInFlight = false;
    return this.skipHole();
  }

  /** Forget buffered events the released stream has already passed (after a jump). */
  private dropApplied(): void {
    const last = this.lastApplied;
    if (last === undefined) {
      return;
    }
    for (const sequence of [...this.early.keys()]) {
      if (sequence <= last) {
        this.early.delete(sequence);
      }
    }
  }

  /** Release buffered events that continue the stream; ask for a backlog at a hole. */
  private drain(): SequencerOutput {
    const ready: SessionEvent[] = [];
    if (this.lastApplied === undefined) {
      return { ready };
    }
    // Nothing at or below lastApplied is buffered here: accept() refuses such events and
    // every jump of lastApplied goes through dropApplied().
    let next = this.early.get(this.lastApplied + 1);
    while (next !== undefined) {
      ready.push(next);
      this.early.delete(next.sequenceNumber);
      this.lastApplied = next.sequenceNumber;
      next = this.early.get(this.lastApplied + 1);
    }
    if (this.early.size > 0 && !this.backlogInFlight) {
      this.backlogInFlight = true;
      return { ready, fetchAfter: this.lastApplied };
    }
    return { ready };
  }

  private skipHole(): SequencerOutput {
    if (this.early.size === 0 || this.lastApplied === undefined) {
      return { ready: [] };
    }
    this.lastApplied = Math.min(...this.early.keys()) - 1;
    this.dropApplied();
    return this.drain();
  }

  private trimBuffer(): void {
    while (this.early.size > MAX_BUFFERED) {
      this.early.delete(Math.min(...this.early.keys()));
    }
  }
}
