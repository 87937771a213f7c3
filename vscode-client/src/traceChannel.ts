import * as vscode from 'vscode';
import { CONFIG_SECTION, SettingDefaults, Settings } from './constants';

/**
 * vscode-languageclient writes its message trace only to a channel whose log
 * level is Trace. This channel reports Trace while `chunkls.trace.server` is not
 * "off" and writes the trace into the chunkls output channel, so the setting
 * alone turns the trace on and off (no log-level change needed).
 */
export class TraceChannel implements vscode.LogOutputChannel {
  private readonly emitter = new vscode.EventEmitter<vscode.LogLevel>();
  private readonly listener: vscode.Disposable;
  readonly onDidChangeLogLevel = this.emitter.event;

  constructor(private readonly output: vscode.LogOutputChannel) {
    this.listener = vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${CONFIG_SECTION}.${Settings.traceServer}`)) {
        this.emitter.fire(this.logLevel);
      }
    });
  }

  private get enabled(): boolean {
    return vscode.workspace.getConfiguration(CONFIG_SECTION).get<string>(Settings.traceServer, SettingDefaults.traceServer) !== 'off';
  }

  get name(): string {
    return this.output.name;
  }

  get logLevel(): vscode.LogLevel {
    return this.enabled ? vscode.LogLevel.Trace : this.output.logLevel;
  }

  trace(message: string, ...args: unknown[]): void {
    if (this.enabled) {
      this.output.info(`[trace] ${message}`, ...args);
    } else {
      this.output.trace(message, ...args);
    }
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

  /** Disposes the listener only: the output channel belongs to the extension. */
  dispose(): void {
    this.listener.dispose();
    this.emitter.dispose();
  }
}
