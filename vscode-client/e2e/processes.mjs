// Processes of the real-VS Code run, found through /proc (Linux).
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** Pids of `python -m chunkls <subcommand>` processes whose working directory is `cwd`. */
export function chunklsPids(subcommand, cwd) {
  const pids = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) {
      continue;
    }
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (cmdline.includes('chunkls') && cmdline.includes(subcommand) && readlinkSync(`/proc/${name}/cwd`) === cwd) {
        pids.push(Number(name));
      }
    } catch {
      // gone, or not ours
    }
  }
  return pids;
}
