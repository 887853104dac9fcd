// CPU time of processes from /proc (Linux): what a benchmark's processes spent, in one run, for figures
// that compare one program's CPU with another's on the same shared machine (a ratio of CPU seconds does
// not depend on how busy the machine is, a ratio of throughputs does).
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks a second of /proc/<pid>/stat's utime and stime (USER_HZ: 100 on every Linux there is). */
const TICKS_PER_SECOND = 100;

/** pidsNamed lists the processes whose command name (/proc/<pid>/comm) is one of `names`. */
export function pidsNamed(names: readonly string[]): number[] {
  const wanted = new Set(names);
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (wanted.has(readFileSync(`/proc/${entry}/comm`, 'utf8').trim())) out.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** treeOf lists a process and its descendants (a server's web processes and what they started). */
export function treeOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // ended meanwhile
    }
  }
  const out: number[] = [];
  const visit = (p: number) => {
    out.push(p);
    for (const c of children.get(p) ?? []) visit(c);
  };
  visit(pid);
  return out;
}

/** cpuSecondsOf sums the user and system CPU seconds the processes spent so far (a process gone counts 0). */
export function cpuSecondsOf(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      // The fields after the command name (which may hold spaces and parentheses): state is the 3rd field, utime the 14th, stime the 15th.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // ended meanwhile
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** A meter of named programs' CPU, the processes looked up afresh at each reading (Postgres starts a backend per connection). */
export function cpuMeter(groups: Record<string, readonly string[]>) {
  const self = () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  };
  // The group `self` is this process (exact, from Node); the others by their programs' names.
  const read = () => Object.fromEntries(Object.entries(groups).map(([group, names]) => [group, group === 'self' ? self() : cpuSecondsOf(pidsNamed(names))])) as Record<string, number>;
  return {
    /** start reads every group; the function it answers gives the CPU seconds each spent since. */
    start() {
      const before = read();
      return () => {
        const after = read();
        return Object.fromEntries(Object.keys(groups).map((g) => [g, Math.max(0, after[g]! - before[g]!)])) as Record<string, number>;
      };
    },
  };
}
