import { execFile } from 'node:child_process';
import { MIN_PYTHON, Settings, CONFIG_SECTION } from './constants';

/** Where a candidate interpreter came from, in the order they are tried. */
export type InterpreterSource = 'setting' | 'python-extension' | 'path';

export interface Candidate {
  command: string;
  source: InterpreterSource;
}

export interface CandidateInputs {
  /** `chunkls.server.pythonPath` (already filtered by workspace trust). */
  settingPath?: string | undefined;
  /** The Python extension's active environment, when that extension is installed. */
  pythonExtensionPath?: string | undefined;
  /** For `~` and `${userHome}` in the setting. */
  homeDir?: string | undefined;
  /** For `${workspaceFolder}` in the setting. */
  workspaceFolder?: string | undefined;
}

export type Version = readonly [number, number];

export type ProbeResult =
  | { kind: 'ok'; version: Version; executable?: string | undefined }
  | { kind: 'missing'; detail: string }
  | { kind: 'error'; detail: string };

export type Probe = (command: string) => Promise<ProbeResult>;

export interface Attempt {
  candidate: Candidate;
  outcome: 'missing' | 'too-old' | 'unsupported' | 'error';
  detail: string;
}

export type Resolution =
  | { ok: true; candidate: Candidate; version: Version; executable?: string | undefined; attempts: Attempt[] }
  | { ok: false; attempts: Attempt[] };

/** Expands `~`, `${userHome}` and `${workspaceFolder}` in a configured path. */
export function expandPath(raw: string, inputs: Pick<CandidateInputs, 'homeDir' | 'workspaceFolder'>): string {
  let value = raw.trim();
  if (inputs.homeDir !== undefined) {
    value = value.replace(/\$\{userHome\}/g, inputs.homeDir);
    if (value === '~' || value.startsWith('~/')) {
      value = inputs.homeDir + value.slice(1);
    }
  }
  if (inputs.workspaceFolder !== undefined) {
    value = value.replace(/\$\{workspaceFolder\}/g, inputs.workspaceFolder);
  }
  return value;
}

/**
 * The interpreters to try. A non-empty setting is the only candidate (never a
 * silent fallback to another interpreter); otherwise the Python extension's
 * active environment, then `python3` and `python` on PATH. Duplicates removed.
 */
export function interpreterCandidates(inputs: CandidateInputs): Candidate[] {
  const out: Candidate[] = [];
  const add = (command: string | undefined, source: InterpreterSource): void => {
    if (command === undefined) {
      return;
    }
    const trimmed = command.trim();
    if (trimmed.length === 0 || out.some((c) => c.command === trimmed)) {
      return;
    }
    out.push({ command: trimmed, source });
  };
  if (inputs.settingPath !== undefined && inputs.settingPath.trim().length > 0) {
    add(expandPath(inputs.settingPath, inputs), 'setting');
    return out;
  }
  add(inputs.pythonExtensionPath, 'python-extension');
  add('python3', 'path');
  add('python', 'path');
  return out;
}

/** Parses the probe's output, `3.12 /usr/bin/python3.12`. */
export function parseProbeOutput(stdout: string): { version: Version; executable?: string } | undefined {
  const match = /^\s*(\d+)\.(\d+)(?:[ \t]+(.+?))?\s*$/m.exec(stdout);
  if (match === null) {
    return undefined;
  }
  const version: Version = [Number(match[1]), Number(match[2])];
  return match[3] !== undefined ? { version, executable: match[3] } : { version };
}

export function isSupported(version: Version, min: Version = MIN_PYTHON): boolean {
  return version[0] > min[0] || (version[0] === min[0] && version[1] >= min[1]);
}

export function formatVersion(version: Version): string {
  return `${version[0]}.${version[1]}`;
}

/**
 * Tries the candidates in order with `probe`; the first one that is new enough
 * and that `accepts` (this build has its native libraries) wins.
 */
export async function resolveInterpreter(
  candidates: readonly Candidate[],
  probe: Probe,
  min: Version = MIN_PYTHON,
  accepts: (version: Version) => boolean = () => true,
): Promise<Resolution> {
  const attempts: Attempt[] = [];
  for (const candidate of candidates) {
    const result = await probe(candidate.command);
    if (result.kind === 'ok') {
      const found = `Python ${formatVersion(result.version)}${result.executable !== undefined && result.executable !== candidate.command ? ` at ${result.executable}` : ''}`;
      if (!isSupported(result.version, min)) {
        attempts.push({ candidate, outcome: 'too-old', detail: found });
      } else if (!accepts(result.version)) {
        attempts.push({ candidate, outcome: 'unsupported', detail: found });
      } else {
        return { ok: true, candidate, version: result.version, executable: result.executable, attempts };
      }
    } else {
      attempts.push({ candidate, outcome: result.kind, detail: result.detail });
    }
  }
  return { ok: false, attempts };
}

const SOURCE_LABEL: Record<InterpreterSource, string> = {
  setting: `setting ${CONFIG_SECTION}.${Settings.pythonPath}`,
  'python-extension': 'Python extension',
  path: 'PATH',
};

export function describeAttempt(attempt: Attempt): string {
  const what =
    attempt.outcome === 'missing'
      ? 'not found'
      : attempt.outcome === 'too-old'
        ? `${attempt.detail}, too old`
        : attempt.outcome === 'unsupported'
          ? `${attempt.detail}, not supported by this build`
          : `failed: ${attempt.detail}`;
  return `${attempt.candidate.command} (${SOURCE_LABEL[attempt.candidate.source]}: ${what})`;
}

/** What this build of the extension runs on: the CPython versions it has native libraries for. */
export interface BuildSupport {
  /** Oldest first; empty or absent: any Python >= min. */
  versions?: readonly Version[] | undefined;
  /** The build's vsce target, e.g. `linux-x64`. */
  target?: string | undefined;
}

/** `3.11, 3.12 or 3.13` */
function listVersions(versions: readonly Version[]): string {
  const names = versions.map(formatVersion);
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1] ?? ''}`;
}

/** The one notification shown when no interpreter can run the server. */
export function failureMessage(attempts: readonly Attempt[], min: Version = MIN_PYTHON, build: BuildSupport = {}): string {
  const tried = attempts.length > 0 ? attempts.map(describeAttempt).join('; ') : 'nothing';
  const setting = `"${CONFIG_SECTION}.${Settings.pythonPath}"`;
  const versions = build.versions ?? [];
  if (versions.length === 0) {
    return (
      `chunkls needs Python ${formatVersion(min)} or newer to run its language server. ` +
      `Tried: ${tried}. Set ${setting} to a Python ${formatVersion(min)}+ interpreter, then run "Chunks: Restart Server".`
    );
  }
  const who = build.target !== undefined ? `This build of the extension (${build.target})` : 'This build of the extension';
  return (
    `chunkls cannot start its language server: ${who} runs on Python ${listVersions(versions)}. ` +
    `Tried: ${tried}. Set ${setting} to a Python ${listVersions(versions)} interpreter, then run "Chunks: Restart Server".`
  );
}

/**
 * The notification when the configured interpreter cannot run the server:
 * one short sentence or two, readable in a toast.
 */
export function settingFailureMessage(attempt: Attempt, min: Version = MIN_PYTHON, build: BuildSupport = {}): string {
  const versions = build.versions ?? [];
  const wanted = versions.length > 0 ? `Python ${listVersions(versions)}` : `Python ${formatVersion(min)}+`;
  const why =
    attempt.outcome === 'missing'
      ? attempt.detail === 'EACCES'
        ? 'not executable'
        : 'not found'
      : attempt.outcome === 'too-old'
        ? `${attempt.detail}, too old`
        : attempt.outcome === 'unsupported'
          ? `${attempt.detail}, not supported by this build${build.target !== undefined ? ` (${build.target})` : ''}`
          : `failed: ${attempt.detail}`;
  return (
    `chunkls: "${CONFIG_SECTION}.${Settings.pythonPath}" (${attempt.candidate.command}) cannot run the server: ${why}. ` +
    `Set it to a ${wanted} interpreter, or clear it to choose one automatically.`
  );
}

/** The interpreter chosen for the server, or the message saying why there is none. */
export type Choice =
  | { ok: true; command: string; source: InterpreterSource; version: Version; executable?: string | undefined; attempts: Attempt[] }
  | { ok: false; message: string; attempts: Attempt[] };

export interface ChoiceInputs {
  /** `chunkls.server.pythonPath` as read now (already filtered by workspace trust). */
  settingPath?: string | undefined;
  /** Asked only when the setting is empty. */
  pythonExtensionPath: () => Promise<string | undefined>;
  homeDir?: string | undefined;
  workspaceFolder?: string | undefined;
}

/**
 * Picks the interpreter for one start: exactly the setting when it is set
 * (or a short message saying why it cannot run the server), else the
 * automatic choice.
 */
export async function chooseInterpreter(
  inputs: ChoiceInputs,
  probe: Probe,
  accepts: (version: Version) => boolean = () => true,
  build: BuildSupport = {},
  min: Version = MIN_PYTHON,
): Promise<Choice> {
  const setting = inputs.settingPath !== undefined && inputs.settingPath.trim().length > 0 ? inputs.settingPath : undefined;
  const candidates = interpreterCandidates({
    settingPath: setting,
    pythonExtensionPath: setting === undefined ? await inputs.pythonExtensionPath() : undefined,
    homeDir: inputs.homeDir,
    workspaceFolder: inputs.workspaceFolder,
  });
  const resolution = await resolveInterpreter(candidates, probe, min, accepts);
  if (resolution.ok) {
    const { candidate, version, executable, attempts } = resolution;
    return { ok: true, command: candidate.command, source: candidate.source, version, executable, attempts };
  }
  const [first] = resolution.attempts;
  const message =
    setting !== undefined && first !== undefined
      ? settingFailureMessage(first, min, build)
      : failureMessage(resolution.attempts, min, build);
  return { ok: false, message, attempts: resolution.attempts };
}

/** Python source for the probe: prints `major.minor executable`. */
export const PROBE_SCRIPT = 'import sys; print("%d.%d %s" % (sys.version_info[0], sys.version_info[1], sys.executable))';

/** A probe that runs the interpreter (no shell) with a timeout. */
export function execProbe(timeoutMs = 15000): Probe {
  return (command) =>
    new Promise<ProbeResult>((resolve) => {
      execFile(command, ['-c', PROBE_SCRIPT], { timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
        if (error !== null) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT' || code === 'EACCES') {
            resolve({ kind: 'missing', detail: code });
            return;
          }
          const text = stderr.trim().split('\n').pop() ?? '';
          resolve({ kind: 'error', detail: text.length > 0 ? text : error.message });
          return;
        }
        const parsed = parseProbeOutput(stdout);
        if (parsed === undefined) {
          resolve({ kind: 'error', detail: `unexpected output ${JSON.stringify(stdout.slice(0, 80))}` });
          return;
        }
        resolve({ kind: 'ok', version: parsed.version, executable: parsed.executable });
      });
    });
}
