/** What the MCP server definition says (no VS Code here: unit-tested). */

/** Arguments after the interpreter: `chunkls mcp` with one `--root` per workspace folder. */
export function mcpServerArgs(roots: readonly string[]): string[] {
  return ['-m', 'chunkls', 'mcp', ...roots.flatMap((root) => ['--root', root])];
}

export interface McpInputs {
  /** `chunkls.mcp.enabled`. */
  enabled: boolean;
  /** The file-system paths of the window's folders (`file:` ones only). */
  roots: readonly string[];
  /** The interpreter the language server would use, or why there is none. */
  python: { ok: true; command: string } | { ok: false; message: string };
  /** The server's environment (PYTHONPATH to the bundle), or undefined when the bundle cannot run on that Python. */
  env: Record<string, string> | undefined;
  /** The extension's version (VS Code refreshes the tool list when it changes). */
  version: string;
}

export type McpDefinition =
  | { ok: true; label: string; command: string; args: string[]; env: Record<string, string>; cwd: string; version: string }
  | { ok: false; reason: string };

/** The stdio server to offer, or why none is offered. */
export function mcpDefinition(inputs: McpInputs): McpDefinition {
  if (!inputs.enabled) {
    return { ok: false, reason: 'chunkls.mcp.enabled is off' };
  }
  const cwd = inputs.roots[0];
  if (cwd === undefined) {
    return { ok: false, reason: 'no folder is open on disk' };
  }
  if (!inputs.python.ok) {
    return { ok: false, reason: inputs.python.message };
  }
  if (inputs.env === undefined) {
    return { ok: false, reason: 'the bundled server cannot run on that Python' };
  }
  return {
    ok: true,
    label: 'chunkls',
    command: inputs.python.command,
    args: mcpServerArgs(inputs.roots),
    env: inputs.env,
    cwd,
    version: inputs.version,
  };
}
