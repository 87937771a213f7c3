import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { chunkAtArguments, chunkIdArgument, SERVER_ARGS, serverPythonPath } from '../src/launch';

describe('server launch', () => {
  it('runs python -m chunkls serve (the client appends --stdio)', () => {
    assert.deepEqual(SERVER_ARGS, ['-m', 'chunkls', 'serve']);
  });

  it('puts the bundled libs first on PYTHONPATH, keeping an existing one', () => {
    const ext = '/ext';
    const exists = (p: string) => p === path.join(ext, 'bundled', 'libs');
    assert.equal(serverPythonPath(ext, undefined, exists), path.join(ext, 'bundled', 'libs'));
    assert.equal(
      serverPythonPath(ext, '/mine', exists),
      [path.join(ext, 'bundled', 'libs'), '/mine'].join(path.delimiter),
    );
  });

  it('uses server/ when running from the repository without a bundle', () => {
    const exists = (p: string) => p === path.join('/repo', 'server', 'chunkls');
    assert.equal(serverPythonPath('/repo', '', exists), path.join('/repo', 'server'));
  });
});

describe('Copy Chunk ID arguments', () => {
  it('takes the lens argument (a string) or a chunkAt answer ({chunkId})', () => {
    assert.equal(chunkIdArgument('app/greet.py#function-greet'), 'app/greet.py#function-greet');
    assert.equal(chunkIdArgument({ chunkId: 'README.md#heading-setup' }), 'README.md#heading-setup');
  });

  it('treats anything else as no argument (palette, editor context, null answer)', () => {
    for (const value of [undefined, null, '', 42, {}, { chunkId: 3 }, { chunkId: '' }]) {
      assert.equal(chunkIdArgument(value), undefined);
    }
  });

  it('asks chunkls.chunkAt with one {uri, line} argument', () => {
    assert.deepEqual(chunkAtArguments('file:///w/a.py', 7), [{ uri: 'file:///w/a.py', line: 7 }]);
  });
});
