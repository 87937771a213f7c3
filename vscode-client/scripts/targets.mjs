// The platform a .vsix is built for, shared by bundle-server, package and check-vsix.
//
//   CHUNKLS_TARGET           a vsce target (below); default: this machine's
//   CHUNKLS_PYTHON_VERSIONS  CPython versions to bundle numpy for; default 3.11,3.12,3.13,3.14
//
// The pure-Python part of the server (bundled/libs) is the same for every
// target; numpy is compiled, so each target's .vsix carries numpy wheels for
// that OS/arch, one folder per CPython version (bundled/native/cp3XY).

/** vsce target -> pip `--platform` tags (pip also accepts older manylinux / macOS tags than these). */
export const TARGETS = {
  'linux-x64': ['manylinux_2_28_x86_64'],
  'linux-arm64': ['manylinux_2_28_aarch64'],
  'alpine-x64': ['musllinux_1_2_x86_64'],
  'alpine-arm64': ['musllinux_1_2_aarch64'],
  'darwin-x64': ['macosx_11_0_x86_64'],
  'darwin-arm64': ['macosx_11_0_arm64'],
  'win32-x64': ['win_amd64'],
  'win32-arm64': ['win_arm64'],
};

export const DEFAULT_PYTHON_VERSIONS = ['3.11', '3.12', '3.13', '3.14'];

/** This machine's vsce target (alpine-* on musl Linux). */
export function hostTarget() {
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
  if (arch === undefined) {
    return undefined;
  }
  if (process.platform === 'linux') {
    const glibc = process.report?.getReport()?.header?.glibcVersionRuntime;
    return `${glibc === undefined ? 'alpine' : 'linux'}-${arch}`;
  }
  if (process.platform === 'darwin' || process.platform === 'win32') {
    return `${process.platform}-${arch}`;
  }
  return undefined;
}

/** The target to build: $CHUNKLS_TARGET or this machine's; throws on an unknown one. */
export function selectedTarget() {
  const target = process.env.CHUNKLS_TARGET || hostTarget();
  if (target === undefined || !(target in TARGETS)) {
    throw new Error(
      `unknown target ${JSON.stringify(target ?? `${process.platform}-${process.arch}`)}; ` +
        `set CHUNKLS_TARGET to one of ${Object.keys(TARGETS).join(', ')}`,
    );
  }
  return target;
}

/** ['3.11', ...] from $CHUNKLS_PYTHON_VERSIONS or the default. */
export function pythonVersions() {
  const raw = process.env.CHUNKLS_PYTHON_VERSIONS;
  const versions = raw ? raw.split(/[\s,]+/).filter((v) => v.length > 0) : DEFAULT_PYTHON_VERSIONS;
  for (const v of versions) {
    if (!/^3\.\d+$/.test(v) || Number(v.split('.')[1]) < 11) {
      throw new Error(`CHUNKLS_PYTHON_VERSIONS: ${JSON.stringify(v)} is not a CPython version 3.11 or newer`);
    }
  }
  return versions;
}

/** '3.12' -> 'cp312', the folder name under bundled/native (the client derives the same). */
export function nativeTag(version) {
  return `cp${version.replace('.', '')}`;
}

/** The .vsix file name vsce gives a target build. */
export function vsixName(target, version) {
  return `chunkls-${target}-${version}.vsix`;
}
