/**
 * Every identifier the client shares with the manifest (package.json) or the
 * server, defined once.
 */

export const EXTENSION_NAME = 'chunkls';
export const CONFIG_SECTION = 'chunkls';
export const OUTPUT_CHANNEL_NAME = 'chunkls';
export const CLIENT_ID = 'chunkls';
export const CLIENT_NAME = 'chunkls';

/**
 * Commands the client registers. `copyChunkId` and `showReferences` are also
 * what the server's code lenses run; `showReferences` is not in the manifest
 * (it needs the lens's arguments).
 */
export const Commands = {
  searchChunks: 'chunkls.searchChunks',
  copyChunkId: 'chunkls.copyChunkId',
  /** Types a chunk ID (the argument's, else the chunk at the cursor) into the active terminal. */
  sendChunkIdToTerminal: 'chunkls.sendChunkIdToTerminal',
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
  chunks: 'chunkls.chunks',
  /** Where chunk IDs are: `{chunkId}`, `{chunkIds}` or `{text}` (a terminal line), optional `folder` URI. */
  resolve: 'chunkls.resolve',
  /** Where a Search Chunks result listed without its best part opens (`{query, chunkId, uri, line, mode}`). */
  jumpTarget: 'chunkls.jumpTarget',
  /** Rewrite the workspace's stale chunk IDs whose replacement is certain (one WorkspaceEdit). */
  fixCitations: 'chunkls.fixCitations',
} as const;

/** Custom notification the server sends when the index state changes (payload: status.ts's IndexStatus). */
export const STATUS_NOTIFICATION = 'chunkls/status';

/** Keys (relative to CONFIG_SECTION) of the settings the server reads. */
export const ServerSettingKeys = {
  exclude: 'exclude',
  codeLensEnabled: 'codeLens.enabled',
  navigationLanguages: 'navigation.languages',
  diagnosticsEnabled: 'diagnostics.enabled',
  diagnosticsSeverity: 'diagnostics.severity',
  searchMode: 'search.mode',
} as const;

/** Keys of the settings only the client reads. */
export const ClientSettingKeys = {
  pythonPath: 'server.pythonPath',
  traceServer: 'trace.server',
  mcpEnabled: 'mcp.enabled',
} as const;

/** Every settings key, relative to CONFIG_SECTION. */
export const Settings = { ...ServerSettingKeys, ...ClientSettingKeys } as const;

/** The manifest's default of each setting (a malformed value falls back to it). */
export const SettingDefaults = {
  exclude: [],
  codeLensEnabled: true,
  navigationLanguages: ['json', 'jsonc', 'jsonl', 'markdown', 'plaintext', 'python'],
  diagnosticsEnabled: true,
  diagnosticsSeverity: 'warning',
  searchMode: 'auto',
  pythonPath: '',
  traceServer: 'off',
  mcpEnabled: true,
} as const satisfies Record<keyof typeof Settings, unknown>;

/** The allowed values of `diagnostics.severity`. */
export const DIAGNOSTIC_SEVERITIES: readonly string[] = ['error', 'warning', 'information', 'hint'];

/** The allowed values of `search.mode`. */
export const SEARCH_MODES: readonly string[] = ['auto', 'hybrid', 'bm25'];

/** The status bar item's ID (not a command). */
export const STATUS_ITEM_ID = 'chunkls.status';

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

/** The MCP server definition provider's ID (package.json `contributes.mcpServerDefinitionProviders`). */
export const MCP_PROVIDER_ID = 'chunkls.mcp';
