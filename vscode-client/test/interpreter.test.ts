import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  expandPath,
  failureMessage,
  interpreterCandidates,
  isSupported,
  parseProbeOutput,
  resolveInterpreter,
  type ProbeResult,
} from '../src/interpreter';

function fakeProbe(table: Record<string, ProbeResult>): { probe: (c: string) => Promise<ProbeResult>; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    probe: (command) => {
      calls.push(command);
      return Promise.resolve(table[command] ?? { kind: 'missing', detail: 'ENOENT' });
    },
  };
}

describe('interpreterCandidates', () => {
  it('uses only the setting when it is set (no fallback to another interpreter)', () => {
    const candidates = interpreterCandidates({ settingPath: '/opt/py/bin/python', pythonExtensionPath: '/venv/bin/python' });
    assert.deepEqual(candidates, [{ command: '/opt/py/bin/python', source: 'setting' }]);
  });

  it('orders the Python extension, then python3 and python on PATH, when the setting is empty', () => {
    const candidates = interpreterCandidates({ settingPath: '', pythonExtensionPath: '/venv/bin/python' });
    assert.deepEqual(candidates, [
      { command: '/venv/bin/python', source: 'python-extension' },
      { command: 'python3', source: 'path' },
      { command: 'python', source: 'path' },
    ]);
  });

  it('skips an empty setting and a missing Python extension', () => {
    assert.deepEqual(
      interpreterCandidates({ settingPath: '   ', pythonExtensionPath: undefined }).map((c) => c.source),
      ['path', 'path'],
    );
  });

  it('removes duplicates, keeping the first source', () => {
    const candidates = interpreterCandidates({ pythonExtensionPath: 'python3' });
    assert.deepEqual(candidates, [
      { command: 'python3', source: 'python-extension' },
      { command: 'python', source: 'path' },
    ]);
  });

  it('expands ~, ${userHome} and ${workspaceFolder} in the setting', () => {
    const inputs = { homeDir: '/home/ada', workspaceFolder: '/work/repo' };
    assert.equal(expandPath('~/venv/bin/python', inputs), '/home/ada/venv/bin/python');
    assert.equal(expandPath('${userHome}/py', inputs), '/home/ada/py');
    assert.equal(expandPath('${workspaceFolder}/.venv/bin/python', inputs), '/work/repo/.venv/bin/python');
    assert.equal(expandPath('~other/python', inputs), '~other/python');
  });
});

describe('parseProbeOutput and isSupported', () => {
  it('parses version and executable', () => {
    assert.deepEqual(parseProbeOutput('3.12 /usr/bin/python3.12\n'), { version: [3, 12], executable: '/usr/bin/python3.12' });
    assert.deepEqual(parseProbeOutput('3.11\n'), { version: [3, 11] });
    assert.equal(parseProbeOutput('Python'), undefined);
  });

  it('accepts 3.11 and newer only', () => {
    assert.equal(isSupported([3, 11]), true);
    assert.equal(isSupported([3, 13]), true);
    assert.equal(isSupported([4, 0]), true);
    assert.equal(isSupported([3, 10]), false);
    assert.equal(isSupported([2, 7]), false);
  });
});

describe('resolveInterpreter', () => {
  it('uses the setting when it works, without probing further', async () => {
    const { probe, calls } = fakeProbe({ '/opt/py': { kind: 'ok', version: [3, 12], executable: '/opt/py' } });
    const result = await resolveInterpreter(interpreterCandidates({ settingPath: '/opt/py', pythonExtensionPath: '/venv/python' }), probe);
    assert.ok(result.ok);
    assert.equal(result.candidate.source, 'setting');
    assert.deepEqual(calls, ['/opt/py']);
  });

  it('without the setting, tries the Python extension, then PATH, skipping too-old interpreters', async () => {
    const { probe, calls } = fakeProbe({
      '/venv/python': { kind: 'ok', version: [3, 9] },
      python3: { kind: 'ok', version: [3, 11], executable: '/usr/bin/python3' },
    });
    const result = await resolveInterpreter(interpreterCandidates({ pythonExtensionPath: '/venv/python' }), probe);
    assert.ok(result.ok);
    assert.equal(result.candidate.command, 'python3');
    assert.equal(result.executable, '/usr/bin/python3');
    assert.deepEqual(calls, ['/venv/python', 'python3']);
    assert.deepEqual(
      result.attempts.map((a) => a.outcome),
      ['too-old'],
    );
  });

  it('never falls back from a set but missing interpreter', async () => {
    const { probe, calls } = fakeProbe({ python3: { kind: 'ok', version: [3, 12] } });
    const result = await resolveInterpreter(interpreterCandidates({ settingPath: '/nope', pythonExtensionPath: '/venv/python' }), probe);
    assert.equal(result.ok, false);
    assert.deepEqual(calls, ['/nope']);
  });

  it('reports every attempt when nothing works, in one actionable message', async () => {
    const { probe } = fakeProbe({
      python3: { kind: 'ok', version: [3, 8] },
      python: { kind: 'error', detail: 'exit code 1' },
    });
    const result = await resolveInterpreter(interpreterCandidates({}), probe);
    assert.equal(result.ok, false);
    const message = failureMessage(result.attempts);
    assert.match(message, /Python 3\.11 or newer/);
    assert.match(message, /python3 \(PATH: Python 3\.8, too old\)/);
    assert.match(message, /python \(PATH: failed: exit code 1\)/);
    assert.match(message, /chunkls\.server\.pythonPath/);
  });

  it('skips interpreters this build has no native libraries for, and says which versions it supports', async () => {
    const { probe, calls } = fakeProbe({
      '/opt/py315': { kind: 'ok', version: [3, 15], executable: '/opt/py315' },
      python3: { kind: 'ok', version: [3, 16], executable: '/usr/bin/python3.16' },
    });
    const supported: [number, number][] = [[3, 11], [3, 12], [3, 13], [3, 14]];
    const accepts = (v: readonly [number, number]): boolean => supported.some((s) => s[0] === v[0] && s[1] === v[1]);
    const result = await resolveInterpreter(interpreterCandidates({ pythonExtensionPath: '/opt/py315' }), probe, undefined, accepts);
    assert.equal(result.ok, false);
    assert.deepEqual(calls, ['/opt/py315', 'python3', 'python']);
    assert.deepEqual(
      result.attempts.map((a) => a.outcome),
      ['unsupported', 'unsupported', 'missing'],
    );
    const message = failureMessage(result.attempts, undefined, { versions: supported, target: 'linux-x64' });
    assert.match(message, /\(linux-x64\) runs on Python 3\.11, 3\.12, 3\.13 or 3\.14/);
    assert.match(message, /\/opt\/py315 \(Python extension: Python 3\.15, not supported by this build\)/);
    assert.match(message, /python3 \(PATH: Python 3\.16 at \/usr\/bin\/python3\.16, not supported by this build\)/);
    assert.match(message, /Set "chunkls\.server\.pythonPath" to a Python 3\.11, 3\.12, 3\.13 or 3\.14 interpreter/);
  });

  it('takes the next candidate the build supports', async () => {
    const { probe } = fakeProbe({
      '/opt/py315': { kind: 'ok', version: [3, 15] },
      python3: { kind: 'ok', version: [3, 12] },
    });
    const result = await resolveInterpreter(interpreterCandidates({ pythonExtensionPath: '/opt/py315' }), probe, undefined, (v) => v[1] <= 14);
    assert.ok(result.ok);
    assert.equal(result.candidate.command, 'python3');
    assert.deepEqual(result.version, [3, 12]);
  });
});
