import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ALLOWED_BROAD_DIRS_KEY,
  BroadDirNotAllowed,
  BroadWorkingDirConsent,
  type BroadDirAnswer,
  type ConsentState,
} from '../src/model/broadWorkingDir';

/** The server's rule: a session at the home directory needs `allowBroadWorkingDir`. */
function fakeServer(workingDir: string): { calls: boolean[]; start: (allow: boolean) => Promise<string> } {
  const calls: boolean[] = [];
  return {
    calls,
    start(allow: boolean): Promise<string> {
      calls.push(allow);
      if (allow) {
        return Promise.resolve('session-1');
      }
      const refused = Object.assign(new Error(`workingDir ${workingDir} is the home directory`), {
        code: 'broad_working_dir',
        data: { code: 'broad_working_dir', workingDir, reason: 'the home directory' },
      });
      return Promise.reject(refused);
    },
  };
}

class MemoryState implements ConsentState {
  readonly values = new Map<string, unknown>();
  get(key: string): unknown {
    return this.values.get(key);
  }
  update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
    return Promise.resolve();
  }
}

function prompt(answer: BroadDirAnswer): {
  asked: string[];
  opened: number;
  ask: (dir: string) => Promise<BroadDirAnswer>;
  openFolder: () => Promise<void>;
} {
  const record = {
    asked: [] as string[],
    opened: 0,
    ask(dir: string): Promise<BroadDirAnswer> {
      record.asked.push(dir);
      return Promise.resolve(answer);
    },
    openFolder(): Promise<void> {
      record.opened += 1;
      return Promise.resolve();
    },
  };
  return record;
}

describe('a session at the home directory', () => {
  it('asks, retries with the yes, and remembers it in the workspace state', async () => {
    const state = new MemoryState();
    const server = fakeServer('/home/ada');
    const allow = prompt('allow');
    const consent = new BroadWorkingDirConsent(state, allow);
    assert.equal(await consent.start(server.start), 'session-1');
    assert.deepEqual(server.calls, [false, true]);
    assert.deepEqual(allow.asked, ['/home/ada']);
    assert.deepEqual(state.get(ALLOWED_BROAD_DIRS_KEY), ['/home/ada']);

    // The next chat in this workspace is not asked again.
    const again = fakeServer('/home/ada');
    assert.equal(await new BroadWorkingDirConsent(state, allow).start(again.start), 'session-1');
    assert.deepEqual(allow.asked, ['/home/ada']);
    assert.deepEqual(again.calls, [false, true]);
  });

  it('a different directory is asked about on its own', async () => {
    const state = new MemoryState();
    await state.update(ALLOWED_BROAD_DIRS_KEY, ['/home/ada']);
    const deny = prompt(undefined);
    const server = fakeServer('/');
    await assert.rejects(new BroadWorkingDirConsent(state, deny).start(server.start), BroadDirNotAllowed);
    assert.deepEqual(deny.asked, ['/']);
    assert.deepEqual(server.calls, [false]);
    assert.deepEqual(state.get(ALLOWED_BROAD_DIRS_KEY), ['/home/ada']);
  });

  it('"open a project folder" starts nothing, opens the folder picker and remembers nothing', async () => {
    const state = new MemoryState();
    const open = prompt('openFolder');
    const server = fakeServer('/home/ada');
    await assert.rejects(new BroadWorkingDirConsent(state, open).start(server.start), (error: unknown) => {
      assert.ok(error instanceof BroadDirNotAllowed);
      assert.equal(error.code, 'broad_working_dir');
      assert.match(error.message, /open a project folder/);
      return true;
    });
    assert.equal(open.opened, 1);
    assert.deepEqual(server.calls, [false]);
    assert.equal(state.get(ALLOWED_BROAD_DIRS_KEY), undefined);
  });

  it('other errors pass through without a question', async () => {
    const ask = prompt('allow');
    const failing = (): Promise<string> =>
      Promise.reject(Object.assign(new Error('down'), { code: 'internal' }));
    await assert.rejects(new BroadWorkingDirConsent(new MemoryState(), ask).start(failing), /down/);
    assert.deepEqual(ask.asked, []);
  });
});
