/**
 * Getting a server when there is none, or the wrong one: the "Install the Relavium server"
 * offer, "Use an existing one…" (written to the user settings, which apply to this window,
 * remote windows included), the version-mismatch offer, and "Relavium: Show Setup".
 */

import * as vscode from 'vscode';
import { PACKAGE_VERSION, PROTOCOL_VERSION } from '../protocol';
import type { RelaviumServer, ServerStartHooks } from '../server/relaviumServer';
import { ServerInstaller } from './serverInstaller';
import { describeMismatch } from './versionCheck';

const INSTALL = 'Install the Relavium server';
const USE_EXISTING = 'Use an existing one…';
const SETTINGS = 'Settings';
const INSTALL_MATCHING = 'Install the matching server';
const SHOW_LOG = 'Show log';

export class ServerSetup {
  private server: RelaviumServer | undefined;
  private offeredInstall = false;
  private readonly offeredMismatch = new Set<string>();

  constructor(
    private readonly output: vscode.OutputChannel,
    readonly installer: ServerInstaller,
  ) {}

  /** Connect to the server whose start it watches (set once, right after both exist). */
  attach(server: RelaviumServer): void {
    this.server = server;
  }

  /** What the server calls when it has no usable server. */
  readonly hooks: ServerStartHooks = {
    privateServer: () => this.installer.installed(),
    missing: (reason) => {
      if (this.offeredInstall) {
        return;
      }
      this.offeredInstall = true;
      void vscode.window
        .showWarningMessage(`Relavium needs its server: ${reason}.`, INSTALL, USE_EXISTING, SETTINGS)
        .then((choice) => this.answer(choice));
    },
    mismatch: (verdict, source) => {
      const key = `${verdict.kind}:${verdict.serverVersion}`;
      if (this.offeredMismatch.has(key) || (verdict.kind === 'package-differs' && source === 'private')) {
        return;
      }
      this.offeredMismatch.add(key);
      const show =
        verdict.kind === 'protocol-differs'
          ? vscode.window.showErrorMessage
          : vscode.window.showInformationMessage;
      void show(describeMismatch(verdict), INSTALL_MATCHING, SHOW_LOG).then((choice) => this.answer(choice));
    },
  };

  /** Act on a button of the offers (also the chat banner's buttons). */
  async answer(choice: string | undefined): Promise<void> {
    switch (choice) {
      case INSTALL:
      case INSTALL_MATCHING:
        await this.installAndStart(false);
        return;
      case USE_EXISTING:
        await this.chooseExecutable();
        return;
      case SETTINGS:
        await vscode.commands.executeCommand('workbench.action.openSettings', 'relavium.server');
        return;
      case SHOW_LOG:
        this.showLog();
        return;
    }
  }

  /** Install (or reinstall) the private server, then start it. */
  async installAndStart(reinstall: boolean): Promise<void> {
    const installed = await this.installer.install(reinstall);
    if (!installed || this.server === undefined) {
      return;
    }
    const configured = vscode.workspace.getConfiguration('relavium').get<string>('server.command', '').trim();
    if (configured !== '') {
      void vscode.window
        .showInformationMessage(
          `The Relavium server is installed, but "relavium.server.command" (${configured}) still chooses ` +
            'another one; clear that setting to use the installed server.',
          SETTINGS,
        )
        .then((choice) => this.answer(choice));
    }
    await this.server.restart();
  }

  /** Pick a relavium-lsp executable and keep it in the user settings. */
  async chooseExecutable(): Promise<void> {
    const picked = await vscode.window.showOpenDialog({
      canSelectFiles: true,
      canSelectFolders: false,
      canSelectMany: false,
      openLabel: 'Use this server',
      title: 'Choose the relavium-lsp executable',
    });
    const file = picked?.[0]?.fsPath;
    if (file === undefined) {
      return;
    }
    this.output.appendLine(`Using the chosen server ${file} (user setting relavium.server.command).`);
    // User settings: the scope that applies to this window, local or remote (the setting is
    // window-scoped, so a remote window reads it too); the change restarts the server.
    await vscode.workspace
      .getConfiguration('relavium')
      .update('server.command', file, vscode.ConfigurationTarget.Global);
  }

  /** Show the "Relavium" output channel (every start attempt, failure and install step). */
  showLog(): void {
    this.output.show();
  }

  /** "Relavium: Show Setup": versions, which server, where the private one lives. */
  showSetup(): void {
    const server = this.server?.state;
    const lines = [
      '--- Relavium setup ---',
      `Extension: ${PACKAGE_VERSION} (protocol ${PROTOCOL_VERSION}) on ${process.platform}`,
      `Server: ${server?.state ?? 'unknown'}${server?.reason === undefined ? '' : ` (${server.reason})`}` +
        (this.server?.serverVersion === undefined ? '' : `, relavium-lsp ${this.server.serverVersion}`),
      `Setting relavium.server.command: ${vscode.workspace.getConfiguration('relavium').get<string>('server.command', '') || '(empty)'}`,
      `Installed server: ${this.installer.installed() ?? `none (would go to ${this.installer.layout.versionDir})`}`,
    ];
    for (const line of lines) {
      this.output.appendLine(line);
    }
    this.output.show(true);
  }
}
