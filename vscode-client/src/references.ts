/**
 * The "cited by N" lens: its arguments arrive as LSP JSON (uri, position,
 * locations), checked here with the protocol's own guards; the client's
 * protocol converter makes VS Code types of them. The parsing is pure so it
 * can be unit-tested without VS Code.
 */

import { Location, Position } from 'vscode-languageserver-protocol';

export interface ReferencesArguments {
  uri: string;
  position: Position;
  locations: Location[];
}

/** The protocol's guard lets a location go without its URI; the lens always sends one. */
function isLocation(value: unknown): value is Location {
  return Location.is(value) && typeof value.uri === 'string';
}

/** The lens's arguments, or undefined when they are not (uri, position, locations). */
export function parseReferencesArguments(args: readonly unknown[]): ReferencesArguments | undefined {
  const [uri, position, locations] = args;
  if (typeof uri !== 'string' || !Position.is(position) || !Array.isArray(locations)) {
    return undefined;
  }
  if (!locations.every(isLocation)) {
    return undefined;
  }
  return { uri, position, locations };
}
