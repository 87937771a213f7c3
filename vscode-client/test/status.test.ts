import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStatus, statusView } from '../src/status';

describe('status bar', () => {
  it('spins while indexing and counts chunks otherwise', () => {
    assert.equal(statusView('running', { indexing: true, chunks: 10, files: 2, skipped: 0 }).text, '$(sync~spin) 10 chunks');
    const idle = statusView('running', { indexing: false, chunks: 1, files: 1, skipped: 2 });
    assert.equal(idle.text, '$(symbol-namespace) 1 chunk');
    assert.match(idle.tooltip, /1 chunk in 1 file, 2 files skipped/);
  });

  it('spins while starting and flags a failed server', () => {
    assert.equal(statusView('starting', undefined).text, '$(sync~spin) chunks');
    assert.equal(statusView('failed', undefined).text, '$(error) chunks');
  });

  it('parses the chunkls/status notification defensively', () => {
    assert.deepEqual(parseStatus({ indexing: true, chunks: 5, files: 1, skipped: 0 }), { indexing: true, chunks: 5, files: 1, skipped: 0 });
    assert.deepEqual(parseStatus({ chunks: 'x' }), { indexing: false, chunks: 0, files: 0, skipped: 0 });
    assert.equal(parseStatus(null), undefined);
  });
});
