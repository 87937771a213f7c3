import * as vscode from 'vscode';
import { PYTHON_EXTENSION_ID } from './constants';

/** The slice of the Python extension's public API the client uses (no dependency on its package). */
interface PythonEnvironmentsApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(
      env: { path: string } | string,
    ): Promise<{ executable?: { uri?: vscode.Uri | undefined } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
}

function withTimeout<T>(promise: Thenable<T>, ms: number): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    Promise.resolve(promise).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}

async function api(): Promise<PythonEnvironmentsApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonEnvironmentsApi>(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  const exports = extension.isActive ? extension.exports : await withTimeout(extension.activate(), 10000);
  return exports ?? undefined;
}

/** The interpreter of the Python extension's active environment, if that extension is installed. */
export async function activeInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
  try {
    const environments = (await api())?.environments;
    if (environments === undefined) {
      return undefined;
    }
    const active = environments.getActiveEnvironmentPath(resource);
    if (active === undefined) {
      return undefined;
    }
    const resolved = await withTimeout(environments.resolveEnvironment(active), 10000);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  } catch {
    return undefined;
  }
}

/** Calls `listener` when the Python extension's active environment changes (no-op without it). */
export async function onActiveInterpreterChanged(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    const event = (await api())?.environments?.onDidChangeActiveEnvironmentPath;
    return event?.(() => listener());
  } catch {
    return undefined;
  }
}
