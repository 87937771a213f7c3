import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  chunkAtArguments,
  chunkIdArgument,
  nativeTag,
  readLayout,
  SERVER_ARGS,
  serverEnv,
  serverPythonPath,
  supportedVersions,
  supportsVersion,
  type LayoutFs,
} from '../src/launch';

/** An in-memory extension folder: paths that exist, and file contents. */
function fakeFs(dirs: Record<string, string[]>, files: Record<string, string> = {}): LayoutFs {
  const all = new Set<string>([...Object.keys(dirs), ...Object.keys(files)]);
  for (const [dir, names] of Object.entries(dirs)) {
    for (const name of names) {
      all.add(path.join(dir, name));
    }
  }
  return { exists: (p) => all.has(p), list: (p) => dirs[p] ?? [], read: (p) => files[p] };
}

const ext = '/ext';
const libs = path.join(ext, 'bundled', 'libs');
const nativeRoot = path.join(ext, 'bundled', 'native');
const packaged = fakeFs(
  { [libs]: ['chunkls', 'pygls'], [nativeRoot]: ['cp311', 'cp312', 'cp313', 'cp314', 'README'] },
  { [path.join(ext, 'bundled', 'target.json')]: '{"target": "linux-x64"}' },
);

describe('server launch', () => {
  it('runs python -m chunkls serve (the client appends --stdio)', () => {
    assert.deepEqual(SERVER_ARGS, ['-m', 'chunkls', 'serve']);
  });

  it('reads the bundle: libs, one native folder per CPython version, the target', () => {
    const layout = readLayout(ext, packaged);
    assert.equal(layout.libs, libs);
    assert.equal(layout.target, 'linux-x64');
    assert.deepEqual([...(layout.native?.keys() ?? [])], ['cp311', 'cp312', 'cp313', 'cp314']);
    assert.deepEqual(supportedVersions(layout), [[3, 11], [3, 12], [3, 13], [3, 14]]);
    assert.equal(nativeTag([3, 12]), 'cp312');
  });

  it('puts bundled/libs, then bundled/native/cp3XY for the interpreter, first on PYTHONPATH', () => {
    const layout = readLayout(ext, packaged);
    const cp312 = path.join(nativeRoot, 'cp312');
    assert.equal(serverPythonPath(layout, [3, 12], undefined), [libs, cp312].join(path.delimiter));
    assert.equal(serverPythonPath(layout, [3, 12], '/mine'), [libs, cp312, '/mine'].join(path.delimiter));
    assert.equal(serverPythonPath(layout, [3, 11], ''), [libs, path.join(nativeRoot, 'cp311')].join(path.delimiter));
    assert.equal(serverEnv(layout, [3, 13], undefined)?.PYTHONPATH, [libs, path.join(nativeRoot, 'cp313')].join(path.delimiter));
  });

  it('refuses a Python version the bundle has no native folder for (the server would crash on import numpy)', () => {
    const layout = readLayout(ext, packaged);
    assert.equal(supportsVersion(layout, [3, 15]), false);
    assert.equal(supportsVersion(layout, [3, 10]), false);
    assert.equal(serverPythonPath(layout, [3, 15], '/mine'), undefined);
    assert.equal(serverEnv(layout, [3, 15], undefined), undefined);
  });

  it('accepts any version for a bundle without bundled/native (nothing native to match)', () => {
    const layout = readLayout(ext, fakeFs({ [libs]: ['chunkls'] }));
    assert.equal(layout.native, undefined);
    assert.equal(layout.target, undefined);
    assert.deepEqual(supportedVersions(layout), []);
    assert.equal(supportsVersion(layout, [3, 15]), true);
    assert.equal(serverPythonPath(layout, [3, 15], '/mine'), [libs, '/mine'].join(path.delimiter));
  });

  it('uses server/ when running from the repository without a bundle', () => {
    const layout = readLayout('/repo', fakeFs({ [path.join('/repo', 'server')]: ['chunkls'] }));
    assert.equal(layout.dev, path.join('/repo', 'server'));
    assert.equal(serverPythonPath(layout, [3, 13], ''), path.join('/repo', 'server'));
    assert.equal(serverPythonPath(readLayout('/else', fakeFs({})), [3, 13], '/mine'), '/mine');
  });

  it('ignores an unreadable target.json', () => {
    const layout = readLayout(ext, fakeFs({ [libs]: [] }, { [path.join(ext, 'bundled', 'target.json')]: '{oops' }));
    assert.equal(layout.target, undefined);
    assert.equal(layout.libs, libs);
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
