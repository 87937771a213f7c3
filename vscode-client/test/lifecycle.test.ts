import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseInterpreter, type ProbeResult, type Version } from '../src/interpreter';
import { Lifecycle } from '../src/lifecycle';

/** Interpreters on a fake machine, by command. */
const MACHINE: Record<string, ProbeResult> = {
  '/opt/a/python': { kind: 'ok', version: [3, 12], executable: '/opt/a/python' },
  '/opt/b/python': { kind: 'ok', version: [3, 13], executable: '/opt/b/python' },
  '/opt/old/python': { kind: 'ok', version: [3, 9], executable: '/opt/old/python' },
  '/opt/new/python': { kind: 'ok', version: [3, 15], executable: '/opt/new/python' },
  '/opt/noexec/python': { kind: 'missing', detail: 'EACCES' },
  '/venv/bin/python': { kind: 'ok', version: [3, 12], executable: '/venv/bin/python' },
  python3: { kind: 'ok', version: [3, 11], executable: '/usr/bin/python3' },
};

/** A server manager on the fake machine: the setting can change between starts. */
function harness(initial: string, pythonExtension?: string) {
  const state = { setting: initial };
  const probed: string[] = [];
  const launched: string[] = [];
  const failures: string[] = [];
  let running: string | undefined;
  const accepts = (v: Version): boolean => v[1] <= 14;
  const lifecycle = new Lifecycle({
    choose: () =>
      chooseInterpreter(
        { settingPath: state.setting, pythonExtensionPath: () => Promise.resolve(pythonExtension) },
        (command) => {
          probed.push(command);
          return Promise.resolve(MACHINE[command] ?? { kind: 'missing', detail: 'ENOENT' });
        },
        accepts,
        { versions: [[3, 11], [3, 12], [3, 13], [3, 14]], target: 'linux-x64' },
      ),
    launch: (python) => {
      launched.push(python.command);
      running = python.command;
      return Promise.resolve();
    },
    shutdown: () => {
      running = undefined;
      return Promise.resolve();
    },
    fail: (message) => failures.push(message),
    log: () => undefined,
  });
  return { state, probed, launched, failures, lifecycle, running: () => running };
}

const affects = (changed: string) => (section: string) => section === changed || changed.startsWith(`${section}.`);

describe('chunkls.server.pythonPath at start, restart and change', () => {
  it('Restart Server picks up a new value', async () => {
    const h = harness('/opt/a/python');
    await h.lifecycle.start();
    h.state.setting = '/opt/b/python';
    await h.lifecycle.restart();
    assert.deepEqual(h.launched, ['/opt/a/python', '/opt/b/python']);
    assert.equal(h.running(), '/opt/b/python');
  });

  it('a change of the setting restarts with the new value; other settings do not restart', async () => {
    const h = harness('/opt/a/python');
    await h.lifecycle.start();
    h.state.setting = '/opt/b/python';
    await h.lifecycle.onConfigurationChanged(affects('chunkls.server.pythonPath'));
    assert.deepEqual(h.launched, ['/opt/a/python', '/opt/b/python']);
    assert.equal(h.lifecycle.onConfigurationChanged(affects('chunkls.exclude')), undefined);
    assert.deepEqual(h.launched, ['/opt/a/python', '/opt/b/python']);
  });

  for (const [bad, why] of [
    ['/opt/missing/python', /not found/],
    ['/opt/noexec/python', /not executable/],
    ['/opt/old/python', /Python 3\.9, too old/],
    ['/opt/new/python', /Python 3\.15, not supported by this build \(linux-x64\)/],
  ] as const) {
    it(`a bad new value (${bad}) is notified and no other interpreter starts`, async () => {
      const h = harness('/opt/a/python', '/venv/bin/python');
      await h.lifecycle.start();
      h.probed.length = 0;
      h.state.setting = bad;
      await h.lifecycle.onConfigurationChanged(affects('chunkls.server.pythonPath'));
      assert.deepEqual(h.launched, ['/opt/a/python']);
      assert.equal(h.running(), undefined);
      assert.deepEqual(h.probed, [bad]);
      assert.equal(h.failures.length, 1);
      const [message] = h.failures;
      assert.ok(message !== undefined);
      assert.match(message, /chunkls\.server\.pythonPath/);
      assert.ok(message.includes(bad));
      assert.match(message, why);
      assert.match(message, /Python 3\.11, 3\.12, 3\.13 or 3\.14/);
      assert.ok(message.length <= 250, `too long for a toast: ${message.length} characters`);
    });
  }

  it('a bad value at start-up gets the same notification as after a change', async () => {
    const first = harness('/opt/old/python');
    await first.lifecycle.start();
    const second = harness('/opt/a/python');
    await second.lifecycle.start();
    second.state.setting = '/opt/old/python';
    await second.lifecycle.restart();
    assert.deepEqual(first.launched, []);
    assert.deepEqual(first.failures, second.failures);
  });

  it('emptying the setting goes back to the automatic choice', async () => {
    const h = harness('/opt/missing/python', '/venv/bin/python');
    await h.lifecycle.start();
    assert.deepEqual(h.launched, []);
    h.state.setting = '  ';
    await h.lifecycle.onConfigurationChanged(affects('chunkls.server.pythonPath'));
    assert.deepEqual(h.launched, ['/venv/bin/python']);
    const noExtension = harness('', undefined);
    await noExtension.lifecycle.start();
    assert.deepEqual(noExtension.launched, ['python3']);
  });

  it('asks the Python extension only when the setting is empty', async () => {
    let asked = 0;
    const probe = (command: string): Promise<ProbeResult> => Promise.resolve(MACHINE[command] ?? { kind: 'missing', detail: 'ENOENT' });
    const pythonExtensionPath = (): Promise<string> => {
      asked++;
      return Promise.resolve('/venv/bin/python');
    };
    const set = await chooseInterpreter({ settingPath: '/opt/a/python', pythonExtensionPath }, probe);
    assert.ok(set.ok);
    assert.equal(set.source, 'setting');
    assert.equal(asked, 0);
    const auto = await chooseInterpreter({ settingPath: undefined, pythonExtensionPath }, probe);
    assert.ok(auto.ok);
    assert.equal(auto.source, 'python-extension');
    assert.equal(asked, 1);
  });
});
