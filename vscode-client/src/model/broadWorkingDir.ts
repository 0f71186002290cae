/**
 * A chat opened at `/` or the home directory. The server refuses such a session
 * (`data.code: broad_working_dir`): its sandbox would hold every file there. The user is asked
 * once per directory — open a project folder instead, or allow it — and a yes is remembered in
 * the extension's workspace state, never in settings (a repository's settings must not be able
 * to give it). No `vscode` import: the flow is unit-tested in plain Node.
 */

export const BROAD_WORKING_DIR = 'broad_working_dir';
export const ALLOWED_BROAD_DIRS_KEY = 'relavium.allowedBroadWorkingDirs';

/** What the user answered: allow this directory, open a folder instead, or dismissed. */
export type BroadDirAnswer = 'allow' | 'openFolder' | undefined;

/** The slice of `vscode.Memento` used here. */
export interface ConsentState {
  get(key: string): unknown;
  update(key: string, value: unknown): PromiseLike<void>;
}

export interface BroadDirPrompt {
  /** Ask the user (a modal in VS Code). */
  ask(workingDir: string, reason: string): PromiseLike<BroadDirAnswer>;
  /** Offer to open a project folder instead. */
  openFolder(): PromiseLike<unknown>;
}

/** The user did not allow the directory; the chat shows this instead of a server error. */
export class BroadDirNotAllowed extends Error {
  readonly code = BROAD_WORKING_DIR;

  constructor(workingDir: string) {
    super(`No session was started: open a project folder, or allow Relavium to work in ${workingDir}.`);
    this.name = 'BroadDirNotAllowed';
  }
}

/** The directory and reason of a `broad_working_dir` refusal, or undefined for any other error. */
export function broadRefusal(error: unknown): { workingDir: string; reason: string } | undefined {
  if (typeof error !== 'object' || error === null) {
    return undefined;
  }
  const { code, data } = error as { code?: unknown; data?: Record<string, unknown> };
  if (code !== BROAD_WORKING_DIR || typeof data?.workingDir !== 'string') {
    return undefined;
  }
  return { workingDir: data.workingDir, reason: typeof data.reason === 'string' ? data.reason : 'too broad' };
}

export class BroadWorkingDirConsent {
  constructor(
    private readonly state: ConsentState,
    private readonly prompt: BroadDirPrompt,
  ) {}

  /**
   * Run `start` (a `startSession` request); when the server refuses the directory as too
   * broad, ask (unless this directory was allowed before) and retry with the user's yes.
   */
  async start<T>(start: (allowBroadWorkingDir: boolean) => Promise<T>): Promise<T> {
    try {
      return await start(false);
    } catch (error) {
      const refused = broadRefusal(error);
      if (refused === undefined) {
        throw error;
      }
      if (!this.allowed().includes(refused.workingDir)) {
        const answer = await this.prompt.ask(refused.workingDir, refused.reason);
        if (answer !== 'allow') {
          if (answer === 'openFolder') {
            void this.prompt.openFolder();
          }
          throw new BroadDirNotAllowed(refused.workingDir);
        }
        await this.state.update(ALLOWED_BROAD_DIRS_KEY, [...this.allowed(), refused.workingDir]);
      }
      return start(true);
    }
  }

  private allowed(): string[] {
    const stored = this.state.get(ALLOWED_BROAD_DIRS_KEY);
    return Array.isArray(stored) ? stored.filter((dir): dir is string => typeof dir === 'string') : [];
  }
}
