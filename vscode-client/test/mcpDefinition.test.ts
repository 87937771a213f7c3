import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mcpDefinition, mcpServerArgs, type McpInputs } from '../src/mcpDefinition';

const base: McpInputs = {
  enabled: true,
  roots: ['/work/a', '/work/b'],
  python: { ok: true, command: '/usr/bin/python3' },
  env: { PYTHONPATH: '/ext/bundled/libs' },
  version: '0.1.0',
};

describe('mcpServerArgs', () => {
  it('runs chunkls mcp with one --root per folder', () => {
    assert.deepEqual(mcpServerArgs(['/a', '/b c']), ['-m', 'chunkls', 'mcp', '--root', '/a', '--root', '/b c']);
    assert.deepEqual(mcpServerArgs([]), ['-m', 'chunkls', 'mcp']);
  });
});

describe('mcpDefinition', () => {
  it('offers the bundled server with the language server interpreter and environment', () => {
    assert.deepEqual(mcpDefinition(base), {
      ok: true,
      label: 'chunkls',
      command: '/usr/bin/python3',
      args: ['-m', 'chunkls', 'mcp', '--root', '/work/a', '--root', '/work/b'],
      env: { PYTHONPATH: '/ext/bundled/libs' },
      cwd: '/work/a',
      version: '0.1.0',
    });
  });

  const cases: [string, Partial<McpInputs>, RegExp][] = [
    ['the setting is off', { enabled: false }, /chunkls\.mcp\.enabled is off/],
    ['no folder is open', { roots: [] }, /no folder/],
    ['no interpreter fits', { python: { ok: false, message: 'Python 3.9 is too old' } }, /3\.9 is too old/],
    ['the bundle cannot run on it', { env: undefined }, /cannot run/],
  ];
  for (const [name, change, reason] of cases) {
    it(`offers nothing when ${name}`, () => {
      const definition = mcpDefinition({ ...base, ...change });
      if (definition.ok) {
        assert.fail('a definition was offered');
      }
      assert.match(definition.reason, reason);
    });
  }
});
