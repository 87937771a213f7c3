/**
 * The "cited by N" lens: its arguments arrive as LSP JSON (uri, position,
 * locations); VS Code's references view wants its own types. The parsing is
 * pure so it can be unit-tested without VS Code.
 */

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspLocation {
  uri: string;
  range: { start: LspPosition; end: LspPosition };
}

export interface ReferencesArguments {
  uri: string;
  position: LspPosition;
  locations: LspLocation[];
}

function isPosition(value: unknown): value is LspPosition {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const { line, character } = value as Record<string, unknown>;
  return Number.isInteger(line) && Number.isInteger(character);
}

function isLocation(value: unknown): value is LspLocation {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const { uri, range } = value as Record<string, unknown>;
  if (typeof uri !== 'string' || typeof range !== 'object' || range === null) {
    return false;
  }
  const { start, end } = range as Record<string, unknown>;
  return isPosition(start) && isPosition(end);
}

/** The lens's arguments, or undefined when they are not (uri, position, locations). */
export function parseReferencesArguments(args: readonly unknown[]): ReferencesArguments | undefined {
  const [uri, position, locations] = args;
  if (typeof uri !== 'string' || !isPosition(position) || !Array.isArray(locations)) {
    return undefined;
  }
  if (!locations.every(isLocation)) {
    return undefined;
  }
  return { uri, position, locations };
}
