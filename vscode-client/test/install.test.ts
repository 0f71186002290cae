import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { withInstallLock } from '../src/install/installLock';
import {
  parseProbe,
  pathPythonCandidates,
  planInstall,
  type InstallInputs,
  type ProbedPython,
} from '../src/install/installPlan';
import { unsupportedPlatform } from '../src/install/platforms';
import {
  bundledWheel,
  installedExecutable,
  privateServerLayout,
  removeOtherVersions,
  writeMarker,
} from '../src/install/privateServer';
import { checkVersions, describeMismatch } from '../src/install/versionCheck';
import { PACKAGE_VERSION, PROTOCOL_VERSION } from '../src/protocol';

const root = mkdtempSync(path.join(tmpdir(), 'relavium-install-'));
after(() => {
  rmSync(root, { recursive: true, force: true });
});

function python(command: string, version: [number, number] | undefined, canCreateVenv = true): ProbedPython {
  return { command, args: [], source: 'path', canCreateVenv, ...(version === undefined ? {} : { version }) };
}

const base: InstallInputs = {
  platform: 'linux',
  pythons: [],
  uv: undefined,
  wheel: '/ext/server/relavium_lsp-0.1.0-py3-none-any.whl',
  venvDir: '/storage/server/0.1.0/venv',
};

describe('planInstall', () => {
  it('uses the first Python 3.11+ that can make a venv, then pip, then checks the version', () => {
    const plan = planInstall({
      ...base,
      pythons: [
        python('python3.13', undefined),
        python('python3.12', [3, 12], false),
        python('python3', [3, 11]),
      ],
    });
    assert.ok(plan.ok);
    assert.deepEqual(
      plan.steps.map((step) => [step.command, ...step.args]),
      [
        ['python3', '-m', 'venv', '/storage/server/0.1.0/venv'],
        [
          '/storage/server/0.1.0/venv/bin/python',
          '-m',
          'pip',
          'install',
          '--disable-pip-version-check',
          '--no-input',
          '/ext/server/relavium_lsp-0.1.0-py3-none-any.whl',
        ],
        ['/storage/server/0.1.0/venv/bin/relavium-lsp', '--version'],
      ],
    );
    assert.equal(plan.executable, '/storage/server/0.1.0/venv/bin/relavium-lsp');
    assert.match(plan.via, /python3 \(3\.11\)/);
  });

  it("prefers the Python extension's interpreter, listed first", () => {
    const fromExtension: ProbedPython = {
      ...python('/home/u/.pyenv/3.12/bin/python', [3, 12]),
      source: 'python-extension',
    };
    const plan = planInstall({ ...base, pythons: [fromExtension, python('python3', [3, 11])] });
    assert.ok(plan.ok);
    assert.equal(plan.steps[0]?.command, '/home/u/.pyenv/3.12/bin/python');
    assert.match(plan.via, /from the Python extension/);
  });

  it('falls back to uv, which brings its own Python, and passes a test wheelhouse to both', () => {
    const viaUv = planInstall({
      ...base,
      pythons: [python('python3', [3, 9])],
      uv: '/usr/bin/uv',
      findLinks: '/wh',
    });
    assert.ok(viaUv.ok);
    assert.deepEqual(viaUv.steps[0]?.args, ['venv', '--python', '>=3.11', '/storage/server/0.1.0/venv']);
    assert.deepEqual(viaUv.steps[1]?.args.slice(0, 7), [
      'pip',
      'install',
      '--python',
      '/storage/server/0.1.0/venv/bin/python',
      '--offline',
      '--no-index',
      '--find-links',
    ]);
    const viaPip = planInstall({ ...base, pythons: [python('python3', [3, 12])], findLinks: '/wh' });
    assert.ok(viaPip.ok);
    assert.deepEqual(viaPip.steps[1]?.args.slice(5, 8), ['--no-index', '--find-links', '/wh']);
  });

  it('says what to do when no Python 3.11 exists, per platform', () => {
    const linux = planInstall({
      ...base,
      pythons: [python('python3', [3, 9]), python('python3.12', undefined)],
    });
    assert.ok(!linux.ok);
    assert.match(linux.problem, /no Python 3\.11 or newer was found \(found: python3 \(3\.9\)\)/);
    assert.match(linux.nextStep, /apt install python3\.11 python3\.11-venv/);
    assert.match(linux.nextStep, /uv/);
    assert.match(linux.nextStep, /Reinstall Server/);
    const mac = planInstall({ ...base, platform: 'darwin' });
    assert.ok(!mac.ok);
    assert.match(mac.nextStep, /brew install python@3\.12/);
  });

  it('names a missing venv module, and a build without a wheel', () => {
    const noVenv = planInstall({ ...base, pythons: [python('python3', [3, 11], false)] });
    assert.ok(!noVenv.ok);
    assert.match(noVenv.problem, /cannot create virtual environments/);
    assert.match(noVenv.nextStep, /python3-venv/);
    const noWheel = planInstall({ ...base, wheel: undefined, pythons: [python('python3', [3, 12])] });
    assert.ok(!noWheel.ok);
    assert.match(noWheel.nextStep, /uv tool install relavium-lsp/);
  });

  it('reads probes and lists PATH candidates per platform', () => {
    const candidate = { command: 'python3', args: [], source: 'path' as const };
    assert.deepEqual(parseProbe(candidate, '3.12\n', 0).version, [3, 12]);
    assert.equal(parseProbe(candidate, '3.12\n', 1).canCreateVenv, false);
    assert.equal(parseProbe(candidate, '', 127).version, undefined);
    assert.deepEqual(
      pathPythonCandidates('win32').map((c) => [c.command, ...c.args]),
      [['py', '-3'], ['python']],
    );
    assert.equal(pathPythonCandidates('linux').at(-1)?.command, 'python3');
  });
});

describe('checkVersions', () => {
  const own = { packageVersion: '1.2.0', protocolVersion: 3 };
  const answer = (version: string, protocolVersion?: unknown) => ({
    serverInfo: { name: 'relavium-lsp', version },
    capabilities: { experimental: protocolVersion === undefined ? {} : { relavium: { protocolVersion } } },
  });

  it('matches, tolerates another package version, refuses another protocol', () => {
    assert.deepEqual(checkVersions(answer('1.2.0', 3), own), { kind: 'match' });
    assert.deepEqual(checkVersions(answer('1.1.9', 3), own), {
      kind: 'package-differs',
      serverVersion: '1.1.9',
    });
    assert.deepEqual(checkVersions(answer('2.0.0', 4), own), {
      kind: 'protocol-differs',
      serverVersion: '2.0.0',
      serverProtocol: 4,
    });
  });

  it('treats a server without versions (older than them) as another protocol', () => {
    assert.deepEqual(checkVersions({}, own), {
      kind: 'protocol-differs',
      serverVersion: 'unknown',
      serverProtocol: undefined,
    });
    assert.equal(checkVersions(answer('1.2.0', '3'), own).kind, 'protocol-differs');
  });

  it('compares with the generated constants by default and says what is wrong', () => {
    assert.deepEqual(checkVersions(answer(PACKAGE_VERSION, PROTOCOL_VERSION)), { kind: 'match' });
    const text = describeMismatch({
      kind: 'protocol-differs',
      serverVersion: '0.0.1',
      serverProtocol: undefined,
    });
    assert.match(text, /version 0\.0\.1, protocol none/);
    assert.match(text, /Install the matching server/);
  });
});

describe('withInstallLock', () => {
  it('lets one window install at a time and the second waits for it', async () => {
    const lock = path.join(root, 'wait', 'install.lock');
    const order: string[] = [];
    let releaseFirst: () => void = () => undefined;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    let waited = false;
    const first = withInstallLock(lock, async () => {
      order.push('first in');
      await firstHolds;
      order.push('first out');
    });
    const second = withInstallLock(
      lock,
      () => {
        order.push('second in');
        return Promise.resolve();
      },
      {
        pollMs: 5,
        onWait: (owner) => {
          waited = owner?.pid === process.pid;
          releaseFirst();
        },
      },
    );
    await Promise.all([first, second]);
    assert.deepEqual(order, ['first in', 'first out', 'second in']);
    assert.equal(waited, true);
    assert.equal(existsSync(lock), false, 'released');
  });

  it('takes over the lock of a process that died, and of one held too long', async () => {
    const lock = path.join(root, 'stale', 'install.lock');
    mkdirSync(lock, { recursive: true });
    writeFileSync(path.join(lock, 'owner.json'), JSON.stringify({ pid: 999_999_999, startedAt: Date.now() }));
    let ran = false;
    await withInstallLock(lock, () => Promise.resolve((ran = true)), {
      isAlive: () => false,
      timeoutMs: 1000,
    });
    assert.equal(ran, true);
    mkdirSync(lock);
    writeFileSync(path.join(lock, 'owner.json'), JSON.stringify({ pid: process.pid, startedAt: 0 }));
    await withInstallLock(lock, () => Promise.resolve(), { staleAfterMs: 60_000, timeoutMs: 1000 });
    // A lock directory whose owner never wrote its file counts by the directory's age.
    mkdirSync(lock);
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(lock, old, old);
    await withInstallLock(lock, () => Promise.resolve(), { staleAfterMs: 60_000, timeoutMs: 1000 });
  });

  it('gives up after the timeout while a live owner holds it, and releases after a failure', async () => {
    const lock = path.join(root, 'busy', 'install.lock');
    mkdirSync(lock, { recursive: true });
    writeFileSync(path.join(lock, 'owner.json'), JSON.stringify({ pid: process.pid, startedAt: Date.now() }));
    await assert.rejects(
      withInstallLock(lock, () => Promise.resolve(), { pollMs: 5, timeoutMs: 30 }),
      /another window has been installing/,
    );
    rmSync(lock, { recursive: true });
    await assert.rejects(
      withInstallLock(lock, () => Promise.reject(new Error('pip failed'))),
      /pip failed/,
    );
    assert.equal(existsSync(lock), false);
  });
});

describe('the private server', () => {
  it('counts only a finished install of its own version, and an upgrade removes the others', () => {
    const storage = path.join(root, 'storage');
    const old = privateServerLayout(storage, '0.0.9');
    const current = privateServerLayout(storage, '0.1.0');
    for (const layout of [old, current]) {
      mkdirSync(path.join(layout.venvDir, 'bin'), { recursive: true });
      writeFileSync(path.join(layout.venvDir, 'bin', 'relavium-lsp'), '#!/bin/sh\n');
    }
    assert.equal(installedExecutable(current, 'linux'), undefined, 'no marker: half-finished');
    writeMarker(current, 'python3 (3.11)');
    assert.equal(installedExecutable(current, 'linux'), path.join(current.venvDir, 'bin', 'relavium-lsp'));
    assert.equal((JSON.parse(readFileSync(current.marker, 'utf8')) as { version: string }).version, '0.1.0');
    mkdirSync(current.lockDir);
    assert.deepEqual(removeOtherVersions(current), ['0.0.9']);
    assert.equal(existsSync(old.versionDir), false);
    assert.equal(existsSync(current.lockDir), true, 'the lock is not a version');
  });

  it('finds the wheel bundled with the same version only', () => {
    const extension = path.join(root, 'extension');
    mkdirSync(path.join(extension, 'server'), { recursive: true });
    writeFileSync(path.join(extension, 'server', 'relavium_lsp-0.1.0-py3-none-any.whl'), '');
    assert.equal(
      bundledWheel(extension, '0.1.0'),
      path.join(extension, 'server', 'relavium_lsp-0.1.0-py3-none-any.whl'),
    );
    assert.equal(bundledWheel(extension, '0.2.0'), undefined);
  });
});

describe('unsupportedPlatform', () => {
  it('runs on Linux and macOS and says one sentence elsewhere', () => {
    assert.equal(unsupportedPlatform('linux'), undefined);
    assert.equal(unsupportedPlatform('darwin'), undefined);
    assert.match(
      unsupportedPlatform('win32') ?? '',
      /^Relavium runs on Linux and macOS only; Windows is not supported/,
    );
  });
});
