import * as readline from 'node:readline';
import type { Readable } from 'node:stream';
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  State,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import {
  CLIENT_ID,
  CLIENT_NAME,
  CONFIG_SECTION,
  Commands,
  STATUS_NOTIFICATION,
  ServerCommands,
  Settings,
} from './constants';
import { type Choice } from './interpreter';
import { choosePython } from './pythonChoice';
import { Lifecycle, type Chosen } from './lifecycle';
import { readLayout, SERVER_ARGS, serverEnv, type ServerLayout } from './launch';
import { traceChannel } from './traceChannel';
import { ServerStderr } from './serverLog';
import {
  documentLanguages,
  documentSelector,
  languagesNotSent,
  needsNotification,
  toDidChangeConfigurationParams,
  toServerSettings,
} from './settings';
import { parseStatus, type ClientPhase, type IndexStatus } from './status';

export interface ServerEvents {
  onPhase(phase: ClientPhase): void;
  onStatus(status: IndexStatus): void;
}

/** Calls `onLine` with each line of a stream. */
function eachLine(input: Readable, onLine: (line: string) => void): void {
  readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on('line', onLine);
}

/** Owns the LanguageClient: finds Python, starts, stops, restarts, forwards settings. */
export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly lifecycle: Lifecycle;
  private stopping = false;
  private failureShown = false;
  private statusNotified = false;
  private readonly disposables: { dispose(): unknown }[] = [];
  private readonly trace: vscode.LogOutputChannel;
  private readonly serverStderr: ServerStderr;
  /** The languages whose documents the running client sends (its document selector's). */
  private sentLanguages: readonly string[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
    private readonly events: ServerEvents,
  ) {
    this.trace = traceChannel(output);
    this.serverStderr = new ServerStderr({
      debug: (message) => output.debug(message),
      info: (message) => output.info(message),
      warn: (message) => output.warn(message),
      error: (message) => output.error(message),
    });
    this.lifecycle = new Lifecycle({
      choose: () => this.choosePython(),
      launch: (python) => this.launch(python),
      shutdown: () => this.doStop(),
      fail: (message) => this.showInterpreterFailure(message),
      log: (message) => output.info(message),
    });
    this.disposables.push(
      this.trace,
      vscode.workspace.onDidChangeConfiguration((e) => {
        this.onConfigurationChanged(e);
      }),
    );
  }

  start(): Promise<void> {
    return this.lifecycle.start();
  }

  /** Restart Server: the interpreter setting is read again. */
  restart(): Promise<void> {
    return this.lifecycle.restart();
  }

  stop(): Promise<void> {
    return this.lifecycle.stop();
  }

  /** True when `chunkls.server.pythonPath` is set (then the Python extension is not consulted). */
  usesSetting(): boolean {
    const value = vscode.workspace.getConfiguration(CONFIG_SECTION).get<string>(Settings.pythonPath);
    return value !== undefined && value.trim().length > 0;
  }

  get isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  /** The running client's converters between LSP JSON and VS Code types (they follow its URI settings). */
  converters(): { p2c: LanguageClient['protocol2CodeConverter']; c2p: LanguageClient['code2ProtocolConverter'] } {
    const client = this.client;
    if (client?.state !== State.Running) {
      throw new Error('the chunkls language server is not running');
    }
    return { p2c: client.protocol2CodeConverter, c2p: client.code2ProtocolConverter };
  }

  /** Sends workspace/executeCommand for one of the server's commands. */
  async executeCommand<T>(command: string, args: unknown[], token?: vscode.CancellationToken): Promise<T> {
    const client = this.client;
    if (client?.state !== State.Running) {
      throw new Error('the chunkls language server is not running');
    }
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }, token)) as T;
  }

  /** Picks the interpreter from the settings as they are now (see pythonChoice.ts). */
  private async choosePython(): Promise<Choice> {
    this.failureShown = false;
    this.events.onPhase('starting');
    return choosePython(this.context.extensionPath, this.output);
  }

  /** The notification for an interpreter that cannot run the server (the same at start-up, restart and a change). */
  private showInterpreterFailure(message: string): void {
    this.output.error(message);
    this.events.onPhase('failed');
    void vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output').then((choice) => {
      if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', `${CONFIG_SECTION}.${Settings.pythonPath}`);
      } else if (choice === 'Show Output') {
        this.output.show();
      }
    });
  }

  private showCrash(message: string): void {
    if (this.failureShown) {
      return;
    }
    this.failureShown = true;
    this.events.onPhase('failed');
    void vscode.window.showErrorMessage(message, 'Show Output', 'Restart').then((choice) => {
      if (choice === 'Show Output') {
        this.output.show();
      } else if (choice === 'Restart') {
        void vscode.commands.executeCommand(Commands.restartServer);
      }
    });
  }

  private async launch(found: Chosen): Promise<void> {
    const extensionPath = this.context.extensionPath;
    const layout: ServerLayout = readLayout(extensionPath);
    const env = serverEnv(layout, found.version, process.env.PYTHONPATH);
    if (env === undefined) {
      this.events.onPhase('failed');
      return;
    }
    const python = found.command;
    this.output.info(`PYTHONPATH for the server: ${env.PYTHONPATH ?? ''}`);
    const folder = vscode.workspace.workspaceFolders?.[0];
    const serverOptions: ServerOptions = {
      command: python,
      args: [...SERVER_ARGS],
      transport: TransportKind.stdio,
      options: {
        cwd: folder?.uri.scheme === 'file' ? folder.uri.fsPath : extensionPath,
        env,
      },
    };
    // fixed for the client's life: a navigation language added later restarts it
    const languages = documentLanguages(toServerSettings(vscode.workspace.getConfiguration(CONFIG_SECTION)));
    const clientOptions: LanguageClientOptions = {
      documentSelector: documentSelector(languages),
      outputChannel: this.output,
      stdioOptions: {
        stdout: (input) => eachLine(input, (line) => this.output.info(line)),
        stderr: (input) => eachLine(input, (line) => this.serverStderr.line(line)),
      },
      traceOutputChannel: this.trace,
      initializationOptions: () => toServerSettings(vscode.workspace.getConfiguration(CONFIG_SECTION)),
      errorHandler: {
        error: (_error, _message, count) => ({
          action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
        }),
        closed: () => {
          if (!this.stopping) {
            this.showCrash('The chunkls language server stopped unexpectedly.');
          }
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        workspace: {
          configuration: (params, token, next) => {
            // Answer the server's pull for "chunkls" with the same shape as initializationOptions.
            const answers = params.items.map((item) => {
              if (item.section !== CONFIG_SECTION) {
                return undefined;
              }
              const scope = item.scopeUri !== undefined ? vscode.Uri.parse(item.scopeUri) : undefined;
              return toServerSettings(vscode.workspace.getConfiguration(CONFIG_SECTION, scope));
            });
            if (answers.every((a) => a !== undefined)) {
              return answers;
            }
            return Promise.resolve(next(params, token)).then((fallback) =>
              Array.isArray(fallback) ? answers.map((a, i): unknown => a ?? fallback[i]) : fallback,
            );
          },
        },
        handleWorkDoneProgress: (token, params, next) => {
          next(token, params);
          if (params.kind === 'end') {
            void this.refreshStats();
          }
        },
      },
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    client.onNotification(STATUS_NOTIFICATION, (params: unknown) => {
      const status = parseStatus(params);
      if (status !== undefined) {
        this.statusNotified = true;
        this.events.onStatus(status);
      }
    });
    this.client = client;
    this.sentLanguages = languages;
    this.stopping = false;
    this.statusNotified = false;
    try {
      await client.start();
    } catch (error) {
      this.output.error(`Starting the server failed: ${String(error)}`);
      this.showCrash(
        `The chunkls language server could not start (${python} -m chunkls serve). See the output for details.`,
      );
      return;
    }
    this.events.onPhase('running');
    void this.refreshStats();
  }

  private async refreshStats(): Promise<void> {
    try {
      const stats = await this.executeCommand<unknown>(ServerCommands.stats, []);
      if (typeof stats === 'object' && stats !== null) {
        const s = stats as { chunks?: unknown; files?: unknown; skipped?: unknown };
        const status = parseStatus({
          indexing: false,
          chunks: s.chunks,
          files: s.files,
          skipped: Array.isArray(s.skipped) ? s.skipped.length : s.skipped,
        });
        // A status notification is authoritative; stats only fill the gap before the first one.
        if (status !== undefined && !this.statusNotified) {
          this.events.onStatus(status);
        }
      }
    } catch (error) {
      this.output.debug(`${ServerCommands.stats}: ${String(error)}`);
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client === undefined) {
      return;
    }
    this.stopping = true;
    try {
      if (client.state !== State.Stopped) {
        await client.stop(5000);
      }
    } catch (error) {
      this.output.warn(`Stopping the server: ${String(error)}`);
    } finally {
      await client.dispose().catch(() => undefined);
      this.stopping = false;
      this.events.onPhase('stopped');
    }
  }

  private onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    const affects = (section: string): boolean => e.affectsConfiguration(section);
    // The interpreter setting restarts the server (the restart runs in the lifecycle's queue).
    if (this.lifecycle.onConfigurationChanged(affects) !== undefined) {
      return;
    }
    const client = this.client;
    if (client !== undefined && affects(`${CONFIG_SECTION}.${Settings.navigationLanguages}`)) {
      const settings = toServerSettings(vscode.workspace.getConfiguration(CONFIG_SECTION));
      const added = languagesNotSent(this.sentLanguages, settings);
      if (added.length > 0) {
        this.output.info(
          `${CONFIG_SECTION}.${Settings.navigationLanguages} added ${added.join(', ')}: restarting the server so that VS Code sends those documents`,
        );
        void this.lifecycle.restart();
        return;
      }
    }
    if (needsNotification(affects) && client?.state === State.Running) {
      const params = toDidChangeConfigurationParams(vscode.workspace.getConfiguration(CONFIG_SECTION));
      void client.sendNotification(DidChangeConfigurationNotification.type, params).catch((error: unknown) => {
        this.output.warn(`didChangeConfiguration: ${String(error)}`);
      });
    }
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
    void this.stop();
  }
}
