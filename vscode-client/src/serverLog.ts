/**
 * The server's stderr in the output channel, each line at its level.
 *
 * The server sends its log as window/logMessage while the client listens
 * (vscode-languageclient logs those at their level); what it writes to stderr
 * instead (before `initialize`, after `shutdown`, a crash) comes here, once:
 * no line is in both. Pure (no VS Code) so it can be unit-tested.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Where the lines go (a vscode.LogOutputChannel, or a fake in the tests). */
export type LogSink = Record<LogLevel, (message: string) => void>;

/** Python's logging levels as the server writes them (`chunkls INFO: ...`). */
const RECORD = /^chunkls (DEBUG|INFO|WARNING|ERROR|CRITICAL): (.*)$/;

const LEVELS: Record<string, LogLevel> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  ERROR: 'error',
  CRITICAL: 'error',
};

/**
 * A stderr line's level and message. A line that is not a record (a
 * traceback's continuation) keeps the level of the record before it.
 */
export function parseServerLine(line: string, previous: LogLevel): { level: LogLevel; message: string; record: boolean } {
  const match = RECORD.exec(line);
  if (match === null) {
    return { level: previous, message: line, record: false };
  }
  return { level: LEVELS[match[1] ?? ''] ?? 'info', message: match[2] ?? '', record: true };
}

/** Writes the server's stderr lines to a sink at their levels. */
export class ServerStderr {
  /** Level of continuation lines before the first record: a crash before logging is set up. */
  private previous: LogLevel = 'error';

  constructor(private readonly sink: LogSink) {}

  line(text: string): void {
    const { level, message, record } = parseServerLine(text, this.previous);
    if (record) {
      this.previous = level;
    }
    if (message.trim().length > 0) {
      this.sink[level](message);
    }
  }
}
