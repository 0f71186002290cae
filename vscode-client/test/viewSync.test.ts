import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatModel } from '../src/model/chatModel';
import { ViewSync } from '../src/model/viewSync';
import { SESSION, stamp, stampAll, token, turnStarted } from './fixtures';

describe('ViewSync', () => {
  it('sends everything first, then only changed items, and the order only when it moves', () => {
    const model = new ChatModel();
    model.startFresh(SESSION, 'agent');
    model.addPendingUser('hi');
    stampAll(1, [turnStarted(1), token('a')]).forEach((event) => model.applyEvent(event));
    const sync = new ViewSync();
    const first = sync.diff(model.view());
    assert.equal(first.full, true);
    assert.equal(first.upserts.length, 2);
    assert.deepEqual(
      first.order,
      model.items.map((item) => item.id),
    );

    model.applyEvent(stamp(3, token('b')));
    const second = sync.diff(model.view());
    assert.equal(second.full, false);
    assert.deepEqual(
      second.upserts.map((item) => item.kind),
      ['assistant'],
    );
    assert.equal(second.order, undefined);

    const third = sync.diff(model.view());
    assert.deepEqual(third.upserts, []);

    model.pushNotice('note');
    const fourth = sync.diff(model.view());
    assert.deepEqual(
      fourth.upserts.map((item) => item.kind),
      ['notice'],
    );
    assert.equal(fourth.order?.length, 3);

    sync.reset();
    const fifth = sync.diff(model.view());
    assert.equal(fifth.full, true);
    assert.equal(fifth.upserts.length, 3);
  });

  it('reports removals through the order', () => {
    const model = new ChatModel();
    model.startFresh(SESSION, 'agent');
    model.addPendingUser('x');
    const sync = new ViewSync();
    sync.diff(model.view());
    model.clear();
    const patch = sync.diff(model.view());
    assert.deepEqual(patch.order, []);
  });
});
