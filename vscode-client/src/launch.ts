import * as fs from 'node:fs';
import * as path from 'node:path';
import { BUNDLED_LIBS, BUNDLED_NATIVE, BUNDLED_TARGET } from './constants';

/** Arguments after the interpreter; vscode-languageclient appends `--stdio`. */
export const SERVER_ARGS: readonly string[] = ['-m', 'chunkls', 'serve'];

export type PythonVersion = readonly [number, number];

/** What the extension carries to run the server (see vscode-client/scripts/bundle-server.mjs). */
export interface ServerLayout {
  /** `bundled/libs`: the server and its pure-Python dependencies. */
  libs?: string | undefined;
  /** `server/`, when running from the repository without a bundle. */
  dev?: string | undefined;
  /** `cp3XY` -> `bundled/native/cp3XY` (numpy for that CPython); undefined when there is no `bundled/native`. */
  native?: ReadonlyMap<string, string> | undefined;
  /** The vsce target the bundle was built for (`bundled/target.json`), e.g. `linux-x64`. */
  target?: string | undefined;
}

/** The file system as `readLayout` sees it (injected by the tests). */
export interface LayoutFs {
  exists(p: string): boolean;
  list(p: string): string[];
  read(p: string): string | undefined;
}

const nodeFs: LayoutFs = {
  exists: (p) => fs.existsSync(p),
  list: (p) => {
    try {
      return fs.readdirSync(p);
    } catch {
      return [];
    }
  },
  read: (p) => {
    try {
      return fs.readFileSync(p, 'utf8');
    } catch {
      return undefined;
    }
  },
};

/** `[3, 12]` -> `cp312`, the folder under `bundled/native` for that CPython. */
export function nativeTag(version: PythonVersion): string {
  return `cp${version[0]}${version[1]}`;
}

/** Looks at the extension folder once: bundled libs, native folders, target; or `server/` in the repository. */
export function readLayout(extensionPath: string, view: LayoutFs = nodeFs): ServerLayout {
  const libs = path.join(extensionPath, ...BUNDLED_LIBS);
  if (!view.exists(libs)) {
    const dev = path.join(extensionPath, 'server');
    return view.exists(path.join(dev, 'chunkls')) ? { dev } : {};
  }
  const layout: { libs: string; native?: Map<string, string>; target?: string } = { libs };
  const nativeRoot = path.join(extensionPath, ...BUNDLED_NATIVE);
  if (view.exists(nativeRoot)) {
    layout.native = new Map(
      view
        .list(nativeRoot)
        .filter((name) => /^cp\d+$/.test(name))
        .map((name) => [name, path.join(nativeRoot, name)]),
    );
  }
  const raw = view.read(path.join(extensionPath, ...BUNDLED_TARGET));
  if (raw !== undefined) {
    try {
      const target = (JSON.parse(raw) as { target?: unknown }).target;
      if (typeof target === 'string' && target.length > 0) {
        layout.target = target;
      }
    } catch {
      // An unreadable target.json only loses the target's name in messages.
    }
  }
  return layout;
}

/** The CPython versions the bundle has native libraries for, oldest first (empty when it needs none). */
export function supportedVersions(layout: ServerLayout): PythonVersion[] {
  const out: PythonVersion[] = [];
  for (const tag of layout.native?.keys() ?? []) {
    const match = /^cp(\d)(\d+)$/.exec(tag);
    if (match !== null) {
      out.push([Number(match[1]), Number(match[2])]);
    }
  }
  return out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/** True when the bundle can run on this CPython: it has its native folder, or needs none. */
export function supportsVersion(layout: ServerLayout, version: PythonVersion): boolean {
  return layout.native === undefined || layout.native.has(nativeTag(version));
}

/**
 * PYTHONPATH for the server: `bundled/libs`, then `bundled/native/cp3XY` for the
 * interpreter's version (packaged), or `server/` (running from the repository);
 * an existing PYTHONPATH last. Undefined when the bundle has no native folder for
 * that version: starting the server would only crash on `import numpy`.
 */
export function serverPythonPath(
  layout: ServerLayout,
  version: PythonVersion,
  existing: string | undefined,
): string | undefined {
  if (!supportsVersion(layout, version)) {
    return undefined;
  }
  const parts: string[] = [];
  if (layout.libs !== undefined) {
    parts.push(layout.libs);
    const native = layout.native?.get(nativeTag(version));
    if (native !== undefined) {
      parts.push(native);
    }
  } else if (layout.dev !== undefined) {
    parts.push(layout.dev);
  }
  if (existing !== undefined && existing.length > 0) {
    parts.push(existing);
  }
  return parts.join(path.delimiter);
}

/** Environment additions for the server process (merged over the extension host's); undefined as for serverPythonPath. */
export function serverEnv(
  layout: ServerLayout,
  version: PythonVersion,
  existingPythonPath: string | undefined,
): Record<string, string> | undefined {
  const pythonPath = serverPythonPath(layout, version, existingPythonPath);
  if (pythonPath === undefined) {
    return undefined;
  }
  return {
    PYTHONPATH: pythonPath,
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
