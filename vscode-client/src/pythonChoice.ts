/** The interpreter for a chunkls process (the language server, the MCP server): one rule for both. */

import * as os from 'node:os';
import * as vscode from 'vscode';
import { CONFIG_SECTION, Settings } from './constants';
import { chooseInterpreter, execProbe, formatVersion, type Choice } from './interpreter';
import { readLayout, supportedVersions, supportsVersion } from './launch';
import { activeInterpreter } from './pythonExtension';

/**
 * Picks the interpreter from the settings as they are now (VS Code drops an
 * untrusted workspace's value of `chunkls.server.pythonPath`), then the Python
 * extension's active environment, then `PATH`; only one the bundle can run.
 */
export async function choosePython(extensionPath: string, output: vscode.LogOutputChannel): Promise<Choice> {
  const config = vscode.workspace.getConfiguration(CONFIG_SECTION);
  const folder = vscode.workspace.workspaceFolders?.[0];
  const layout = readLayout(extensionPath);
  const choice = await chooseInterpreter(
    {
      settingPath: config.get<string>(Settings.pythonPath),
      pythonExtensionPath: () => activeInterpreter(folder?.uri),
      homeDir: os.homedir(),
      workspaceFolder: folder?.uri.fsPath,
    },
    execProbe(),
    (v) => supportsVersion(layout, v),
    { versions: supportedVersions(layout), target: layout.target },
  );
  for (const attempt of choice.attempts) {
    output.warn(`Python candidate ${attempt.candidate.command} (${attempt.candidate.source}): ${attempt.outcome} ${attempt.detail}`);
  }
  if (choice.ok) {
    output.info(`Using Python ${formatVersion(choice.version)} at ${choice.executable ?? choice.command} (from ${choice.source})`);
  }
  return choice;
}
