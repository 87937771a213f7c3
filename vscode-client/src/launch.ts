import * as fs from 'node:fs';
import * as path from 'node:path';
import { BUNDLED_LIBS } from './constants';

/** Arguments after the interpreter; vscode-languageclient appends `--stdio`. */
export const SERVER_ARGS: readonly string[] = ['-m', 'chunkls', 'serve'];

/** PYTHONPATH for the server: the bundled libs (packaged) or `server/` (running from the repository). */
export function serverPythonPath(
  extensionPath: string,
  existing: string | undefined,
  exists: (p: string) => boolean = fs.existsSync,
): string {
  const parts: string[] = [];
  const bundled = path.join(extensionPath, ...BUNDLED_LIBS);
  if (exists(bundled)) {
    parts.push(bundled);
  } else {
    const dev = path.join(extensionPath, 'server');
    if (exists(path.join(dev, 'chunkls'))) {
      parts.push(dev);
    }
  }
  if (existing !== undefined && existing.length > 0) {
    parts.push(existing);
  }
  return parts.join(path.delimiter);
}

/** Environment additions for the server process (merged over the extension host's). */
export function serverEnv(extensionPath: string, existingPythonPath: string | undefined): Record<string, string> {
  return {
    PYTHONPATH: serverPythonPath(extensionPath, existingPythonPath),
    PYTHONUNBUFFERED: '1',
    PYTHONIOENCODING: 'utf-8',
  };
}

/** The chunk ID passed by a lens (a string) or, defensively, an object carrying one. */
export function chunkIdArgument(arg: unknown): string | undefined {
  if (typeof arg === 'string' && arg.length > 0) {
    return arg;
  }
  if (typeof arg === 'object' && arg !== null) {
    const value = (arg as { chunkId?: unknown }).chunkId;
    if (typeof value === 'string' && value.length > 0) {
      return value;
    }
  }
  return undefined;
}

/** The `chunkls.chunkAt` argument for a document and a 0-based line. */
export function chunkAtArguments(uri: string, line: number): [{ uri: string; line: number }] {
  return [{ uri, line }];
}
