// Runs code-server (VS Code 1.139 for the browser) from the e2e cache: installs a .vsix into
// an isolated extensions dir and serves one workspace on a free loopback port.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';

/** User settings of a quiet workbench: no tips, telemetry, updates, trust prompt or built-in chat. */
export const QUIET_WORKBENCH = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.ignoreRecommendations': true,
  'security.workspace.trust.enabled': false,
  'window.restoreWindows': 'none',
  'chat.disableAIFeatures': true,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

/** PATH without any directory that holds a relavium-lsp (for "no server found" runs). */
export function pathWithoutServer() {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((directory) => {
      try {
        accessSync(path.join(directory, 'relavium-lsp'), constants.X_OK);
        return false;
      } catch {
        return directory !== '';
      }
    })
    .join(path.delimiter);
}

/** A free TCP port on 127.0.0.1 (the kernel picks it; we release it for code-server). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export class CodeServer {
  /**
   * @param {object} options
   * @param {string} options.cache   the install-e2e-deps.sh cache directory
   * @param {string} options.root    a scratch directory owned by this run
   * @param {Record<string, unknown>} options.settings  VS Code user settings
   * @param {Record<string, unknown>} [options.machineSettings]  settings of the machine the
   *   server runs on (code-server's window is a remote one: VS Code ignores machine-scoped
   *   settings in user settings there)
   */
  constructor({ cache, root, settings, machineSettings = {} }) {
    this.cache = cache;
    this.binary = path.join(cache, 'code-server', 'node_modules', '.bin', 'code-server');
    this.dataDir = path.join(root, 'data');
    this.extensionsDir = path.join(root, 'extensions');
    this.logLines = [];
    mkdirSync(path.join(this.dataDir, 'User'), { recursive: true });
    mkdirSync(this.extensionsDir, { recursive: true });
    writeFileSync(path.join(this.dataDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
    mkdirSync(path.join(this.dataDir, 'Machine'), { recursive: true });
    writeFileSync(
      path.join(this.dataDir, 'Machine', 'settings.json'),
      JSON.stringify(machineSettings, null, 2),
    );
    this.configFile = path.join(root, 'code-server.yaml');
    writeFileSync(this.configFile, 'auth: none\ncert: false\n');
  }

  /** Environment for code-server: Node 24 first on PATH (code-server refuses Node 20). */
  env(extra = {}) {
    const nodeBin = path.join(this.cache, 'node24', 'node_modules', '.bin');
    const basePath = extra.PATH ?? process.env.PATH ?? '';
    return {
      ...process.env,
      ...extra,
      PATH: `${nodeBin}${path.delimiter}${basePath}`,
    };
  }

  baseArgs() {
    return [
      '--config',
      this.configFile,
      '--user-data-dir',
      this.dataDir,
      '--extensions-dir',
      this.extensionsDir,
    ];
  }

  /** Install a packaged extension; throws with code-server's output when it fails. */
  installExtension(vsix) {
    const result = spawnSync(this.binary, [...this.baseArgs(), '--force', '--install-extension', vsix], {
      env: this.env(),
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (result.status !== 0) {
      throw new Error(`installing ${vsix} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
    }
    return `${result.stdout}${result.stderr}`;
  }

  /** Start serving `workspace`; resolves with the URL once code-server says it listens. */
  async start(workspace, extraEnv = {}) {
    this.port = await freePort();
    this.process = spawn(
      this.binary,
      [
        ...this.baseArgs(),
        '--bind-addr',
        `127.0.0.1:${this.port}`,
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        '--ignore-last-opened',
        workspace,
      ],
      // Its own process group, so stop() also ends the extension host and language server.
      {
        env: this.env(extraEnv),
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    const listening = new Promise((resolve, reject) => {
      const onData = (chunk) => {
        for (const line of chunk.toString().split('\n')) {
          if (line.trim() !== '') this.logLines.push(line);
          if (line.includes('HTTP server listening on')) resolve();
        }
      };
      this.process.stdout.on('data', onData);
      this.process.stderr.on('data', onData);
      this.process.once('exit', (code) =>
        reject(new Error(`code-server exited early (${code}):\n${this.logLines.join('\n')}`)),
      );
    });
    const timeout = new Promise((_, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`code-server did not start:\n${this.logLines.join('\n')}`)),
        90_000,
      );
      timer.unref();
    });
    await Promise.race([listening, timeout]);
    return `http://127.0.0.1:${this.port}/?folder=${encodeURIComponent(workspace)}`;
  }

  /** Stop code-server and wait for it to exit. */
  async stop() {
    const child = this.process;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const signalGroup = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is already gone.
      }
    };
    signalGroup('SIGTERM');
    const timer = setTimeout(() => signalGroup('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    signalGroup('SIGKILL');
  }
}
