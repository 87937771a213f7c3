/**
 * The server's stderr in the output channel: each line at its own level, once.
 *
 * The server logs `chunkls LEVEL: message` lines to stderr, and sends some of
 * the same messages as window/logMessage, which vscode-languageclient logs
 * too. A stderr line waits a moment; when the client logs the same text
 * (before or after), the stderr copy is dropped and the client's level wins.
 * Pure (no VS Code) so it can be unit-tested.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Where the lines go (a vscode.LogOutputChannel, or a fake in the tests). */
export type LogSink = Record<LogLevel, (message: string) => void>;

export interface LogTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

const realTimers: LogTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
};

/** Python's logging levels as the server writes them (`chunkls INFO: ...`). */
const RECORD = /^chunkls (DEBUG|INFO|WARNING|ERROR|CRITICAL): (.*)$/;

const LEVELS: Record<string, LogLevel> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  ERROR: 'error',
  CRITICAL: 'error',
};

/** pygls's routine notes about a race of the protocol: not a user's concern. */
const ROUTINE: readonly RegExp[] = [
  /^Cancel notification for unknown message id/,
  /^Received response to unknown message id/,
  /^Ignoring notification for unknown method/,
];

/**
 * A stderr line's level and message. A line that is not a record (a
 * traceback's continuation) keeps the level of the record before it.
 */
export function parseServerLine(line: string, previous: LogLevel): { level: LogLevel; message: string; record: boolean } {
  const match = RECORD.exec(line);
  if (match === null) {
    return { level: previous, message: line, record: false };
  }
  const message = match[2] ?? '';
  const level = ROUTINE.some((pattern) => pattern.test(message)) ? 'debug' : (LEVELS[match[1] ?? ''] ?? 'info');
  return { level, message, record: true };
}

interface Pending {
  level: LogLevel;
  message: string;
  timer: unknown;
}

export class ServerLog {
  /** Level of continuation lines before the first record: a crash before logging is set up. */
  private previous: LogLevel = 'error';
  private readonly pending: Pending[] = [];
  private readonly logged: { message: string; at: number }[] = [];

  constructor(
    private readonly sink: LogSink,
    private readonly delayMs = 200,
    private readonly windowMs = 5000,
    private readonly timers: LogTimers = realTimers,
  ) {}

  /** A line of the server's stderr. */
  stderr(line: string): void {
    const { level, message, record } = parseServerLine(line, this.previous);
    if (record) {
      this.previous = level;
    }
    if (message.trim().length === 0) {
      return;
    }
    if (this.claimLogged(message)) {
      return; // the client logged it already (window/logMessage)
    }
    const entry: Pending = { level, message, timer: undefined };
    entry.timer = this.timers.setTimeout(() => {
      const index = this.pending.indexOf(entry);
      if (index >= 0) {
        this.pending.splice(index, 1);
        this.sink[level](message);
      }
    }, this.delayMs);
    this.pending.push(entry);
  }

  /** A message the language client logs (window/logMessage or its own). */
  client(level: LogLevel, message: string): void {
    this.sink[level](message);
    const index = this.pending.findIndex((entry) => entry.message === message);
    if (index >= 0) {
      const [entry] = this.pending.splice(index, 1);
      this.timers.clearTimeout(entry?.timer);
      return;
    }
    this.logged.push({ message, at: this.timers.now() });
    if (this.logged.length > 200) {
      this.logged.shift();
    }
  }

  /** Logs what still waits (the server stopped). */
  flush(): void {
    for (const entry of this.pending.splice(0)) {
      this.timers.clearTimeout(entry.timer);
      this.sink[entry.level](entry.message);
    }
  }

  private claimLogged(message: string): boolean {
    const now = this.timers.now();
    while (this.logged.length > 0 && now - (this.logged[0]?.at ?? now) > this.windowMs) {
      this.logged.shift();
    }
    const index = this.logged.findIndex((entry) => entry.message === message);
    if (index < 0) {
      return false;
    }
    this.logged.splice(index, 1);
    return true;
  }
}
