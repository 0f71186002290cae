/**
 * The workspace's long-term memory as a file (pure: no `vscode` import, unit-tested).
 *
 * `relavium-memory:/<workspace folder>/Workspace Memory.md` stands for the memory of that
 * folder; {@link MemoryFiles} reads it with `relavium/getWorkspaceMemory` and saves it with
 * `relavium/setWorkspaceMemory` on top of the revision it read, so a save never overwrites
 * what another window (or an introspection checkpoint) saved meanwhile: that save fails with
 * {@link MemoryConflict}. The file's mtime is its revision, so VS Code itself notices a newer
 * one (`relavium/workspaceMemoryChanged` → a file change event) before the user saves.
 */

import type {
  SetWorkspaceMemoryParams,
  WorkspaceMemory,
  WorkspaceMemoryChangedParams,
  WorkspaceMemoryParams,
} from '../protocol';

export const MEMORY_SCHEME = 'relavium-memory';
export const MEMORY_FILE_NAME = 'Workspace Memory.md';

/** What the files need from the server. */
export interface MemoryBackend {
  get(params: WorkspaceMemoryParams): Promise<WorkspaceMemory>;
  set(params: SetWorkspaceMemoryParams): Promise<WorkspaceMemory>;
}

/** A save refused because the stored memory has a newer revision than the one edited. */
export class MemoryConflict extends Error {
  constructor(readonly workingDir: string) {
    super(
      'The workspace memory was changed in another window since you opened it. Your text is ' +
        'still in the editor: copy what you need, run "Revert File" to load the newer text, ' +
        'merge, and save again.',
    );
    this.name = 'MemoryConflict';
  }
}

/** What `stat` reports: the mtime is the revision (it only grows). */
export interface MemoryStat {
  revision: number;
  size: number;
}

/** The folder a memory file's path stands for (`/a/b/Workspace Memory.md` → `/a/b`). */
export function workingDirOf(path: string): string | undefined {
  const suffix = `/${MEMORY_FILE_NAME}`;
  if (!path.endsWith(suffix)) {
    return undefined;
  }
  const folder = path.slice(0, -suffix.length);
  return folder === '' ? '/' : folder;
}

/** The memory file's path for a workspace folder. */
export function memoryPathOf(folder: string): string {
  return `${folder.replace(/\/+$/, '')}/${MEMORY_FILE_NAME}`;
}

interface Known {
  /** The revision last read or saved here: the base of the next save. */
  base: number;
  /** The newest revision heard of (what stat reports, so VS Code sees a newer file). */
  latest: number;
  size: number;
  /** The server's name for the workspace (its real path). */
  workspace: string;
}

/** Reading, saving and following the memory files of the open folders. */
export class MemoryFiles {
  private readonly known = new Map<string, Known>();
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  constructor(private readonly backend: MemoryBackend) {}

  /** The document's bytes; its revision becomes the base of the next save. */
  async read(workingDir: string): Promise<Uint8Array> {
    const memory = await this.backend.get({ workingDir });
    const bytes = this.encoder.encode(memory.text);
    this.remember(workingDir, memory, bytes.length);
    return bytes;
  }

  /** The revision and size, asking the server only the first time. */
  async stat(workingDir: string): Promise<MemoryStat> {
    let known = this.known.get(workingDir);
    if (known === undefined) {
      await this.read(workingDir);
      known = this.known.get(workingDir);
    }
    return { revision: known?.latest ?? 0, size: known?.size ?? 0 };
  }

  /** Save on top of the revision last read; a newer stored one refuses with MemoryConflict. */
  async write(workingDir: string, content: Uint8Array): Promise<WorkspaceMemory> {
    const baseRevision = this.known.get(workingDir)?.base ?? 0;
    const text = this.decoder.decode(content);
    try {
      const saved = await this.backend.set({ workingDir, text, baseRevision });
      this.remember(workingDir, saved, content.length);
      return saved;
    } catch (error) {
      if (isConflict(error)) {
        throw new MemoryConflict(workingDir);
      }
      throw error;
    }
  }

  /**
   * A `relavium/workspaceMemoryChanged` notification: the folders whose file changed (VS Code
   * is told, re-stats and reloads an unmodified editor; a modified one hears the file is
   * newer when it saves). The save base moves only when the new text is read, so an unsaved
   * edit made on the older text still meets the conflict.
   */
  changed(change: WorkspaceMemoryChangedParams): string[] {
    const folders: string[] = [];
    for (const [workingDir, known] of this.known) {
      if (known.workspace === change.workspace && change.revision > known.latest) {
        known.latest = change.revision;
        folders.push(workingDir);
      }
    }
    return folders;
  }

  /** The revision a folder's file was last read or saved at: its save base (0: never). */
  baseOf(workingDir: string): number {
    return this.known.get(workingDir)?.base ?? 0;
  }

  private remember(workingDir: string, memory: WorkspaceMemory, size: number): void {
    const latest = Math.max(memory.revision, this.known.get(workingDir)?.latest ?? 0);
    this.known.set(workingDir, { base: memory.revision, latest, size, workspace: memory.workspace });
  }
}

function isConflict(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'memory_conflict';
}
