import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pipError } from '../scripts/pipError.mjs';

describe("pip's error when packaging fails", () => {
  it("shows pip's error lines, not a pyenv warning that came last", () => {
    const stderr = [
      'ERROR: Could not find a version that satisfies the requirement numpy==9.9.9 (from versions: 2.3.5)',
      'ERROR: No matching distribution found for numpy==9.9.9',
      'pyenv: cannot rehash: /root/.pyenv/shims isn\'t writable',
      '',
    ].join('\n');
    const shown = pipError(stderr);
    assert.match(shown, /No matching distribution found for numpy==9\.9\.9/);
    assert.match(shown, /Could not find a version/);
  });

  it('leaves out warnings when there is no error line, and keeps everything when only noise is left', () => {
    assert.equal(pipError('WARNING: Retrying (Retry(total=4))\nnetwork is unreachable\n'), 'network is unreachable');
    assert.equal(pipError('WARNING: only this\n'), 'WARNING: only this');
  });

  it('keeps a long error readable', () => {
    const stderr = ['error: subprocess-exited-with-error', ...Array.from({ length: 100 }, (_, i) => `line ${i}`)].join('\n');
    const lines = pipError(stderr).split('\n');
    assert.equal(lines.length, 40);
    assert.equal(lines[0], 'error: subprocess-exited-with-error');
    assert.equal(lines[39], '... (62 more lines)');
  });
});
