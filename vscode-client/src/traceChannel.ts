import * as vscode from 'vscode';
import { CONFIG_SECTION, SettingDefaults, Settings } from './constants';
import { WrappedChannel } from './wrappedChannel';

/**
 * vscode-languageclient writes its message trace only to a channel whose log
 * level is Trace. This channel reports Trace while `chunkls.trace.server` is not
 * "off" and writes the trace into the chunkls output channel, so the setting
 * alone turns the trace on and off (no log-level change needed).
 */
export class TraceChannel extends WrappedChannel {
  private readonly emitter = new vscode.EventEmitter<vscode.LogLevel>();
  private readonly listener: vscode.Disposable;

  constructor(output: vscode.LogOutputChannel) {
    super(output);
    this.listener = vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${CONFIG_SECTION}.${Settings.traceServer}`)) {
        this.emitter.fire(this.logLevel);
      }
    });
  }

  private get enabled(): boolean {
    return vscode.workspace.getConfiguration(CONFIG_SECTION).get<string>(Settings.traceServer, SettingDefaults.traceServer) !== 'off';
  }

  override get onDidChangeLogLevel(): vscode.Event<vscode.LogLevel> {
    return this.emitter.event;
  }

  override get logLevel(): vscode.LogLevel {
    return this.enabled ? vscode.LogLevel.Trace : this.output.logLevel;
  }

  override trace(message: string, ...args: unknown[]): void {
    if (this.enabled) {
      this.output.info(`[trace] ${message}`, ...args);
    } else {
      this.output.trace(message, ...args);
    }
  }

  /** Disposes the listener only: the output channel belongs to the extension. */
  override dispose(): void {
    this.listener.dispose();
    this.emitter.dispose();
  }
}
