/**
 * How to install the bundled server into a private environment: which Python (or uv), which
 * commands, and — when nothing fits — what the user can do next. Pure: the caller probes the
 * interpreters (`PYTHON_PROBE`) and runs the steps; no `vscode` import.
 *
 * Preference: a Python ≥ 3.11 that can create virtual environments, first the one the Python
 * extension has selected, then `python3.13` … `python3` on PATH (`py -3` on Windows); else
 * `uv`, which finds or downloads a suitable Python itself. The server goes into
 * `<globalStorage>/server/<version>/venv`, never into the workspace.
 */

import { venvExecutable, venvPython } from './privateServer';

export const MINIMUM_PYTHON: readonly [number, number] = [3, 11];

/** Run as `<python> -c PYTHON_PROBE`: prints `major.minor`, then fails if venv cannot work. */
export const PYTHON_PROBE =
  "import sys; print('%d.%d' % sys.version_info[:2], flush=True); import venv, ensurepip";

export interface PythonCandidate {
  command: string;
  args: string[];
  /** Where it came from, for the log and the messages. */
  source: 'python-extension' | 'path';
}

export interface ProbedPython extends PythonCandidate {
  /** `[major, minor]`, absent when it did not run. */
  version?: [number, number];
  /** Whether `python -m venv` can create an environment with pip (venv and ensurepip import). */
  canCreateVenv: boolean;
}

/** The interpreters to probe on PATH, in order. */
export function pathPythonCandidates(platform: NodeJS.Platform): PythonCandidate[] {
  if (platform === 'win32') {
    return [
      { command: 'py', args: ['-3'], source: 'path' },
      { command: 'python', args: [], source: 'path' },
    ];
  }
  return ['python3.13', 'python3.12', 'python3.11', 'python3'].map((command) => ({
    command,
    args: [],
    source: 'path' as const,
  }));
}

/** Read a probe's output: the version line, and whether it exited cleanly. */
export function parseProbe(
  candidate: PythonCandidate,
  stdout: string,
  exitCode: number | null,
): ProbedPython {
  const match = /^(\d+)\.(\d+)\s*$/m.exec(stdout);
  if (match === null) {
    return { ...candidate, canCreateVenv: false };
  }
  return { ...candidate, version: [Number(match[1]), Number(match[2])], canCreateVenv: exitCode === 0 };
}

export function isRecentEnough(version: readonly [number, number] | undefined): boolean {
  if (version === undefined) {
    return false;
  }
  const [major, minor] = version;
  return major > MINIMUM_PYTHON[0] || (major === MINIMUM_PYTHON[0] && minor >= MINIMUM_PYTHON[1]);
}

export interface InstallInputs {
  platform: NodeJS.Platform;
  /** Probed interpreters, in preference order. */
  pythons: readonly ProbedPython[];
  /** The `uv` executable, when one was found. */
  uv: string | undefined;
  /** The wheel bundled in the VSIX, when this build has one. */
  wheel: string | undefined;
  venvDir: string;
  /** Test-only: install from this wheelhouse, never from an index (`RELAVIUM_TEST_PIP_FIND_LINKS`). */
  findLinks?: string;
}

export interface InstallStep {
  title: string;
  command: string;
  args: string[];
}

export type InstallPlan =
  | { ok: true; via: string; steps: InstallStep[]; executable: string }
  | { ok: false; problem: string; nextStep: string };

function describePython(python: ProbedPython): string {
  const name = [python.command, ...python.args].join(' ');
  const version = python.version === undefined ? 'did not run' : python.version.join('.');
  return `${name} (${version}${python.source === 'python-extension' ? ', from the Python extension' : ''})`;
}

function howToGetPython(platform: NodeJS.Platform): string {
  const uv = 'or install uv (https://docs.astral.sh/uv/), which brings its own Python';
  switch (platform) {
    case 'darwin':
      return `Install Python 3.11 or newer (\`brew install python@3.12\`, or from python.org), ${uv}`;
    case 'win32':
      return `Install Python 3.11 or newer from python.org (with the "py" launcher), ${uv}`;
    default:
      return (
        'Install Python 3.11 or newer with its venv module (Debian/Ubuntu: ' +
        `\`sudo apt install python3.11 python3.11-venv\`; Fedora: \`sudo dnf install python3.11\`), ${uv}`
      );
  }
}

/** The steps that install `wheel` into `venvDir`, or why none can and what to do. */
export function planInstall(inputs: InstallInputs): InstallPlan {
  const rerun = 'then run "Relavium: Reinstall Server".';
  if (inputs.wheel === undefined) {
    return {
      ok: false,
      problem: 'this build of the extension has no bundled server',
      nextStep:
        'Install the server yourself (`uv tool install relavium-lsp` or `pipx install relavium-lsp`) and ' +
        'choose it with "Choose executable…".',
    };
  }
  const python = venvPython(inputs.venvDir, inputs.platform);
  const executable = venvExecutable(inputs.venvDir, inputs.platform);
  const verify: InstallStep = {
    title: 'Checking the installed server',
    command: executable,
    args: ['--version'],
  };
  const suitable = inputs.pythons.find((python) => isRecentEnough(python.version) && python.canCreateVenv);
  if (suitable !== undefined) {
    const index = inputs.findLinks === undefined ? [] : ['--no-index', '--find-links', inputs.findLinks];
    return {
      ok: true,
      via: describePython(suitable),
      executable,
      steps: [
        {
          title: 'Creating a private Python environment',
          command: suitable.command,
          args: [...suitable.args, '-m', 'venv', inputs.venvDir],
        },
        {
          title: 'Installing the server and its dependencies',
          command: python,
          args: ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', ...index, inputs.wheel],
        },
        verify,
      ],
    };
  }
  if (inputs.uv !== undefined) {
    const index =
      inputs.findLinks === undefined ? [] : ['--offline', '--no-index', '--find-links', inputs.findLinks];
    return {
      ok: true,
      via: `uv (${inputs.uv})`,
      executable,
      steps: [
        {
          title: 'Creating a private Python environment (uv)',
          command: inputs.uv,
          args: ['venv', '--python', `>=${MINIMUM_PYTHON.join('.')}`, inputs.venvDir],
        },
        {
          title: 'Installing the server and its dependencies (uv)',
          command: inputs.uv,
          args: ['pip', 'install', '--python', python, ...index, inputs.wheel],
        },
        verify,
      ],
    };
  }
  const recent = inputs.pythons.find((python) => isRecentEnough(python.version));
  if (recent !== undefined) {
    return {
      ok: false,
      problem: `${describePython(recent)} cannot create virtual environments (its venv module is missing)`,
      nextStep: `Install it (Debian/Ubuntu: \`sudo apt install python3-venv\`), or install uv (https://docs.astral.sh/uv/); ${rerun}`,
    };
  }
  const found = inputs.pythons.filter((python) => python.version !== undefined).map(describePython);
  return {
    ok: false,
    problem: `no Python ${MINIMUM_PYTHON.join('.')} or newer was found${found.length > 0 ? ` (found: ${found.join(', ')})` : ''}`,
    nextStep: `${howToGetPython(inputs.platform)}; ${rerun}`,
  };
}
