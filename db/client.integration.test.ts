// The embedded database: data survives a restart, and a second process on the same folder is refused.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateDb, openDb } from './client';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE } from './lock';
import { users } from './schema';

const dirs: string[] = [];
function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-db-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('embedded database folder', () => {
  it('keeps data across a close and reopen', async () => {
    const dir = tempDir();
    const first = await openDb({ driver: 'pglite', dataDir: dir });
    await migrateDb(first);
    await first.db.insert(users).values({ email: 'kept@example.org', name: 'Kept', passwordHash: 'x' });
    await first.close();
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    const second = await openDb({ driver: 'pglite', dataDir: dir });
    await migrateDb(second);
    const rows = await second.db.select({ name: users.name }).from(users).where(eq(users.email, 'kept@example.org'));
    await second.close();
    expect(rows).toEqual([{ name: 'Kept' }]);
  });

  it('refuses a second process while the first holds the folder, and says what to do', async () => {
    const dir = tempDir();
    // Another process takes the lock and keeps running.
    const holder = spawn(process.execPath, ['-e', `require('fs').writeFileSync(${JSON.stringify(path.join(dir, LOCK_FILE))}, JSON.stringify({pid: process.pid, command: 'npm start', since: 'now'})); setInterval(() => {}, 1000);`]);
    try {
      // Wait until the holder has written its lock (node may take a while to start on a busy machine).
      for (let i = 0; i < 200 && !fs.existsSync(path.join(dir, LOCK_FILE)); i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 50));
      expect(() => acquireDataDirLock(dir, 'second server')).toThrow(DataDirLockedError);
      expect(() => acquireDataDirLock(dir, 'second server')).toThrow(/in use by another process \(pid \d+, "npm start"/);
      expect(() => acquireDataDirLock(dir, 'second server')).toThrow(/PORTAL_DATA_DIR/);
      await expect(openDb({ driver: 'pglite', dataDir: dir })).rejects.toThrow(DataDirLockedError);
    } finally {
      holder.kill();
    }
  });

  it('takes over a lock left behind by a process that died', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: 2 ** 22 + 12345, command: 'crashed', since: 'then' }));
    const release = acquireDataDirLock(dir, 'new server');
    expect((JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')) as { pid: number }).pid).toBe(process.pid);
    release();
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
  });
});
