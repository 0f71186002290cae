/**
 * The connection to `relavium-lsp serve`: starts it over stdio with `vscode-languageclient`,
 * declares the `experimental.relavium` capabilities, routes the server's custom requests and
 * notifications, and restarts it (with a visible notice) when it dies.
 */

import * as vscode from 'vscode';
import {
  CancellationToken,
  CloseAction,
  ErrorAction,
  LanguageClient,
  ResponseError,
  State,
  type CloseHandlerResult,
  type ErrorHandler,
  type ErrorHandlerResult,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
} from 'vscode-languageclient/node';
import {
  Methods,
  type ApprovalMode,
  type EditorQueryParams,
  type InitializationOptions,
  type OpenUntitledParams,
  type OpenUntitledResult,
  type RelaviumClientCapabilities,
  type RequestApprovalParams,
  type RequestApprovalResult,
  type SessionEvent,
  type SessionsChangedParams,
  type WorkspaceMemoryChangedParams,
} from '../protocol';
import type { ConnectionView } from '../shared/viewState';
import { checkVersions, describeMismatch, type VersionVerdict } from '../install/versionCheck';
import { EDITOR_TOOLS, answerEditorQuery } from './editorTools';
import { resolveServerCommand, type ServerCommand } from './serverCommand';

/** What the rest of the extension does with the server's messages. */
export interface ServerHandlers {
  onSessionEvent(event: SessionEvent): void;
  /** `relavium/sessionsChanged`: some window created, renamed, deleted or ran a session. */
  onSessionsChanged(params: SessionsChangedParams): void;
  /** `relavium/workspaceMemoryChanged`: a workspace memory has a new revision (any window). */
  onWorkspaceMemoryChanged?(params: WorkspaceMemoryChangedParams): void;
  requestApproval(params: RequestApprovalParams, token: CancellationToken): Promise<RequestApprovalResult>;
  openUntitled(params: OpenUntitledParams): Promise<OpenUntitledResult>;
}

/** What the extension does when no server can be used (the install offers live elsewhere). */
export interface ServerStartHooks {
  /** The server this extension installed, when there is one. */
  privateServer(): string | undefined;
  /** No server was found, or the one found failed to start. */
  missing(reason: string): void;
  /** The server answered with other versions (`protocol-differs`: it was stopped). */
  mismatch(verdict: Exclude<VersionVerdict, { kind: 'match' }>, source: string): void;
}

type FoundCommand = Extract<ServerCommand, { found: true }>;

/** A JSON-RPC error from the server, with the stable `data.code` when it sent one. */
export class ServerRequestError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly rpcCode?: number,
    /** The rest of the error's `data` (e.g. `workingDir` of `broad_working_dir`). */
    readonly data: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'ServerRequestError';
  }
}

const CAPABILITIES: RelaviumClientCapabilities = {
  approvals: true,
  openUntitled: true,
  editorState: true,
  editorTools: EDITOR_TOOLS,
};
const RESTART_WINDOW_MS = 3 * 60_000;
const MAX_RESTARTS = 5;

/**
 * Declares `capabilities.experimental.relavium` in `initialize`, and hides the server's
 * `workspace/executeCommand` commands from VS Code: they exist for command-palette-only
 * clients, this extension has its own commands, and registering both would collide on ids
 * such as `relavium.abortTurn`.
 */
class RelaviumCapabilityFeature implements StaticFeature {
  fillClientCapabilities(capabilities: { experimental?: unknown }): void {
    const experimental =
      typeof capabilities.experimental === 'object' && capabilities.experimental !== null
        ? (capabilities.experimental as Record<string, unknown>)
        : {};
    capabilities.experimental = { ...experimental, relavium: CAPABILITIES };
  }

  preInitialize(capabilities: { executeCommandProvider?: unknown }): void {
    // Runs before any feature's initialize(), so the command feature never sees them.
    delete capabilities.executeCommandProvider;
  }

  initialize(): void {
    // Nothing to do once the server answered: the capability is purely declarative.
  }

  getState(): { kind: 'static' } {
    return { kind: 'static' };
  }

  clear(): void {
    // Stateless.
  }
}

function isSessionEvent(value: unknown): value is SessionEvent {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const event = value as Record<string, unknown>;
  return (
    typeof event.type === 'string' &&
    typeof event.sessionId === 'string' &&
    typeof event.sequenceNumber === 'number' &&
    Number.isInteger(event.sequenceNumber)
  );
}

function isSessionsChanged(value: unknown): value is SessionsChangedParams {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const changes = (value as Record<string, unknown>).changes;
  return (
    Array.isArray(changes) &&
    changes.every(
      (change: unknown) =>
        typeof change === 'object' &&
        change !== null &&
        typeof (change as Record<string, unknown>).sessionId === 'string' &&
        typeof (change as Record<string, unknown>).kind === 'string',
    )
  );
}

function toRequestError(error: unknown): Error {
  if (error instanceof ResponseError) {
    const data: unknown = error.data;
    const details = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
    const code =
      typeof details.code === 'string' ? details.code : error.code === -32602 ? 'validation' : 'internal';
    return new ServerRequestError(error.message, code, error.code, details);
  }
  return error instanceof Error ? error : new Error(String(error));
}

export class RelaviumServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<ConnectionView>();
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  private restarts: number[] = [];
  /** Clients that completed `initialize` at least once (only those are restarted on exit). */
  private readonly initialized = new WeakSet<LanguageClient>();
  private current: ConnectionView = { state: 'starting' };

  /** Fires on every connection state change. */
  readonly onDidChangeState = this.stateEmitter.event;
  /** Fires each time the server is (re)started and initialized. */
  readonly onDidBecomeReady = this.readyEmitter.event;

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly handlers: ServerHandlers,
    private readonly hooks: ServerStartHooks,
  ) {}

  /** The current connection state. */
  get state(): ConnectionView {
    return this.current;
  }

  /** Start the server (no-op while one runs); resolves true once it runs and matches. */
  async start(): Promise<boolean> {
    if (this.client !== undefined) {
      return this.current.state === 'running';
    }
    const configuration = vscode.workspace.getConfiguration('relavium');
    const resolved = resolveServerCommand({
      configured: configuration.get<string>('server.command', ''),
      extraArgs: configuration.get<string[]>('server.args', []),
      pathVariable: process.env.PATH,
      workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath),
      workspaceTrusted: vscode.workspace.isTrusted,
      privateServer: this.hooks.privateServer(),
    });
    if (!resolved.found) {
      this.output.appendLine(`No server to start: ${resolved.reason}.`);
      this.setState({ state: 'stopped', reason: resolved.reason });
      this.hooks.missing(resolved.reason);
      return false;
    }
    return this.startResolved(resolved);
  }

  private async startResolved(resolved: FoundCommand): Promise<boolean> {
    this.output.appendLine(`Starting ${resolved.command} ${resolved.args.join(' ')} (${resolved.source})`);
    const client = this.createClient(resolved.command, resolved.args);
    this.client = client;
    this.setState({ state: 'starting' });
    try {
      await client.start();
    } catch (error) {
      if (this.client === client) {
        this.client = undefined;
      }
      const reason = error instanceof Error ? error.message : String(error);
      this.output.appendLine(`The server failed to start: ${reason}`);
      this.setState({ state: 'stopped', reason: `it failed to start (${reason})` });
      await client.dispose().catch(() => undefined);
      this.hooks.missing(`${resolved.command} failed to start (${reason})`);
      return false;
    }
    const verdict = checkVersions(client.initializeResult ?? {});
    if (verdict.kind === 'match') {
      this.output.appendLine(`The server runs (relavium-lsp ${client.initializeResult?.serverInfo?.version ?? '?'}).`);
      return true;
    }
    this.output.appendLine(describeMismatch(verdict));
    if (verdict.kind === 'protocol-differs') {
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      this.setState({
        state: 'stopped',
        reason: `${resolved.command} is version ${verdict.serverVersion}, which does not match this extension`,
      });
    }
    this.hooks.mismatch(verdict, resolved.source);
    return verdict.kind !== 'protocol-differs';
  }

  /** Stop and start again (the "Restart server" action), with progress; says when it fails. */
  async restart(): Promise<boolean> {
    const started = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Restarting the Relavium server…' },
      async () => {
        await this.stop();
        this.restarts = [];
        return this.start();
      },
    );
    if (!started && this.current.state === 'stopped') {
      void vscode.window
        .showErrorMessage(`The Relavium server did not start: ${this.current.reason ?? 'see the log'}.`, 'Show log')
        .then((choice) => {
          if (choice !== undefined) {
            this.output.show();
          }
        });
    }
    return started;
  }

  /** The running server's `serverInfo.version` (undefined while none runs). */
  get serverVersion(): string | undefined {
    return this.current.state === 'running' ? this.client?.initializeResult?.serverInfo?.version : undefined;
  }

  /** Stop the server if it runs. */
  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      await client.dispose().catch(() => undefined);
    }
    this.setState({ state: 'stopped', reason: 'it was stopped' });
  }

  /** Send a custom request; JSON-RPC errors become {@link ServerRequestError}. */
  async request<Result>(method: string, params: object): Promise<Result> {
    const client = this.client;
    if (client?.state !== State.Running) {
      throw new ServerRequestError(
        `The Relavium server is not running (${this.current.reason ?? 'starting'}).`,
        'server_not_running',
      );
    }
    try {
      return await client.sendRequest<Result>(method, params);
    } catch (error) {
      throw toRequestError(error);
    }
  }

  /** Send a custom notification if the server runs (dropped otherwise). */
  notify(method: string, params: object): void {
    if (this.client?.state === State.Running) {
      void this.client.sendNotification(method, params);
    }
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
    this.readyEmitter.dispose();
  }

  private setState(state: ConnectionView): void {
    this.current = state;
    this.stateEmitter.fire(state);
  }

  private initializationOptions(): InitializationOptions {
    const configuration = vscode.workspace.getConfiguration('relavium');
    const agent = configuration.get<string>('agent', '').trim();
    const approval = configuration.get<ApprovalMode>('approval', 'ask');
    return agent === ''
      ? { clientName: 'vscode', approval }
      : { clientName: 'vscode', defaultAgent: agent, approval };
  }

  private createClient(command: string, args: string[]): LanguageClient {
    // No `transport`: plain stdio. TransportKind.stdio would append a `--stdio` flag that
    // `relavium-lsp serve` does not take.
    const serverOptions: ServerOptions = { command, args };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      initializationOptions: this.initializationOptions(),
      outputChannel: this.output,
      // Called only after the client below exists.
      errorHandler: this.errorHandler(() => this.initialized.has(client)),
      middleware: {
        handleRegisterCapability: async (params, next) => {
          const registrations = params.registrations.filter(
            (registration) => registration.method !== 'workspace/executeCommand',
          );
          await next({ registrations }, CancellationToken.None);
        },
      },
    };
    const client: LanguageClient = new LanguageClient('relavium', 'Relavium', serverOptions, clientOptions);
    client.registerFeature(new RelaviumCapabilityFeature());
    client.onNotification(Methods.sessionEvent, (params: unknown) => {
      if (isSessionEvent(params)) {
        this.handlers.onSessionEvent(params);
      }
    });
    client.onNotification(Methods.sessionsChanged, (params: unknown) => {
      if (isSessionsChanged(params)) {
        this.handlers.onSessionsChanged(params);
      }
    });
    client.onNotification(Methods.workspaceMemoryChanged, (params: WorkspaceMemoryChangedParams) => {
      this.handlers.onWorkspaceMemoryChanged?.(params);
    });
    client.onRequest(Methods.requestApproval, (params: RequestApprovalParams, token: CancellationToken) =>
      this.handlers.requestApproval(params, token),
    );
    client.onRequest(Methods.openUntitled, (params: OpenUntitledParams) =>
      this.handlers.openUntitled(params),
    );
    client.onRequest(Methods.editorQuery, (params: EditorQueryParams) => answerEditorQuery(params));
    client.onDidChangeState((change) => {
      if (this.client !== client) {
        return;
      }
      if (change.newState === State.Running) {
        this.initialized.add(client);
        this.setState({ state: 'running' });
        this.readyEmitter.fire();
      } else if (change.newState === State.Starting) {
        this.setState({ state: 'starting' });
      } else if (this.current.state !== 'stopped') {
        this.setState({ state: 'stopped', reason: 'the server exited' });
      }
    });
    return client;
  }

  private errorHandler(wasRunning: () => boolean): ErrorHandler {
    return {
      error: (_error, _message, count): ErrorHandlerResult => ({
        action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
        handled: true,
      }),
      closed: (): CloseHandlerResult => {
        if (!wasRunning()) {
          // It never initialized: start() reports the failure; restarting would only loop.
          return { action: CloseAction.DoNotRestart, handled: true };
        }
        const now = Date.now();
        this.restarts = this.restarts.filter((time) => now - time < RESTART_WINDOW_MS);
        if (this.restarts.length >= MAX_RESTARTS) {
          const reason = `it stopped ${MAX_RESTARTS} times in 3 minutes and is no longer restarted automatically`;
          this.output.appendLine(`The server ${reason}.`);
          this.setState({ state: 'stopped', reason });
          void vscode.window
            .showErrorMessage(`Relavium server ${reason}.`, 'Restart server')
            .then((choice) => {
              if (choice !== undefined) {
                void this.restart();
              }
            });
          return { action: CloseAction.DoNotRestart, handled: true };
        }
        this.restarts.push(now);
        this.output.appendLine('The server stopped unexpectedly; restarting it.');
        this.setState({ state: 'starting', reason: 'restarting after it stopped' });
        void vscode.window.showWarningMessage('The Relavium server stopped unexpectedly; restarting it.');
        return { action: CloseAction.Restart, handled: true };
      },
    };
  }
}
