import { CONFIG_SECTION, DIAGNOSTIC_SEVERITIES, SEARCH_MODES, ServerSettingKeys, SettingDefaults, Settings } from './constants';

/** The settings object the server receives (initializationOptions and didChangeConfiguration). */
export interface ServerSettings {
  exclude: string[];
  codeLens: { enabled: boolean };
  navigation: { languages: string[] };
  diagnostics: { enabled: boolean; severity: string };
  search: { mode: string };
}

/** The part of vscode.WorkspaceConfiguration this module needs (a fake in unit tests). */
export interface ConfigReader {
  get(section: string): unknown;
}

function stringArray(value: unknown, fallback: readonly string[]): string[] {
  if (!Array.isArray(value)) {
    return [...fallback];
  }
  const strings = value.filter((v): v is string => typeof v === 'string').map((v) => v.trim());
  return strings.filter((v) => v.length > 0);
}

/** Reads the `chunkls` section into the shape the server expects; bad values fall back to defaults. */
export function toServerSettings(config: ConfigReader): ServerSettings {
  const enabled = config.get(Settings.codeLensEnabled);
  const languages = config.get(Settings.navigationLanguages);
  const diagnosticsEnabled = config.get(Settings.diagnosticsEnabled);
  const severity = config.get(Settings.diagnosticsSeverity);
  const mode = config.get(Settings.searchMode);
  return {
    exclude: stringArray(config.get(Settings.exclude), SettingDefaults.exclude),
    codeLens: { enabled: typeof enabled === 'boolean' ? enabled : SettingDefaults.codeLensEnabled },
    navigation: {
      languages: Array.isArray(languages)
        ? stringArray(languages, SettingDefaults.navigationLanguages)
        : [...SettingDefaults.navigationLanguages],
    },
    diagnostics: {
      enabled: typeof diagnosticsEnabled === 'boolean' ? diagnosticsEnabled : SettingDefaults.diagnosticsEnabled,
      severity:
        typeof severity === 'string' && DIAGNOSTIC_SEVERITIES.includes(severity) ? severity : SettingDefaults.diagnosticsSeverity,
    },
    search: { mode: typeof mode === 'string' && SEARCH_MODES.includes(mode) ? mode : SettingDefaults.searchMode },
  };
}

/** The params of workspace/didChangeConfiguration: `{settings: {chunkls: ...}}`. */
export function toDidChangeConfigurationParams(config: ConfigReader): { settings: { chunkls: ServerSettings } } {
  return { settings: { chunkls: toServerSettings(config) } };
}

/** Settings whose change needs a new server process rather than a notification. */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return affects(`${CONFIG_SECTION}.${Settings.pythonPath}`);
}

/**
 * Languages whose documents the client always sends the server: Python and Markdown
 * (code lenses) and the default navigation languages.
 */
export const ALWAYS_SENT_LANGUAGES: readonly string[] = [...new Set(['python', 'markdown', ...SettingDefaults.navigationLanguages])];

/** The languages whose documents the client sends: those always sent, plus every navigation language set. */
export function documentLanguages(settings: ServerSettings): string[] {
  return [...new Set([...ALWAYS_SENT_LANGUAGES, ...settings.navigation.languages])].sort();
}

/** One entry of the client's document selector. */
export interface LanguageFilter {
  scheme: 'file' | 'untitled';
  language: string;
}

/** The client's document selector: saved files and untitled buffers of each language. */
export function documentSelector(languages: readonly string[]): LanguageFilter[] {
  return languages.flatMap((language): LanguageFilter[] => [
    { scheme: 'file', language },
    { scheme: 'untitled', language },
  ]);
}

/**
 * Navigation languages now set whose documents a client started with `sent`
 * (its `documentLanguages`) does not send: a document selector is fixed when the
 * client starts, so these need a restart.
 */
export function languagesNotSent(sent: readonly string[], settings: ServerSettings): string[] {
  return documentLanguages(settings).filter((language) => !sent.includes(language));
}

/** Settings whose change the running server can apply. */
export function needsNotification(affects: (section: string) => boolean): boolean {
  return Object.values(ServerSettingKeys).some((key) => affects(`${CONFIG_SECTION}.${key}`));
}
