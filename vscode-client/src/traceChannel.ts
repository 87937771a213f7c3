import * as vscode from 'vscode';
import { CONFIG_SECTION, SettingDefaults, Settings } from './constants';

/**
 * vscode-languageclient writes its message trace only to a channel whose log
 * level is Trace. This view of the chunkls output channel reports Trace while
 * `chunkls.trace.server` is not "off" and writes the trace there at info level,
 * so the setting alone turns the trace on and off (no log-level change needed).
 * Everything else is the output channel's own.
 */
export function traceChannel(output: vscode.LogOutputChannel): vscode.LogOutputChannel {
  const enabled = (): boolean =>
    vscode.workspace.getConfiguration(CONFIG_SECTION).get<string>(Settings.traceServer, SettingDefaults.traceServer) !== 'off';
  const emitter = new vscode.EventEmitter<vscode.LogLevel>();
  const listener = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration(`${CONFIG_SECTION}.${Settings.traceServer}`)) {
      emitter.fire(enabled() ? vscode.LogLevel.Trace : output.logLevel);
    }
  });
  const own: Partial<Record<keyof vscode.LogOutputChannel, unknown>> = {
    onDidChangeLogLevel: emitter.event,
    trace: (message: string, ...args: unknown[]) => {
      if (enabled()) {
        output.info(`[trace] ${message}`, ...args);
      } else {
        output.trace(message, ...args);
      }
    },
    // the output channel belongs to the extension: only this view's own parts go
    dispose: () => {
      listener.dispose();
      emitter.dispose();
    },
  };
  return new Proxy(output, {
    get(target, property, receiver): unknown {
      if (property === 'logLevel') {
        return enabled() ? vscode.LogLevel.Trace : target.logLevel;
      }
      if (property in own) {
        return own[property as keyof vscode.LogOutputChannel];
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
