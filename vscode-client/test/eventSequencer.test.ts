import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventSequencer } from '../src/model/eventSequencer';
import { stamp, token } from './fixtures';

const seqs = (events: readonly { sequenceNumber: number }[]): number[] =>
  events.map((event) => event.sequenceNumber);

describe('EventSequencer', () => {
  it('releases in-order events immediately', () => {
    const sequencer = new EventSequencer();
    sequencer.start(0);
    assert.deepEqual(seqs(sequencer.accept(stamp(1, token('a'))).ready), [1]);
    assert.deepEqual(seqs(sequencer.accept(stamp(2, token('b'))).ready), [2]);
    assert.equal(sequencer.lastSequence, 2);
  });

  it('drops duplicates and events at or below the start point', () => {
    const sequencer = new EventSequencer();
    sequencer.start(5);
    assert.deepEqual(sequencer.accept(stamp(5, token('old'))).ready, []);
    assert.deepEqual(seqs(sequencer.accept(stamp(6, token('new'))).ready), [6]);
    assert.deepEqual(sequencer.accept(stamp(6, token('again'))).ready, []);
  });

  it('asks for a backlog once when a sequence number skips, then fills the hole without duplicates', () => {
    const sequencer = new EventSequencer();
    sequencer.start(3);
    const first = sequencer.accept(stamp(6, token('f')));
    assert.deepEqual(first.ready, []);
    assert.equal(first.fetchAfter, 3);
    const second = sequencer.accept(stamp(7, token('g')));
    assert.equal(second.fetchAfter, undefined, 'one fetch in flight at a time');
    assert.equal(sequencer.awaitingBacklog, true);
    // The backlog overlaps what is buffered (6) and what is already applied (3).
    const filled = sequencer.acceptBacklog([
      stamp(3, token('c')),
      stamp(4, token('d')),
      stamp(5, token('e')),
      stamp(6, token('f')),
    ]);
    assert.deepEqual(seqs(filled.ready), [4, 5, 6, 7]);
    assert.equal(filled.fetchAfter, undefined);
    assert.equal(sequencer.lastSequence, 7);
  });

  it('fetches again when a backlog page stops short of the buffered events', () => {
    const sequencer = new EventSequencer();
    sequencer.start(0);
    assert.equal(sequencer.accept(stamp(10, token('j'))).fetchAfter, 0);
    const partial = sequencer.acceptBacklog([stamp(1, token('a')), stamp(2, token('b'))]);
    assert.deepEqual(seqs(partial.ready), [1, 2]);
    assert.equal(partial.fetchAfter, 2);
  });

  it('skips a hole the durable log cannot fill instead of stalling', () => {
    const sequencer = new EventSequencer();
    sequencer.start(1);
    sequencer.accept(stamp(4, token('d')));
    const result = sequencer.acceptBacklog([]);
    assert.deepEqual(seqs(result.ready), [4]);
    assert.equal(sequencer.lastSequence, 4);
  });

  it("steps over a killed owner's skipped numbers: the first event past them is applied", () => {
    // The owning window delivered 1..5 and was killed; the window that took its lease over
    // numbers past everything the dead owner reserved (docs/design.md §3.1), never 4 or 5 again.
    const sequencer = new EventSequencer();
    sequencer.start(0);
    for (let n = 1; n <= 5; n += 1) {
      sequencer.accept(stamp(n, token(`t${n}`)));
    }
    const early = sequencer.accept(stamp(1002, token('after the takeover')));
    assert.deepEqual(early.ready, []);
    assert.equal(early.fetchAfter, 5);
    // The log has nothing in the hole (the dead owner wrote only up to 3, all applied already).
    const stepped = sequencer.acceptBacklog([stamp(3, token('t3'))]);
    assert.deepEqual(seqs(stepped.ready), [1002]);
    assert.equal(stepped.fetchAfter, undefined);
    assert.deepEqual(seqs(sequencer.accept(stamp(1003, token('next'))).ready), [1003]);
  });

  it('skips the hole when the backlog request fails', () => {
    const sequencer = new EventSequencer();
    sequencer.start(0);
    sequencer.accept(stamp(2, token('b')));
    sequencer.accept(stamp(3, token('c')));
    assert.deepEqual(seqs(sequencer.backlogFailed().ready), [2, 3]);
  });

  it('buffers everything before start and releases it afterwards', () => {
    const sequencer = new EventSequencer();
    assert.deepEqual(sequencer.accept(stamp(2, token('b'))).ready, []);
    assert.deepEqual(sequencer.accept(stamp(3, token('c'))).ready, []);
    const started = sequencer.start(2);
    assert.deepEqual(seqs(started.ready), [3]);
    assert.equal(started.fetchAfter, undefined);
  });

  it('requests a fetch at start when buffered events leave a hole', () => {
    const sequencer = new EventSequencer();
    sequencer.accept(stamp(9, token('i')));
    const started = sequencer.start(4);
    assert.deepEqual(started.ready, []);
    assert.equal(started.fetchAfter, 4);
  });

  it('orders a shuffled backlog', () => {
    const sequencer = new EventSequencer();
    sequencer.start(0);
    sequencer.accept(stamp(5, token('e')));
    const result = sequencer.acceptBacklog([
      stamp(3, token('c')),
      stamp(1, token('a')),
      stamp(4, token('d')),
      stamp(2, token('b')),
    ]);
    assert.deepEqual(seqs(result.ready), [1, 2, 3, 4, 5]);
  });
});
