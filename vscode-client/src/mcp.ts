/**
 * Offers the bundled MCP server (`python -m chunkls mcp`) to VS Code's agent mode,
 * through `vscode.lm.registerMcpServerDefinitionProvider`. The interpreter is the
 * language server's (pythonChoice.ts: an untrusted workspace's interpreter setting
 * is ignored the same way), the roots are the window's folders, and
 * `chunkls.mcp.enabled` turns it off.
 */

import * as vscode from 'vscode';
import { CONFIG_SECTION, MCP_PROVIDER_ID, SettingDefaults, Settings } from './constants';
import { readLayout, serverEnv } from './launch';
import { mcpDefinition } from './mcpDefinition';
import { choosePython } from './pythonChoice';

/** Registers the provider (nothing on a VS Code without the MCP API); returns what to dispose. */
export function registerMcpServer(context: vscode.ExtensionContext, output: vscode.LogOutputChannel): { dispose(): unknown }[] {
  const lm = vscode.lm as Partial<typeof vscode.lm> | undefined;
  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function') {
    output.info('This VS Code has no MCP server API: the chunkls MCP server is not offered');
    return [];
  }
  const changed = new vscode.EventEmitter<void>();
  const provider: vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition> = {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: async () => {
      const config = vscode.workspace.getConfiguration(CONFIG_SECTION);
      const enabled = config.get<boolean>(Settings.mcpEnabled, SettingDefaults.mcpEnabled);
      const roots = (vscode.workspace.workspaceFolders ?? [])
        .filter((folder) => folder.uri.scheme === 'file')
        .map((folder) => folder.uri.fsPath);
      const choice = enabled && roots.length > 0 ? await choosePython(context.extensionPath, output) : undefined;
      const definition = mcpDefinition({
        enabled,
        roots,
        python: choice?.ok === true ? { ok: true, command: choice.command } : { ok: false, message: choice?.message ?? 'not looked for' },
        env: choice?.ok === true ? serverEnv(readLayout(context.extensionPath), choice.version, process.env.PYTHONPATH) : undefined,
        version: extensionVersion(context),
      });
      if (!definition.ok) {
        output.info(`The chunkls MCP server is not offered: ${definition.reason}`);
        return [];
      }
      const server = new vscode.McpStdioServerDefinition(definition.label, definition.command, definition.args, definition.env, definition.version);
      server.cwd = vscode.Uri.file(definition.cwd);
      output.info(`Offering the chunkls MCP server: ${definition.command} ${definition.args.join(' ')}`);
      return [server];
    },
  };
  return [
    changed,
    vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${CONFIG_SECTION}.${Settings.mcpEnabled}`) || e.affectsConfiguration(`${CONFIG_SECTION}.${Settings.pythonPath}`)) {
        changed.fire();
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => changed.fire()),
    vscode.workspace.onDidGrantWorkspaceTrust(() => changed.fire()),
  ];
}

function extensionVersion(context: vscode.ExtensionContext): string {
  const version = (context.extension.packageJSON as { version?: unknown }).version;
  return typeof version === 'string' ? version : '0';
}
