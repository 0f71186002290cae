/**
 * Where the extension keeps the server it installs: `<globalStorage>/server/<version>/`, with
 * the environment in `venv/` and `installed.json` written last (a directory without it is a
 * half-finished install and is redone). One version at a time: after a newer VSIX installs its
 * server, the other versions are removed. Nothing goes into the workspace or the settings.
 * Pure Node; no `vscode` import.
 */

import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export interface PrivateServerLayout {
  /** `<globalStorage>/server`: every version's directory and the install lock. */
  root: string;
  versionDir: string;
  venvDir: string;
  marker: string;
  lockDir: string;
  version: string;
}

export interface InstalledMarker {
  version: string;
  via: string;
  installedAt: string;
}

export function privateServerLayout(globalStorage: string, version: string): PrivateServerLayout {
  const root = path.join(globalStorage, 'server');
  const versionDir = path.join(root, version);
  return {
    root,
    versionDir,
    venvDir: path.join(versionDir, 'venv'),
    marker: path.join(versionDir, 'installed.json'),
    lockDir: path.join(root, 'install.lock'),
    version,
  };
}

/** The server executable inside a private environment. */
export function venvExecutable(venvDir: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32'
    ? path.join(venvDir, 'Scripts', 'relavium-lsp.exe')
    : path.join(venvDir, 'bin', 'relavium-lsp');
}

/** The Python interpreter of a private environment. */
export function venvPython(venvDir: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32'
    ? path.join(venvDir, 'Scripts', 'python.exe')
    : path.join(venvDir, 'bin', 'python');
}

/** The installed server of this version, if its install finished. */
export function installedExecutable(
  layout: PrivateServerLayout,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  try {
    const marker = JSON.parse(readFileSync(layout.marker, 'utf8')) as Partial<InstalledMarker>;
    const executable = venvExecutable(layout.venvDir, platform);
    return marker.version === layout.version && existsSync(executable) ? executable : undefined;
  } catch {
    return undefined;
  }
}

/** Record a finished install (the last thing an install writes). */
export function writeMarker(layout: PrivateServerLayout, via: string): void {
  const marker: InstalledMarker = { version: layout.version, via, installedAt: new Date().toISOString() };
  writeFileSync(layout.marker, JSON.stringify(marker, null, 2));
}

/** Start a version's directory afresh (a half-finished or reinstalled environment). */
export function clearVersion(layout: PrivateServerLayout): void {
  rmSync(layout.versionDir, { recursive: true, force: true });
}

/** Remove every other version's directory (an upgrade replaces the private server). */
export function removeOtherVersions(layout: PrivateServerLayout): string[] {
  const removed: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(layout.root);
  } catch {
    return removed;
  }
  for (const entry of entries) {
    const full = path.join(layout.root, entry);
    if (entry === layout.version || full === layout.lockDir || entry.startsWith('install.lock')) {
      continue;
    }
    rmSync(full, { recursive: true, force: true });
    removed.push(entry);
  }
  return removed;
}

/** The wheel bundled in the VSIX (`server/relavium_lsp-<version>-py3-none-any.whl`), if present. */
export function bundledWheel(extensionPath: string, version: string): string | undefined {
  const wheel = path.join(extensionPath, 'server', `relavium_lsp-${version}-py3-none-any.whl`);
  return existsSync(wheel) ? wheel : undefined;
}
