// Shared by the benchmarks: the machine they ran on, and writing one section of BENCHMARKS.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
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

/** machine describes the machine a benchmark ran on: CPU, cores, RAM and Node. */
export function machine(): string {
  const ramGiB = (totalmem() / 1024 ** 3).toLocaleString('en-GB', { maximumFractionDigits: 1, minimumFractionDigits: 1 });
  return `${cpuModel()}, ${cpus().length} cores (shared), ${ramGiB} GiB RAM, Node ${process.version}`;
}

/** loadAverage formats the 1/5/15-minute load average (now, or a reading taken earlier). */
export function loadAverage(reading: number[] = loadavg()): string {
  return `${reading.map((l) => l.toFixed(2)).join(' / ')} (1/5/15 min)`;
}

/** mark is the met/missed cell of a table row with a target. */
export function mark(met: boolean): string {
  return met ? 'met' : '**missed**';
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
