import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  documentLanguages,
  documentSelector,
  languagesNotSent,
  needsNotification,
  needsRestart,
  toDidChangeConfigurationParams,
  toServerSettings,
  type ConfigReader,
} from '../src/settings';

function config(values: Record<string, unknown>): ConfigReader {
  return { get: (key: string) => values[key] };
}

describe('settings to initialization options', () => {
  it('maps the chunkls settings to the server shape', () => {
    const settings = toServerSettings(
      config({
        exclude: ['**/gen/**', 'vendor/**'],
        'codeLens.enabled': false,
        'navigation.languages': ['markdown'],
        'diagnostics.enabled': false,
        'diagnostics.severity': 'error',
        'search.mode': 'bm25',
        'server.pythonPath': '/usr/bin/python3',
        'trace.server': 'verbose',
      }),
    );
    assert.deepEqual(settings, {
      exclude: ['**/gen/**', 'vendor/**'],
      codeLens: { enabled: false },
      navigation: { languages: ['markdown'] },
      diagnostics: { enabled: false, severity: 'error' },
      search: { mode: 'bm25' },
    });
  });

  it('uses the defaults when settings are unset or malformed', () => {
    const defaults = {
      exclude: [],
      codeLens: { enabled: true },
      navigation: { languages: ['json', 'jsonc', 'jsonl', 'markdown', 'plaintext', 'python'] },
      diagnostics: { enabled: true, severity: 'warning' },
      search: { mode: 'auto' },
    };
    assert.deepEqual(toServerSettings(config({})), defaults);
    assert.deepEqual(
      toServerSettings(
        config({
          exclude: 'x',
          'codeLens.enabled': 'yes',
          'navigation.languages': 3,
          'diagnostics.enabled': 1,
          'diagnostics.severity': 'fatal',
          'search.mode': 'dense',
        }),
      ),
      defaults,
    );
  });

  it('drops non-string and blank globs', () => {
    assert.deepEqual(toServerSettings(config({ exclude: ['a/**', 1, ' ', null, ' b '] })).exclude, ['a/**', 'b']);
  });

  it('wraps didChangeConfiguration as settings.chunkls', () => {
    const params = toDidChangeConfigurationParams(config({ exclude: ['x/**'] }));
    assert.deepEqual(params.settings.chunkls.exclude, ['x/**']);
    assert.equal(params.settings.chunkls.codeLens.enabled, true);
  });

  it('restarts only for the interpreter; notifies for the rest', () => {
    const affects = (changed: string) => (section: string) => section === changed || changed.startsWith(`${section}.`);
    assert.equal(needsRestart(affects('chunkls.server.pythonPath')), true);
    assert.equal(needsNotification(affects('chunkls.server.pythonPath')), false);
    assert.equal(needsRestart(affects('chunkls.exclude')), false);
    assert.equal(needsNotification(affects('chunkls.exclude')), true);
    assert.equal(needsNotification(affects('chunkls.codeLens.enabled')), true);
    assert.equal(needsNotification(affects('chunkls.navigation.languages')), true);
    assert.equal(needsNotification(affects('chunkls.diagnostics.severity')), true);
    assert.equal(needsNotification(affects('chunkls.diagnostics.enabled')), true);
    assert.equal(needsNotification(affects('chunkls.search.mode')), true);
    assert.equal(needsNotification(affects('chunkls.trace.server')), false);
  });
});

describe('the documents the client sends', () => {
  const defaults = ['json', 'jsonc', 'jsonl', 'markdown', 'plaintext', 'python'];

  it('sends the default navigation languages and Python and Markdown', () => {
    assert.deepEqual(documentLanguages(toServerSettings(config({}))), defaults);
  });

  it('adds every navigation language set, and keeps sending the defaults left out', () => {
    // Python and Markdown get code lenses whatever the navigation languages are
    const settings = toServerSettings(config({ 'navigation.languages': ['restructuredtext', 'log', 'markdown'] }));
    assert.deepEqual(documentLanguages(settings), ['json', 'jsonc', 'jsonl', 'log', 'markdown', 'plaintext', 'python', 'restructuredtext']);
  });

  it('selects saved files and untitled buffers of each language', () => {
    assert.deepEqual(documentSelector(['log', 'python']), [
      { scheme: 'file', language: 'log' },
      { scheme: 'untitled', language: 'log' },
      { scheme: 'file', language: 'python' },
      { scheme: 'untitled', language: 'python' },
    ]);
  });

  it('names the languages a running client does not send (a restart widens its selector)', () => {
    const started = documentLanguages(toServerSettings(config({})));
    const added = toServerSettings(config({ 'navigation.languages': [...defaults, 'log', 'asciidoc'] }));
    assert.deepEqual(languagesNotSent(started, added), ['asciidoc', 'log']);
    const fewer = toServerSettings(config({ 'navigation.languages': ['markdown'] }));
    assert.deepEqual(languagesNotSent(started, fewer), []);
    assert.deepEqual(languagesNotSent(documentLanguages(added), added), []);
  });
});
