// What of pip's stderr explains a failure: from its first error line on (pip's
// own "ERROR: ..." lines, a build's "error: ..."), else everything but noise
// such as pyenv's or pip's warnings; at most MAX_LINES lines.
const MAX_LINES = 40;
const ERROR = /^\s*(ERROR|error)\b/;
const NOISE = /^(pyenv: |pyenv-|WARNING: |\[notice\] )/;

/** @param {string} stderr pip's whole stderr */
export function pipError(stderr) {
  const lines = stderr.replace(/\r\n?/g, '\n').trimEnd().split('\n');
  const first = lines.findIndex((line) => ERROR.test(line));
  let relevant = first >= 0 ? lines.slice(first) : lines.filter((line) => !NOISE.test(line) && line.trim() !== '');
  if (relevant.length === 0) {
    relevant = lines;
  }
  if (relevant.length > MAX_LINES) {
    relevant = [...relevant.slice(0, MAX_LINES - 1), `... (${relevant.length - MAX_LINES + 1} more lines)`];
  }
  return relevant.join('\n').trim();
}
