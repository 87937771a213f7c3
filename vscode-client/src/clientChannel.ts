import type * as vscode from 'vscode';
import type { ServerLog } from './serverLog';
import { WrappedChannel } from './wrappedChannel';

/**
 * The output channel as vscode-languageclient sees it: what the client logs
 * (window/logMessage among it) goes through the ServerLog, which drops the
 * server's stderr copy of the same message.
 */
export class ClientChannel extends WrappedChannel {
  constructor(
    output: vscode.LogOutputChannel,
    private readonly log: ServerLog,
  ) {
    super(output);
  }

  override debug(message: string, ...args: unknown[]): void {
    if (args.length > 0) {
      this.output.debug(message, ...args);
    } else {
      this.log.client('debug', message);
    }
  }

  override info(message: string, ...args: unknown[]): void {
    if (args.length > 0) {
      this.output.info(message, ...args);
    } else {
      this.log.client('info', message);
    }
  }

  override warn(message: string, ...args: unknown[]): void {
    if (args.length > 0) {
      this.output.warn(message, ...args);
    } else {
      this.log.client('warn', message);
    }
  }

  override error(error: string | Error, ...args: unknown[]): void {
    if (typeof error !== 'string' || args.length > 0) {
      this.output.error(error, ...args);
    } else {
      this.log.client('error', error);
    }
  }
}
