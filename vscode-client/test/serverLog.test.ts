import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseServerLine, ServerStderr, type LogLevel } from '../src/serverLog';

function setup(): { log: ServerStderr; lines: string[] } {
  const lines: string[] = [];
  const sink = (level: LogLevel) => (message: string) => lines.push(`[${level}] ${message}`);
  const log = new ServerStderr({ debug: sink('debug'), info: sink('info'), warn: sink('warn'), error: sink('error') });
  return { log, lines };
}

describe('server stderr in the output channel', () => {
  it('logs each record at its own level, not as an error', () => {
    const { log, lines } = setup();
    log.line('chunkls INFO: Indexed 13 chunks in 0.1 s');
    log.line('chunkls WARNING: app/x.py: skipped: too large');
    log.line('chunkls ERROR: index failed: OSError()');
    log.line('chunkls DEBUG: details');
    assert.deepEqual(lines, [
      '[info] Indexed 13 chunks in 0.1 s',
      '[warn] app/x.py: skipped: too large',
      '[error] index failed: OSError()',
      '[debug] details',
    ]);
  });

  it("keeps a traceback's lines at their record's level, and a crash before logging as an error", () => {
    const { log, lines } = setup();
    log.line('ModuleNotFoundError: No module named chunkls');
    log.line('chunkls ERROR: refresh failed');
    log.line('Traceback (most recent call last):');
    log.line('chunkls INFO: next');
    log.line('  continued');
    log.line('   ');
    assert.deepEqual(lines, [
      '[error] ModuleNotFoundError: No module named chunkls',
      '[error] refresh failed',
      '[error] Traceback (most recent call last):',
      '[info] next',
      '[info]   continued',
    ]);
  });

  it('logs a repeated line each time it comes (nothing is held back or dropped)', () => {
    const { log, lines } = setup();
    log.line('chunkls INFO: only on stderr');
    log.line('chunkls INFO: only on stderr');
    assert.deepEqual(lines, ['[info] only on stderr', '[info] only on stderr']);
  });

  it('reads the levels Python writes', () => {
    assert.equal(parseServerLine('chunkls CRITICAL: down', 'info').level, 'error');
    assert.equal(parseServerLine('chunkls WARNING: something', 'info').level, 'warn');
    assert.equal(parseServerLine('not a record', 'warn').level, 'warn');
  });
});
