import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { isExecutableFile, resolveServerCommand } from '../src/server/serverCommand';

const root = mkdtempSync(path.join(tmpdir(), 'relavium-cmd-'));
after(() => {
  rmSync(root, { recursive: true, force: true });
});

function executable(file: string, mode = 0o755): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, '#!/bin/sh\nexit 0\n');
  chmodSync(file, mode);
  return file;
}

describe('resolveServerCommand', () => {
  const binDir = path.join(root, 'bin');
  const onPath = executable(path.join(binDir, 'relavium-lsp'));
  const workspace = path.join(root, 'workspace');
  const inVenv = executable(path.join(workspace, '.venv', 'bin', 'relavium-lsp'));
  const base = { extraArgs: [], workspaceFolders: [workspace], workspaceTrusted: true };

  it('uses the setting first, passing serve and the extra arguments', () => {
    const resolved = resolveServerCommand({
      ...base,
      configured: ' /opt/relavium ',
      extraArgs: ['--log', 'debug'],
      pathVariable: binDir,
    });
    assert.deepEqual(resolved, {
      found: true,
      command: '/opt/relavium',
      args: ['serve', '--log', 'debug'],
      source: 'setting',
    });
  });

  it('prefers PATH over the workspace venv', () => {
    const resolved = resolveServerCommand({
      ...base,
      configured: '',
      pathVariable: `/nonexistent${path.delimiter}${binDir}`,
    });
    assert.deepEqual(resolved, { found: true, command: onPath, args: ['serve'], source: 'path' });
  });

  it('falls back to the workspace venv in a trusted workspace', () => {
    const resolved = resolveServerCommand({ ...base, configured: '', pathVariable: '/nonexistent' });
    assert.deepEqual(resolved, { found: true, command: inVenv, args: ['serve'], source: 'workspace-venv' });
  });

  it('never runs the workspace venv of an untrusted workspace', () => {
    const resolved = resolveServerCommand({
      ...base,
      configured: '',
      pathVariable: '',
      workspaceTrusted: false,
    });
    assert.ok(!resolved.found);
    assert.match(resolved.reason, /trust/);
  });

  it('explains what is missing when nothing is found', () => {
    const resolved = resolveServerCommand({
      ...base,
      configured: '',
      pathVariable: undefined,
      workspaceFolders: [],
    });
    assert.ok(!resolved.found);
    assert.match(resolved.reason, /is not installed \(not on PATH or in a workspace \.venv\)/);
  });

  it('prefers the server this extension installed to PATH, but not to the setting', () => {
    const installed = executable(path.join(root, 'storage', 'venv', 'bin', 'relavium-lsp'));
    const withPrivate = { ...base, privateServer: installed, pathVariable: binDir };
    const fromStorage = resolveServerCommand({ ...withPrivate, configured: '' });
    assert.ok(fromStorage.found);
    assert.equal(fromStorage.command, installed);
    assert.equal(fromStorage.source, 'private');
    const fromSetting = resolveServerCommand({ ...withPrivate, configured: '/opt/relavium' });
    assert.ok(fromSetting.found);
    assert.equal(fromSetting.source, 'setting');
    const gone = resolveServerCommand({
      ...base,
      privateServer: path.join(root, 'nope'),
      pathVariable: binDir,
      configured: '',
    });
    assert.ok(gone.found);
    assert.equal(gone.command, onPath);
  });

  it('ignores files that are not executable and directories', () => {
    const plain = executable(path.join(root, 'plain', 'relavium-lsp'), 0o644);
    mkdirSync(path.join(root, 'dir', 'relavium-lsp'), { recursive: true });
    assert.equal(isExecutableFile(plain), false);
    assert.equal(isExecutableFile(path.join(root, 'dir', 'relavium-lsp')), false);
    const resolved = resolveServerCommand({
      ...base,
      configured: '',
      pathVariable: [path.join(root, 'plain'), path.join(root, 'dir')].join(path.delimiter),
      workspaceFolders: [],
    });
    assert.equal(resolved.found, false);
  });
});
