import type * as vscode from 'vscode';
import type { ServerLog } from './serverLog';

/**
 * The output channel as vscode-languageclient sees it: what the client logs
 * (window/logMessage among it) goes through the ServerLog, which drops the
 * server's stderr copy of the same message.
 */
export class ClientChannel implements vscode.LogOutputChannel {
  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly log: ServerLog,
  ) {}

  get name(): string {
    return this.output.name;
  }

  get logLevel(): vscode.LogLevel {
    return this.output.logLevel;
  }

  get onDidChangeLogLevel(): vscode.Event<vscode.LogLevel> {
    return this.output.onDidChangeLogLevel;
  }

  trace(message: string, ...args: unknown[]): void {
    this.output.trace(message, ...args);
  }

  debug(message: string, ...args: unknown[]): void {
    if (args.length > 0) {
      this.output.debug(message, ...args);
    } else {
      this.log.client('debug', message);
    }
  }

  info(message: string, ...args: unknown[]): void {
    if (args.length > 0) {
      this.output.info(message, ...args);
    } else {
      this.log.client('info', message);
    }
  }

  warn(message: string, ...args: unknown[]): void {
    if (args.length > 0) {
      this.output.warn(message, ...args);
    } else {
      this.log.client('warn', message);
    }
  }

  error(error: string | Error, ...args: unknown[]): void {
    if (typeof error !== 'string' || args.length > 0) {
      this.output.error(error, ...args);
    } else {
      this.log.client('error', error);
    }
  }

  append(value: string): void {
    this.output.append(value);
  }

  appendLine(value: string): void {
    this.output.appendLine(value);
  }

  replace(value: string): void {
    this.output.replace(value);
  }

  clear(): void {
    this.output.clear();
  }

  show(preserveFocus?: boolean): void;
  /** @deprecated Use the overload with just one parameter. */
  show(column?: vscode.ViewColumn, preserveFocus?: boolean): void;
  show(first?: boolean | vscode.ViewColumn, second?: boolean): void {
    this.output.show(typeof first === 'boolean' ? first : second);
  }

  hide(): void {
    this.output.hide();
  }

  /** Nothing to dispose: the output channel belongs to the extension. */
  dispose(): void {
    return;
  }
}
