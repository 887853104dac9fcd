import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isAlive } from './lock';

describe.runIf(process.platform === 'linux')('isAlive', () => {
  it('counts a running process as alive and a killed, not yet reaped one (a zombie) as gone', async () => {
    expect(isAlive(process.pid)).toBe(true);
    // `sh` starts a background sleep, prints its pid and becomes `sleep 60`, which never reaps it:
    // once killed, the background sleep stays a zombie.
    const parent = spawn('sh', ['-c', 'sleep 30 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()))));
    const command = (p: number) => fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(' ')[1];
    try {
      // Wait until the shell has become `sleep 60` (a shell would still reap its child).
      for (const until = Date.now() + 5_000; (command(parent.pid!) !== '(sleep)' || command(pid) !== '(sleep)') && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
      expect(isAlive(pid)).toBe(true);
      process.kill(pid, 'SIGKILL');
      const deadline = Date.now() + 5_000;
      while (!fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(() => process.kill(pid, 0)).not.toThrow(); // signal 0 still "reaches" the zombie
      expect(isAlive(pid)).toBe(false);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
