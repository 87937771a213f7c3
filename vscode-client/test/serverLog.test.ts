import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseServerLine, ServerLog, type LogLevel, type LogTimers } from '../src/serverLog';

class FakeTimers implements LogTimers {
  time = 0;
  private queue: { at: number; fn: () => void; id: number }[] = [];
  private next = 0;
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.next;
    this.queue.push({ at: this.time + ms, fn, id });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.queue = this.queue.filter((t) => t.id !== handle);
  }
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
    const due = this.queue.filter((t) => t.at <= this.time);
    this.queue = this.queue.filter((t) => t.at > this.time);
    for (const t of due) {
      t.fn();
    }
  }
}

function setup(): { log: ServerLog; lines: string[]; timers: FakeTimers } {
  const lines: string[] = [];
  const sink = (level: LogLevel) => (message: string) => lines.push(`[${level}] ${message}`);
  const timers = new FakeTimers();
  const log = new ServerLog({ debug: sink('debug'), info: sink('info'), warn: sink('warn'), error: sink('error') }, 200, 5000, timers);
  return { log, lines, timers };
}

describe('server stderr in the output channel', () => {
  it('logs each record at its own level, not as an error', () => {
    const { log, lines, timers } = setup();
    log.stderr('chunkls INFO: Indexed 13 chunks in 0.1 s');
    log.stderr('chunkls WARNING: app/x.py: skipped: too large');
    log.stderr('chunkls ERROR: index failed: OSError()');
    log.stderr('chunkls DEBUG: details');
    timers.advance(200);
    assert.deepEqual(lines, [
      '[info] Indexed 13 chunks in 0.1 s',
      '[warn] app/x.py: skipped: too large',
      '[error] index failed: OSError()',
      '[debug] details',
    ]);
  });

  it("keeps a traceback's lines at their record's level, and a crash before logging as an error", () => {
    const { log, lines, timers } = setup();
    log.stderr('ModuleNotFoundError: No module named chunkls');
    log.stderr('chunkls ERROR: refresh failed');
    log.stderr('Traceback (most recent call last):');
    log.stderr('chunkls INFO: next');
    log.stderr('  continued');
    timers.advance(200);
    assert.deepEqual(lines, [
      '[error] ModuleNotFoundError: No module named chunkls',
      '[error] refresh failed',
      '[error] Traceback (most recent call last):',
      '[info] next',
      '[info]   continued',
    ]);
  });

  it("logs a message the server also sent as window/logMessage once, at the client's level", () => {
    const { log, lines, timers } = setup();
    log.stderr('chunkls INFO: Indexed 13 chunks in 0.1 s');
    log.client('info', 'Indexed 13 chunks in 0.1 s');
    log.client('warn', 'settings: unknown key \'x\'');
    log.stderr('chunkls INFO: settings: unknown key \'x\'');
    timers.advance(1000);
    assert.deepEqual(lines, ['[info] Indexed 13 chunks in 0.1 s', "[warn] settings: unknown key 'x'"]);
  });

  it('still logs a repeated message each time it happens', () => {
    const { log, lines, timers } = setup();
    for (let i = 0; i < 2; i++) {
      log.stderr('chunkls INFO: Indexed 13 chunks in 0.1 s');
      log.client('info', 'Indexed 13 chunks in 0.1 s');
      timers.advance(300);
    }
    log.stderr('chunkls INFO: only on stderr');
    log.stderr('chunkls INFO: only on stderr');
    timers.advance(10_000);
    log.stderr('chunkls INFO: Indexed 13 chunks in 0.1 s'); // long after: not an echo
    timers.advance(300);
    assert.deepEqual(lines, [
      '[info] Indexed 13 chunks in 0.1 s',
      '[info] Indexed 13 chunks in 0.1 s',
      '[info] only on stderr',
      '[info] only on stderr',
      '[info] Indexed 13 chunks in 0.1 s',
    ]);
  });

  it("demotes pygls's routine protocol notes to debug", () => {
    assert.equal(parseServerLine('chunkls WARNING: Cancel notification for unknown message id "12"', 'info').level, 'debug');
    assert.equal(parseServerLine('chunkls WARNING: Received response to unknown message id "3"', 'info').level, 'debug');
    assert.equal(parseServerLine('chunkls WARNING: something else', 'info').level, 'warn');
  });

  it('logs what still waits when the server stops', () => {
    const { log, lines } = setup();
    log.stderr('chunkls ERROR: last words');
    log.flush();
    assert.deepEqual(lines, ['[error] last words']);
  });
});
