// Crash test: 50 jobs are submitted, the process is killed without warning mid-way, a new process
// takes over the same database; every job reaches a final state, is settled exactly once, and the
// ledger balances. On PGlite (the killed process leaves a stale folder lock) and on real Postgres.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dbTargets } from '~/server/testing/harness';

const DRILL = path.join(process.cwd(), 'server/testing/restart-drill.ts');
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

function run(args: string[], untilLine?: (line: string) => boolean) {
  // node itself runs the drill (tsx as a loader, not as a wrapper process), so SIGKILL hits the process that holds the database.
  const child = spawn(process.execPath, ['--import', 'tsx', DRILL, ...args], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const matched = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n').filter(Boolean)) {
        lines.push(line);
        if (untilLine?.(line)) resolve();
      }
    });
    child.on('exit', (code) => (code === 0 || code === null ? resolve() : reject(new Error(`drill exited ${code}: ${stderr}`))));
  });
  return { child, lines, matched, stderr: () => stderr };
}

async function location(target: 'pglite' | 'postgres'): Promise<string> {
  if (target === 'pglite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-drill-'));
    cleanups.push(() => Promise.resolve(fs.rmSync(dir, { recursive: true, force: true })));
    return dir;
  }
  const { default: postgres } = await import('postgres');
  const admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => undefined });
  const name = `portal_drill_${randomBytes(5).toString('hex')}`;
  await admin.unsafe(`create database ${name}`);
  cleanups.push(async () => {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  });
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

describe.each(dbTargets())('restart on %s', (target) => {
  it('brings all 50 jobs to a final state after a kill, settling each exactly once', { timeout: 180_000 }, async () => {
    const where = await location(target);
    const first = run(['submit', target, where], (line) => line.includes('"submitted"'));
    await first.matched;
    // Let some jobs start and finish, then kill the process without any chance to clean up.
    await new Promise((r) => setTimeout(r, 1500));
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.on('exit', r));

    const second = run(['resume', target, where]);
    await second.matched;
    const report = JSON.parse(second.lines.at(-1)!) as {
      jobs: number;
      open: number;
      settledBeforeResume: number;
      openStatesBeforeResume: string[];
      states: string[];
      settled: number;
      perJob: { reserve: number; release: number; charge: number }[];
      balancesMatch: boolean;
      reservedLeft: number;
      chargedOnJobs: number;
      chargedInLedger: number;
    };
    console.info(`[restart on ${target}] at the kill: ${report.settledBeforeResume}/50 settled, open: ${report.openStatesBeforeResume.join(' ')}`);
    expect(report.jobs).toBe(50);
    // The kill came mid-way: jobs were still queued or running when the new process took over.
    expect(report.settledBeforeResume).toBeLessThan(50);
    expect(report.openStatesBeforeResume.length).toBeGreaterThan(0);
    expect(report.open).toBe(0);
    expect(report.settled).toBe(50);
    for (const state of report.states) expect(['COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED', 'NODE_FAIL']).toContain(state);
    for (const j of report.perJob) {
      expect(j.reserve).toBe(1);
      expect(j.release).toBe(1);
      expect(j.charge).toBeLessThanOrEqual(1);
    }
    expect(report.balancesMatch).toBe(true);
    expect(report.reservedLeft).toBe(0);
    expect(report.chargedInLedger).toBe(report.chargedOnJobs);
    expect(report.chargedOnJobs).toBeGreaterThan(0);
  });
});
