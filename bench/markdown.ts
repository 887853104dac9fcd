// Shared by the benchmarks: the machine they ran on, and writing one section of BENCHMARKS.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

/** cpuModel names the CPU (from /proc/cpuinfo, else Node's view). */
export function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) return line.split(':')[1]!.trim();
  } catch {
    // fall through
  }
  return cpus()[0]?.model ?? 'unknown CPU';
}

/** writeSection replaces (or appends) the section headed `heading` in BENCHMARKS.md at `root` and returns the file's path. */
export function writeSection(root: string, heading: string, text: string): string {
  const path = join(root, 'BENCHMARKS.md');
  const existing = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n\n';
  const lines = existing.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  let out: string;
  if (start < 0) {
    out = `${existing.replace(/\n*$/, '\n\n')}${text}`;
  } else {
    let end = lines.findIndex((l, i) => i > start && /^## /.test(l));
    if (end < 0) end = lines.length;
    const before = lines.slice(0, start).join('\n');
    const after = lines.slice(end).join('\n');
    out = `${before}${before ? '\n' : ''}${text}${after ? `\n${after}` : ''}`;
  }
  writeFileSync(path, out.replace(/\n*$/, '\n'));
  return path;
}
