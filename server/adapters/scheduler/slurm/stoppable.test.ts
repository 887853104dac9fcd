import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stoppable } from './index';

// The wrapper runs here as slurmd runs a batch script: bash on a file. Slurm signals every process of the
// job, in no fixed order, so each case sends the signal to the wrapper, to the command, or to both.
const dir = mkdtempSync(join(tmpdir(), 'portal-stoppable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
async function runWrapped(command: string, act: (pids: { wrapper: number; command: number }) => void) {
  n += 1;
  const pidFile = join(dir, `command-${n}.pid`);
  const file = join(dir, `job-${n}.sh`);
  writeFileSync(file, stoppable(`#!/bin/bash\necho $$ > ${pidFile}\n${command}\n`));
  const wrapper = spawn('/bin/bash', [file], { stdio: 'ignore' });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    wrapper.on('exit', (code, signal) => resolve({ code, signal })),
  );
  for (let i = 0; i < 200 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 10));
  const commandPid = Number(readFileSync(pidFile, 'utf8').trim());
  act({ wrapper: wrapper.pid!, command: commandPid });
  return ended;
}

describe('stoppable', () => {
  it("ends by SIGTERM when the command got Slurm's SIGTERM first and died of it", async () => {
    const end = await runWrapped('exec sleep 30', ({ command }) => process.kill(command, 'SIGTERM'));
    expect(end).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('ends by SIGTERM when the wrapper gets it first, and its command is ended too', async () => {
    const end = await runWrapped('exec sleep 30', ({ wrapper }) => process.kill(wrapper, 'SIGTERM'));
    expect(end).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('ends clean on a stop (SIGUSR1), whichever process gets it first', async () => {
    expect(await runWrapped('exec sleep 30', ({ wrapper }) => process.kill(wrapper, 'SIGUSR1'))).toEqual({ code: 0, signal: null });
    expect(await runWrapped('exec sleep 30', ({ command }) => process.kill(command, 'SIGUSR1'))).toEqual({ code: 0, signal: null });
  });

  it("keeps the command's own exit code, success or failure", async () => {
    expect(await runWrapped('exit 3', () => {})).toEqual({ code: 3, signal: null });
    expect(await runWrapped('true', () => {})).toEqual({ code: 0, signal: null });
  });

  it('ends by the signal that killed the command (an out-of-memory kill is SIGKILL)', async () => {
    const end = await runWrapped('exec sleep 30', ({ command }) => process.kill(command, 'SIGKILL'));
    expect(end).toEqual({ code: null, signal: 'SIGKILL' });
  });
});
