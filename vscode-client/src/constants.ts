/**
 * Every identifier the client shares with the manifest (package.json) or the
 * server, defined once.
 */

export const EXTENSION_NAME = 'chunkls';
export const CONFIG_SECTION = 'chunkls';
export const OUTPUT_CHANNEL_NAME = 'chunkls';
export const CLIENT_ID = 'chunkls';
export const CLIENT_NAME = 'chunkls';

/** Commands the client contributes and registers. */
export const Commands = {
  searchChunks: 'chunkls.searchChunks',
  copyChunkId: 'chunkls.copyChunkId',
  restartServer: 'chunkls.restartServer',
  showOutput: 'chunkls.showOutput',
  /** Run by the server's "cited by N" lens: (uri, position, locations), in LSP JSON. */
  showReferences: 'chunkls.showReferences',
} as const;

/**
 * Commands the server implements through workspace/executeCommand.
 * vscode-languageclient registers them from the server's capabilities; the
 * client only sends requests for them and never registers handlers.
 */
export const ServerCommands = {
  search: 'chunkls.search',
  reindex: 'chunkls.reindex',
  stats: 'chunkls.stats',
  chunkAt: 'chunkls.chunkAt',
} as const;

/** Custom notification the server sends when the index state changes. */
export const STATUS_NOTIFICATION = 'chunkls/status';

/** Settings keys, relative to CONFIG_SECTION. */
export const Settings = {
  pythonPath: 'server.pythonPath',
  exclude: 'exclude',
  codeLensEnabled: 'codeLens.enabled',
  navigationLanguages: 'navigation.languages',
  diagnosticsEnabled: 'diagnostics.enabled',
  diagnosticsSeverity: 'diagnostics.severity',
  traceServer: 'trace.server',
} as const;

export const DIAGNOSTIC_SEVERITIES: readonly string[] = ['error', 'warning', 'information', 'hint'];

export const DEFAULT_NAVIGATION_LANGUAGES: readonly string[] = ['markdown', 'plaintext', 'python'];

/** The oldest Python the server supports. */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

/** Folder inside the extension with the server package and its dependencies. */
export const BUNDLED_LIBS = ['bundled', 'libs'] as const;

/** Folder inside the extension with one `cp3XY` folder of native libraries (numpy) per CPython version. */
export const BUNDLED_NATIVE = ['bundled', 'native'] as const;

/** What the bundle was built for: `{"target": "linux-x64", ...}`. */
export const BUNDLED_TARGET = ['bundled', 'target.json'] as const;

export const PYTHON_EXTENSION_ID = 'ms-python.python';

export const SEARCH_DEBOUNCE_MS = 150;
export const SEARCH_TOP_K = 50;
