/**
 * "Relavium: Edit Workspace Memory": the workspace's long-term memory as an editable file,
 * `relavium-memory:/<folder>/Workspace Memory.md`, through a FileSystemProvider. Saving sends
 * `relavium/setWorkspaceMemory` on top of the revision the editor read (see
 * `model/workspaceMemory.ts`); a newer revision saved elsewhere makes the save fail with a
 * message, never overwrites it silently.
 */

import * as vscode from 'vscode';
import { Methods, type WorkspaceMemory, type WorkspaceMemoryChangedParams } from '../protocol';
import {
  MEMORY_SCHEME,
  MemoryConflict,
  MemoryFiles,
  memoryPathOf,
  workingDirOf,
} from '../model/workspaceMemory';
import type { RelaviumServer } from '../server/relaviumServer';

/** The memory file of a workspace folder. */
export function memoryUri(folder: string): vscode.Uri {
  return vscode.Uri.from({ scheme: MEMORY_SCHEME, path: memoryPathOf(folder) });
}

export class MemoryFileSystem implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  private readonly files: MemoryFiles;

  constructor(server: RelaviumServer) {
    this.files = new MemoryFiles({
      get: (params) => server.request<WorkspaceMemory>(Methods.getWorkspaceMemory, params),
      set: (params) => server.request<WorkspaceMemory>(Methods.setWorkspaceMemory, params),
    });
  }

  /** `relavium/workspaceMemoryChanged`: tell VS Code which open memory files changed. */
  onMemoryChanged(change: WorkspaceMemoryChangedParams): void {
    const events = this.files
      .changed(change)
      .map((folder) => ({ type: vscode.FileChangeType.Changed, uri: memoryUri(folder) }));
    if (events.length > 0) {
      this.emitter.fire(events);
    }
  }

  watch(): vscode.Disposable {
    // Changes arrive as server notifications whether anything watches or not.
    return new vscode.Disposable(() => undefined);
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const stat = await this.guard(() => this.files.stat(folderOf(uri)));
    return { type: vscode.FileType.File, ctime: 0, mtime: stat.revision, size: stat.size };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return this.guard(() => this.files.read(folderOf(uri)));
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    await this.guard(() => this.files.write(folderOf(uri), content));
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('The workspace memory is a single file.');
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions('Empty the workspace memory and save it instead.');
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions('The workspace memory cannot be renamed.');
  }

  dispose(): void {
    this.emitter.dispose();
  }

  /** Server failures become file-system errors whose message VS Code shows on save. */
  private async guard<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (error instanceof vscode.FileSystemError) {
        throw error;
      }
      const message = error instanceof Error ? error.message : String(error);
      throw error instanceof MemoryConflict
        ? vscode.FileSystemError.Unavailable(message)
        : vscode.FileSystemError.NoPermissions(message);
    }
  }
}

function folderOf(uri: vscode.Uri): string {
  const folder = workingDirOf(uri.path);
  if (folder === undefined) {
    throw vscode.FileSystemError.FileNotFound(uri);
  }
  return folder;
}

/** "Relavium: Edit Workspace Memory": open the memory of the (picked) workspace folder. */
export async function editWorkspaceMemory(): Promise<void> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const folder =
    folders.length > 1
      ? await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Whose workspace memory?' })
      : folders[0];
  if (folder === undefined) {
    if (folders.length === 0) {
      void vscode.window.showInformationMessage('Relavium: open a folder to keep a workspace memory.');
    }
    return;
  }
  const document = await vscode.workspace.openTextDocument(memoryUri(folder.uri.fsPath));
  await vscode.window.showTextDocument(document, { preview: false });
}
