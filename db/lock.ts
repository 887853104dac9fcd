// PGlite has no lock of its own: two processes on one folder both "work" and silently lose
// writes. The process that opens the embedded folder holds this lock file for its lifetime.
import fs from 'node:fs';
import path from 'node:path';

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      [
        `The embedded database in ${dataDir} is in use by another process (pid ${holder.pid}, "${holder.command}", since ${holder.since}).`,
        'Only one process may open an embedded database folder; a second one would silently lose data.',
        'What to do: stop that process first (Ctrl+C in its terminal, or `kill ' + holder.pid + '`),',
        'or run this one on its own folder with PORTAL_DATA_DIR=<folder>, or point both at a real Postgres with DATABASE_URL.',
        `If no such process runs any more, delete ${path.join(dataDir, LOCK_FILE)}.`,
      ].join('\n'),
    );
    this.name = 'DataDirLockedError';
  }
}

export interface LockHolder {
  pid: number;
  command: string;
  since: string;
}

export const LOCK_FILE = 'portal.lock';

/**
 * isAlive tells whether a process still runs. A zombie (killed, not yet reaped by its parent, e.g. a
 * server killed by its supervisor a moment ago) still answers signal 0 but holds nothing: on Linux its
 * state in /proc is Z (or X, dead), and it counts as gone.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Format: pid (command, may hold spaces and parentheses) state …
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // no /proc (macOS): signal 0 is all there is
  }
}

function readHolder(lockPath: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number') return undefined;
    return { pid: parsed.pid, command: parsed.command ?? 'unknown', since: parsed.since ?? 'unknown' };
  } catch {
    return undefined;
  }
}

/** acquireDataDirLock takes the folder's lock for this process or throws DataDirLockedError. */
export function acquireDataDirLock(dataDir: string, command: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, LOCK_FILE);
  const me: LockHolder = { pid: process.pid, command, since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(lockPath, JSON.stringify(me), { flag: 'wx' });
      const release = () => {
        if (readHolder(lockPath)?.pid === process.pid) fs.rmSync(lockPath, { force: true });
      };
      process.once('exit', release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHolder(lockPath);
      if (holder && holder.pid === process.pid) return () => undefined;
      if (holder && isAlive(holder.pid)) throw new DataDirLockedError(dataDir, holder);
      // A stale lock from a process that died: remove it and try again.
      fs.rmSync(lockPath, { force: true });
    }
  }
  throw new Error(`Could not take the lock ${lockPath}`);
}
