import type * as vscode from 'vscode';

/**
 * A log output channel that hands everything to the extension's own channel.
 * The channels vscode-languageclient is given (ClientChannel, TraceChannel)
 * extend it and override only what they do differently.
 */
export class WrappedChannel implements vscode.LogOutputChannel {
  constructor(protected readonly output: vscode.LogOutputChannel) {}

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
    this.output.debug(message, ...args);
  }

  info(message: string, ...args: unknown[]): void {
    this.output.info(message, ...args);
  }

  warn(message: string, ...args: unknown[]): void {
    this.output.warn(message, ...args);
  }

  error(error: string | Error, ...args: unknown[]): void {
    this.output.error(error, ...args);
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
