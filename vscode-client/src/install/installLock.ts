/**
 * One install at a time per machine: two VS Code windows that both offer "Install" must not
 * write into the same private environment together. The lock is a directory (`mkdir` is
 * atomic) holding `owner.json` with the owner's pid and start time; a lock whose owner process
 * is gone, or that is older than `staleAfterMs`, is taken over. Pure Node; no `vscode` import.
 */

import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export interface LockOwner {
  pid: number;
  startedAt: number;
}

export interface LockOptions {
  /** Whether a process still runs (default: `process.kill(pid, 0)`). */
  isAlive?: (pid: number) => boolean;
  now?: () => number;
  /** A lock held longer than this is someone's crash (default 15 minutes). */
  staleAfterMs?: number;
  pollMs?: number;
  /** Give up waiting after this long (default 20 minutes). */
  timeoutMs?: number;
  /** Called once when the lock is held by another live process. */
  onWait?: (owner: LockOwner | undefined) => void;
}

export class LockTimeout extends Error {}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(lockDir: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path.join(lockDir, 'owner.json'), 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' && typeof owner.startedAt === 'number'
      ? { pid: owner.pid, startedAt: owner.startedAt }
      : undefined;
  } catch {
    return undefined;
  }
}

function isStale(lockDir: string, owner: LockOwner | undefined, options: Required<LockOptions>): boolean {
  if (owner === undefined) {
    // Created but not yet written (or written by a crashed owner): judge by the directory's age.
    try {
      return options.now() - statSync(lockDir).mtimeMs > options.staleAfterMs;
    } catch {
      return false; // gone meanwhile: the next mkdir decides
    }
  }
  return !options.isAlive(owner.pid) || options.now() - owner.startedAt > options.staleAfterMs;
}

/** Take the lock at `lockDir` (waiting for another owner), run `body`, release it. */
export async function withInstallLock<T>(
  lockDir: string,
  body: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const settings: Required<LockOptions> = {
    isAlive: processIsAlive,
    now: Date.now,
    staleAfterMs: 15 * 60_000,
    pollMs: 500,
    timeoutMs: 20 * 60_000,
    onWait: () => undefined,
    ...options,
  };
  const deadline = settings.now() + settings.timeoutMs;
  let announced = false;
  mkdirSync(path.dirname(lockDir), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw error;
      }
    }
    const owner = readOwner(lockDir);
    if (isStale(lockDir, owner, settings)) {
      // Move it aside first: only one of several waiters can rename the same directory.
      const aside = `${lockDir}.stale-${process.pid}-${settings.now()}`;
      try {
        renameSync(lockDir, aside);
        rmSync(aside, { recursive: true, force: true });
      } catch {
        // Another waiter took it over first.
      }
      continue;
    }
    if (!announced) {
      announced = true;
      settings.onWait(owner);
    }
    if (settings.now() > deadline) {
      throw new LockTimeout(
        `another window has been installing the Relavium server since ${new Date(owner?.startedAt ?? 0).toISOString()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, settings.pollMs));
  }
  const mine: LockOwner = { pid: process.pid, startedAt: settings.now() };
  writeFileSync(path.join(lockDir, 'owner.json'), JSON.stringify(mine));
  try {
    return await body();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}
