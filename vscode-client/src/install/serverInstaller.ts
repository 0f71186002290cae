/**
 * Installs the server bundled in the VSIX into the extension's global storage (the pure parts:
 * `installPlan.ts`, `installLock.ts`, `privateServer.ts`). Progress shows in a notification,
 * every command and its output in the "Relavium" output channel, and a failure says what to do
 * next. Nothing is written into the workspace or the settings.
 */

import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { PACKAGE_VERSION } from '../protocol';
import { isExecutableFile } from '../server/serverCommand';
import {
  PYTHON_PROBE,
  parseProbe,
  pathPythonCandidates,
  planInstall,
  type InstallStep,
  type ProbedPython,
  type PythonCandidate,
} from './installPlan';
import { withInstallLock } from './installLock';
import {
  bundledWheel,
  clearVersion,
  installedExecutable,
  privateServerLayout,
  removeOtherVersions,
  writeMarker,
  type PrivateServerLayout,
} from './privateServer';

/** Test-only (never set by users): install from this wheelhouse, offline. */
const TEST_FIND_LINKS = 'RELAVIUM_TEST_PIP_FIND_LINKS';
const STEP_TIMEOUT_MS = 10 * 60_000;
const PROBE_TIMEOUT_MS = 20_000;
// Variables that would make the private environment's Python read another one's files.
const ISOLATED_ENV = ['PYTHONPATH', 'PYTHONHOME', 'VIRTUAL_ENV', 'CONDA_PREFIX', 'PIP_REQUIRE_VIRTUALENV'];

interface RunResult {
  code: number | null;
  stdout: string;
  tail: string;
}

/** The Python extension's API, only the part used here (no dependency on its package). */
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(environment: {
      path: string;
    }): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  };
}

function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !ISOLATED_ENV.includes(name)));
}

export class ServerInstaller {
  readonly layout: PrivateServerLayout;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
  ) {
    this.layout = privateServerLayout(context.globalStorageUri.fsPath, PACKAGE_VERSION);
  }

  /** The installed server of this extension's version, if any. */
  installed(): string | undefined {
    return installedExecutable(this.layout);
  }

  /**
   * Install (or with `reinstall`, replace) the private server. Resolves true when a server of
   * this version is ready (also when another window just installed it).
   */
  async install(reinstall: boolean): Promise<boolean> {
    this.output.appendLine(
      `[install] ${reinstall ? 'Reinstalling' : 'Installing'} relavium-lsp ${PACKAGE_VERSION} into ${this.layout.versionDir}`,
    );
    try {
      return await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: 'Installing the Relavium server',
          cancellable: false,
        },
        (progress) =>
          withInstallLock(this.layout.lockDir, () => this.installLocked(reinstall, progress), {
            onWait: (owner) => {
              this.output.appendLine(
                `[install] Waiting for another window's install (pid ${owner?.pid ?? '?'})…`,
              );
              progress.report({ message: "waiting for another window's install…" });
            },
          }),
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.fail(
        `the install failed: ${reason}`,
        'Check the "Relavium" output, then run "Relavium: Reinstall Server".',
      );
      return false;
    }
  }

  private async installLocked(
    reinstall: boolean,
    progress: vscode.Progress<{ message?: string }>,
  ): Promise<boolean> {
    if (!reinstall && this.installed() !== undefined) {
      this.output.appendLine('[install] Already installed (by another window meanwhile).');
      return true;
    }
    clearVersion(this.layout);
    mkdirSync(this.layout.versionDir, { recursive: true });
    progress.report({ message: 'looking for Python 3.11+…' });
    const pythons = await this.probePythons();
    const uv = this.findOnPath(process.platform === 'win32' ? 'uv.exe' : 'uv');
    const findLinks = process.env[TEST_FIND_LINKS]?.trim() === '' ? undefined : process.env[TEST_FIND_LINKS];
    const plan = planInstall({
      platform: process.platform,
      pythons,
      uv,
      wheel: bundledWheel(this.context.extensionPath, PACKAGE_VERSION),
      venvDir: this.layout.venvDir,
      ...(findLinks === undefined ? {} : { findLinks }),
    });
    if (!plan.ok) {
      clearVersion(this.layout);
      this.fail(plan.problem, plan.nextStep);
      return false;
    }
    this.output.appendLine(`[install] Using ${plan.via}`);
    for (const step of plan.steps) {
      progress.report({ message: `${step.title.toLowerCase()}…` });
      const result = await this.run(step);
      if (result.code !== 0) {
        clearVersion(this.layout);
        this.fail(
          `${step.title.toLowerCase()} failed (exit ${result.code ?? 'killed'}): ${result.tail || 'no output'}`,
          'pip needs to reach PyPI (or your configured index) for the dependencies: check the network or ' +
            'proxy (pip reads PIP_INDEX_URL and pip.conf), then run "Relavium: Reinstall Server".',
        );
        return false;
      }
      if (step === plan.steps[plan.steps.length - 1] && !result.stdout.includes(PACKAGE_VERSION)) {
        clearVersion(this.layout);
        this.fail(
          `the installed server says "${result.stdout.trim()}", not ${PACKAGE_VERSION}`,
          'Run "Relavium: Reinstall Server".',
        );
        return false;
      }
    }
    writeMarker(this.layout, plan.via);
    for (const removed of removeOtherVersions(this.layout)) {
      this.output.appendLine(`[install] Removed the previous private server ${removed}.`);
    }
    this.output.appendLine(`[install] Installed ${plan.executable}`);
    return true;
  }

  private fail(problem: string, nextStep: string): void {
    this.output.appendLine(`[install] Failed: ${problem}. ${nextStep}`);
    void vscode.window
      .showErrorMessage(`Relavium could not install its server: ${problem}. ${nextStep}`, 'Show log')
      .then((choice) => {
        if (choice === 'Show log') {
          this.output.show();
        }
      });
  }

  /** Interpreters in preference order: the Python extension's, then PATH's. */
  private async probePythons(): Promise<ProbedPython[]> {
    const candidates: PythonCandidate[] = [];
    const selected = await this.pythonExtensionInterpreter();
    if (selected !== undefined) {
      candidates.push({ command: selected, args: [], source: 'python-extension' });
    }
    candidates.push(...pathPythonCandidates(process.platform));
    const probed: ProbedPython[] = [];
    for (const candidate of candidates) {
      const result = await this.run(
        { title: 'probe', command: candidate.command, args: [...candidate.args, '-c', PYTHON_PROBE] },
        PROBE_TIMEOUT_MS,
        true,
      );
      const found = parseProbe(candidate, result.stdout, result.code);
      const name = [candidate.command, ...candidate.args].join(' ');
      this.output.appendLine(
        `[install] ${name}: ${found.version === undefined ? 'not usable' : `Python ${found.version.join('.')}`}` +
          (found.version !== undefined && !found.canCreateVenv ? ' (no venv module)' : ''),
      );
      probed.push(found);
    }
    return probed;
  }

  private async pythonExtensionInterpreter(): Promise<string | undefined> {
    const extension = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
    if (extension === undefined) {
      return undefined;
    }
    try {
      // An extension without exports throws here, which the catch below reports.
      const api = extension.isActive ? extension.exports : await extension.activate();
      const environments = api.environments;
      const active = environments?.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
      if (environments === undefined || active === undefined) {
        return undefined;
      }
      const resolved = await environments.resolveEnvironment(active);
      return resolved?.executable.uri?.fsPath;
    } catch (error) {
      this.output.appendLine(`[install] The Python extension gave no interpreter: ${String(error)}`);
      return undefined;
    }
  }

  private findOnPath(name: string): string | undefined {
    for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
      const candidate = path.join(directory, name);
      if (directory !== '' && isExecutableFile(candidate)) {
        return candidate;
      }
    }
    return undefined;
  }

  /** Run one command, its output going to the channel (unless `quiet`). */
  private run(step: InstallStep, timeoutMs = STEP_TIMEOUT_MS, quiet = false): Promise<RunResult> {
    if (!quiet) {
      this.output.appendLine(`[install] $ ${[step.command, ...step.args].join(' ')}`);
    }
    return new Promise((resolve) => {
      let stdout = '';
      let tail = '';
      const child = spawn(step.command, step.args, { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const collect = (isStdout: boolean) => (chunk: Buffer) => {
        const text = chunk.toString();
        if (isStdout) {
          stdout += text;
        }
        tail = (tail + text).slice(-600);
        if (!quiet) {
          this.output.append(text);
        }
      };
      child.stdout.on('data', collect(true));
      child.stderr.on('data', collect(false));
      child.on('error', (error) => {
        clearTimeout(timer);
        resolve({ code: -1, stdout, tail: error.message });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        const lastLines = tail.trim().split('\n').slice(-3).join(' ').trim();
        resolve({ code, stdout, tail: lastLines });
      });
    });
  }
}
