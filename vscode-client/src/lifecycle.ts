/** Start, stop and restart of the server, without VS Code: one at a time, the interpreter chosen anew each start. */

import type { Choice } from './interpreter';
import { needsRestart } from './settings';

/** A usable interpreter, as `Choice` gives it. */
export type Chosen = Extract<Choice, { ok: true }>;

export interface LifecycleHooks {
  /** Reads the settings as they are now and picks the interpreter (or says why there is none). */
  choose(): Promise<Choice>;
  /** Starts a server process with this interpreter. */
  launch(python: Chosen): Promise<void>;
  /** Stops the running server, if any. */
  shutdown(): Promise<void>;
  /** Shows the notification for an interpreter that cannot run the server; nothing is started. */
  fail(message: string): void;
  /** A line for the output channel. */
  log(message: string): void;
}

export class Lifecycle {
  /** The chain of queued operations, so a restart never races a start. */
  private queue: Promise<void> = Promise.resolve();

  /** The hooks that do the work. */
  constructor(private readonly hooks: LifecycleHooks) {}

  private enqueue(op: () => Promise<void>): Promise<void> {
    const next = this.queue.then(op, op);
    this.queue = next.catch(() => undefined);
    return next;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  /** Stops the server and starts it again with the interpreter the settings name now. */
  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.hooks.shutdown();
      await this.doStart();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.hooks.shutdown());
  }

  /** Restarts when the interpreter setting changed; returns the restart, or undefined when none is needed. */
  onConfigurationChanged(affects: (section: string) => boolean): Promise<void> | undefined {
    if (!needsRestart(affects)) {
      return undefined;
    }
    this.hooks.log('The Python interpreter setting changed: restarting the server');
    return this.restart();
  }

  private async doStart(): Promise<void> {
    const choice = await this.hooks.choose();
    if (!choice.ok) {
      this.hooks.fail(choice.message);
      return;
    }
    await this.hooks.launch(choice);
  }
}
