import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SetWorkspaceMemoryParams, WorkspaceMemory, WorkspaceMemoryParams } from '../src/protocol';
import {
  MEMORY_FILE_NAME,
  MemoryConflict,
  MemoryFiles,
  memoryPathOf,
  workingDirOf,
  type MemoryBackend,
} from '../src/model/workspaceMemory';

/** A server stand-in with the server's compare-and-swap rule. */
class FakeServer implements MemoryBackend {
  text = '';
  revision = 0;
  gets: WorkspaceMemoryParams[] = [];
  sets: SetWorkspaceMemoryParams[] = [];

  get(params: WorkspaceMemoryParams): Promise<WorkspaceMemory> {
    this.gets.push(params);
    return Promise.resolve(this.current());
  }

  set(params: SetWorkspaceMemoryParams): Promise<WorkspaceMemory> {
    this.sets.push(params);
    if (params.baseRevision !== this.revision) {
      return Promise.reject(Object.assign(new Error('changed meanwhile'), { code: 'memory_conflict' }));
    }
    this.saveElsewhere(params.text);
    return Promise.resolve(this.current());
  }

  /** Another window's save. */
  saveElsewhere(text: string): number {
    this.text = text;
    this.revision += 1;
    return this.revision;
  }

  private current(): WorkspaceMemory {
    return {
      workspace: '/real/repo',
      text: this.text,
      revision: this.revision,
      maxChars: 32000,
      history: [],
    };
  }
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (content: Uint8Array): string => new TextDecoder().decode(content);

describe('workspace memory files', () => {
  it('maps a folder to its memory file and back', () => {
    assert.equal(memoryPathOf('/home/u/repo/'), `/home/u/repo/${MEMORY_FILE_NAME}`);
    assert.equal(workingDirOf(memoryPathOf('/home/u/repo')), '/home/u/repo');
    assert.equal(workingDirOf(`/${MEMORY_FILE_NAME}`), '/');
    assert.equal(workingDirOf('/home/u/repo/other.md'), undefined);
  });

  it('reads and saves on top of the revision it read', async () => {
    const server = new FakeServer();
    const files = new MemoryFiles(server);
    assert.deepEqual(await files.stat('/repo'), { revision: 0, size: 0 });
    assert.equal(text(await files.read('/repo')), '');
    const saved = await files.write('/repo', bytes('## Build\n- make test\n'));
    assert.equal(saved.revision, 1);
    assert.deepEqual(server.sets[0], {
      workingDir: '/repo',
      text: '## Build\n- make test\n',
      baseRevision: 0,
    });
    await files.write('/repo', bytes('## Build\n- make unit\n'));
    assert.equal(server.sets[1]?.baseRevision, 1);
    assert.deepEqual(await files.stat('/repo'), { revision: 2, size: 21 });
    assert.equal(server.gets.length, 2, 'the last stat answered from what it knew');
  });

  it('refuses a save based on an older revision and keeps the base until a read', async () => {
    const server = new FakeServer();
    const files = new MemoryFiles(server);
    await files.read('/repo');
    const elsewhere = server.saveElsewhere('their text\n');
    // The notification: VS Code is told the file changed, and stat shows the newer revision.
    assert.deepEqual(files.changed({ workspace: '/real/repo', revision: elsewhere, source: 'user' }), [
      '/repo',
    ]);
    assert.deepEqual(files.changed({ workspace: '/real/repo', revision: elsewhere, source: 'user' }), []);
    assert.deepEqual(files.changed({ workspace: '/other', revision: 9, source: 'user' }), []);
    assert.equal((await files.stat('/repo')).revision, 1);
    assert.equal(files.baseOf('/repo'), 0);
    await assert.rejects(files.write('/repo', bytes('my text\n')), MemoryConflict);
    assert.equal(server.text, 'their text\n');
    // Reverting reads the newer text; saving on top of it works.
    assert.equal(text(await files.read('/repo')), 'their text\n');
    await files.write('/repo', bytes('their text\nmy text\n'));
    assert.equal(server.text, 'their text\nmy text\n');
    assert.equal(files.baseOf('/repo'), 2);
  });

  it('passes other server errors through', async () => {
    const server = new FakeServer();
    server.set = () => Promise.reject(Object.assign(new Error('looks like a key'), { code: 'validation' }));
    const files = new MemoryFiles(server);
    await assert.rejects(files.write('/repo', bytes('x')), /looks like a key/);
  });
});
