/**
 * Which `relavium-lsp` executable to start.
 *
 * Order: the `relavium.server.command` setting; else the server this extension installed
 * (its own version, in global storage); else `relavium-lsp` on PATH; else the workspace's own
 * `.venv/bin/relavium-lsp` — but only in a trusted workspace, because running a program that
 * a cloned repository ships is running that repository's code.
 * No `vscode` import: the caller passes settings, folders and trust.
 */

import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';

export const EXECUTABLE = 'relavium-lsp';

export interface ServerCommandInput {
  /** The `relavium.server.command` setting (empty: auto-detect). */
  configured: string;
  /** The `relavium.server.args` setting: extra arguments after `serve`. */
  extraArgs: readonly string[];
  /** The PATH environment variable. */
  pathVariable: string | undefined;
  /** Local paths of the workspace folders. */
  workspaceFolders: readonly string[];
  workspaceTrusted: boolean;
  /** The server this extension installed (matching its version), when there is one. */
  privateServer?: string;
  /** Override for tests; defaults to a real executable-file check. */
  isExecutable?: (file: string) => boolean;
}

export type ServerCommand =
  | { found: true; command: string; args: string[]; source: 'setting' | 'private' | 'path' | 'workspace-venv' }
  | { found: false; reason: string };

/** Whether `file` is a regular file the current user may execute. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) {
      return false;
    }
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function venvExecutable(folder: string): string {
  return process.platform === 'win32'
    ? path.join(folder, '.venv', 'Scripts', `${EXECUTABLE}.exe`)
    : path.join(folder, '.venv', 'bin', EXECUTABLE);
}

/** Resolve the command line that starts the server over stdio. */
export function resolveServerCommand(input: ServerCommandInput): ServerCommand {
  const isExecutable = input.isExecutable ?? isExecutableFile;
  const args = ['serve', ...input.extraArgs];
  const configured = input.configured.trim();
  if (configured !== '') {
    return { found: true, command: configured, args, source: 'setting' };
  }
  if (input.privateServer !== undefined && isExecutable(input.privateServer)) {
    return { found: true, command: input.privateServer, args, source: 'private' };
  }
  const names = process.platform === 'win32' ? [`${EXECUTABLE}.exe`, `${EXECUTABLE}.cmd`] : [EXECUTABLE];
  for (const directory of (input.pathVariable ?? '').split(path.delimiter)) {
    if (directory === '') {
      continue;
    }
    for (const name of names) {
      const candidate = path.join(directory, name);
      if (isExecutable(candidate)) {
        return { found: true, command: candidate, args, source: 'path' };
      }
    }
  }
  const venvCandidates = input.workspaceFolders.map(venvExecutable);
  const inVenv = venvCandidates.find((candidate) => isExecutable(candidate));
  if (inVenv !== undefined) {
    if (input.workspaceTrusted) {
      return { found: true, command: inVenv, args, source: 'workspace-venv' };
    }
    return {
      found: false,
      reason: `${EXECUTABLE} was found only in this workspace's .venv, which is not used until you trust the workspace`,
    };
  }
  return {
    found: false,
    reason: `${EXECUTABLE} is not installed (not on PATH or in a workspace .venv); install it or choose one`,
  };
}
