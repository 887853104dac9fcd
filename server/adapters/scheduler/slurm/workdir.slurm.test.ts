// A job with its own working folder (spec.workDir, `<workspace>/jobs/<job id>`) on a real Slurm, through the
// adapter: the portal makes the folder first (mkdir -p, as root here), the job starts there and slurmstepd
// writes its stdout.log and stderr.log there as it runs (read twice while it runs, the second read longer),
// as the service user and as the job's person (the folders then its project group's, 2770); an array's tasks
// each write their own pair; a requeued job appends its second attempt to its first (open_mode append).
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputFileName } from '~/server/core/files/job-folder';
import { projectGroupName } from '~/server/core/scheduler/identity';
import { isFinalState, type SchedulerJobSpec, type SchedulerJobStatus, type SchedulerPort } from '~/server/core/scheduler/port';
import { createSlurmScheduler } from './index';
import { jobFolder } from './mapping';
import { catalogueClasses, scontrolJob, sleep, testClusterSettings, waitUntil } from './testing';

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', env: process.env });

/** A job that prints where it runs, one line to stderr, then a line every 0.5 s for 4 s. */
const TALKER = 'pwd; echo "to stderr" >&2; for i in 1 2 3 4 5 6 7 8; do echo "line $i"; sleep 0.5; done';
const TALKED = Array.from({ length: 8 }, (_, i) => `line ${i + 1}`);

const workspaces: string[] = [];

/** A job's working folder in a fresh workspace of a project group, made as the portal makes it (mkdir -p, as root). */
function madeWorkDir(group: string, portalJobId: string): string {
  const workspace = jobFolder(testClusterSettings().jobDir, group);
  workspaces.push(workspace);
  const workDir = `${workspace}/jobs/${portalJobId}`;
  mkdirSync(workDir, { recursive: true });
  return workDir;
}

function spec(command: string, over: Partial<SchedulerJobSpec> = {}): SchedulerJobSpec {
  return { portalJobId: randomUUID(), attempt: 1, name: 'workdir', partition: 'h100', gpus: 1, nodes: 1, walltimeSeconds: 300, account: 'contract-account', user: 'portal', image: 'none', command, env: {}, ...over };
}

const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');
const lines = (text: string) => text.split('\n').filter((l) => l !== '');

async function settled(port: SchedulerPort, id: string, maxSeconds = 60): Promise<SchedulerJobStatus> {
  let last: SchedulerJobStatus | undefined;
  const done = await waitUntil(async () => {
    [last] = await port.jobs([id]);
    return last !== undefined && isFinalState(last.state);
  }, maxSeconds);
  expect(done, `job ${id} ended within ${maxSeconds} s (it is ${last?.state})`).toBe(true);
  return last!;
}

/** Polls every 100 ms (waitUntil's second is too coarse for a job of 4 s). */
async function soon(condition: () => boolean, maxSeconds: number): Promise<boolean> {
  const deadline = Date.now() + maxSeconds * 1000;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

/**
 * Runs the talker in its working folder: stdout.log is there while the job runs and grows, and afterwards
 * holds every line after the folder the job ran in; stderr.log its own line.
 */
async function talkerWritesAsItRuns(port: SchedulerPort, s: SchedulerJobSpec): Promise<{ stdout: string; stderr: string }> {
  const stdout = `${s.workDir}/${outputFileName('stdout')}`;
  const stderr = `${s.workDir}/${outputFileName('stderr')}`;
  await port.submit(s);
  expect(await soon(() => lines(read(stdout)).includes('line 1'), 60), `${stdout} appears while the job runs`).toBe(true);
  const first = read(stdout);
  expect(lines(first), 'read while it runs').not.toContain('line 8');
  await sleep(1500);
  const second = read(stdout);
  expect(second.length, `the second read (${JSON.stringify(second)}) is longer than the first (${JSON.stringify(first)})`).toBeGreaterThan(first.length);
  expect(second.startsWith(first)).toBe(true);
  expect(await settled(port, s.portalJobId)).toMatchObject({ state: 'COMPLETED', exitCode: 0 });
  const [pwd, ...talked] = lines(read(stdout));
  // The job ran in its folder (compared resolved: the runtime dir may be a link to /var/lib/…).
  expect(realpathSync(pwd!)).toBe(realpathSync(s.workDir!));
  expect(talked).toEqual(TALKED);
  expect(read(stderr)).toBe('to stderr\n');
  return { stdout, stderr };
}

const octal = (path: string) => (statSync(path).mode & 0o7777).toString(8);

describe('a job in its working folder on a real Slurm', () => {
  afterAll(() => {
    for (const workspace of workspaces) rmSync(workspace, { recursive: true, force: true });
  });

  describe('as the service user (SLURM_SUBMIT_AS=service)', () => {
    const settings = testClusterSettings();
    const port = createSlurmScheduler(settings, catalogueClasses());
    const portalUid = Number(run('id', ['-u', settings.user]).trim());

    it("runs in its folder and writes stdout.log (growing while it runs) and stderr.log there; the folder is made the service user's", async () => {
      const s = spec(TALKER);
      const workDir = madeWorkDir(projectGroupName(randomUUID()), s.portalJobId);
      expect(statSync(workDir).uid, 'made by root').toBe(0);
      const { stdout, stderr } = await talkerWritesAsItRuns(port, { ...s, workDir });
      expect(statSync(workDir).uid).toBe(portalUid);
      for (const file of [stdout, stderr]) {
        expect(statSync(file).uid, file).toBe(portalUid);
        expect(octal(file), `${file}: the job's umask 0027`).toBe('640');
      }
      expect(readdirSync(workDir).sort()).toEqual(['stderr.log', 'stdout.log']);
    });

    it('an array of 2 tasks: each task writes its own stdout-<index>.log and stderr-<index>.log in the folder', async () => {
      const s = spec('pwd; echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID"; echo "task $SLURM_ARRAY_TASK_ID to stderr" >&2', { array: { text: '0-1' } });
      const workDir = madeWorkDir(projectGroupName(randomUUID()), s.portalJobId);
      const { schedulerJobId: arrayId } = await port.submit({ ...s, workDir });
      const status = await settled(port, s.portalJobId);
      expect(status).toMatchObject({ state: 'COMPLETED', tasksWaiting: 0 });
      expect(status.tasks!.map((t) => [t.index, t.state])).toEqual([
        [0, 'COMPLETED'],
        [1, 'COMPLETED'],
      ]);
      expect(readdirSync(workDir).sort()).toEqual(['stderr-0.log', 'stderr-1.log', 'stdout-0.log', 'stdout-1.log']);
      for (const task of [0, 1]) {
        const [pwd, said] = lines(read(`${workDir}/${outputFileName('stdout', task)}`));
        expect(realpathSync(pwd!)).toBe(realpathSync(workDir));
        expect(said).toBe(`task ${task} of ${arrayId}`);
        expect(read(`${workDir}/${outputFileName('stderr', task)}`)).toBe(`task ${task} to stderr\n`);
      }
    });

    it("a requeued job appends its next attempt's output to the earlier one's (Slurm's default would truncate it)", async () => {
      const requeuing = createSlurmScheduler(testClusterSettings({ requeue: true }), catalogueClasses());
      // The first attempt sleeps long enough to be requeued while it runs, however slowly a loaded machine
      // shows its first line (requeueing a job that had ended already is another case); the second ends soon.
      const s = spec('echo "attempt ${SLURM_RESTART_COUNT:-0} started"; sleep $(( ${SLURM_RESTART_COUNT:-0} > 0 ? 4 : 60 )); echo "attempt ${SLURM_RESTART_COUNT:-0} ended"');
      const workDir = madeWorkDir(projectGroupName(randomUUID()), s.portalJobId);
      const stdout = `${workDir}/${outputFileName('stdout')}`;
      const { schedulerJobId } = await requeuing.submit({ ...s, workDir });
      expect(await soon(() => read(stdout).includes('attempt 0 started'), 60), 'the first attempt writes').toBe(true);
      run('scontrol', ['requeue', schedulerJobId]);
      // Slurm holds a requeued job for its begin time (about two minutes): let it start now.
      expect(await waitUntil(() => scontrolJob(schedulerJobId).JobState === 'PENDING', 30), 'requeued').toBe(true);
      // Not within the second of the requeue: slurmd revokes the first attempt's credential at that second, and
      // a launch whose credential is from the same second is killed ("Job credential revoked", exit 1; CI
      // saw it when the requeue came 0.2 s after the start and StartTime=now 0.8 s later).
      await sleep(2000);
      run('scontrol', ['update', `jobid=${schedulerJobId}`, 'StartTime=now']);
      expect(await settled(requeuing, s.portalJobId, 90)).toMatchObject({ state: 'COMPLETED' });
      expect(lines(read(stdout))).toEqual(['attempt 0 started', 'attempt 1 started', 'attempt 1 ended']);
      expect(read(`${workDir}/${outputFileName('stderr')}`)).toMatch(/CANCELLED AT .* DUE TO JOB REQUEUE/);
    });
  });

  describe("as its person (SLURM_SUBMIT_AS=person): the folders become the project group's", () => {
    // The privileged token of SlurmUser acts for the person (as in identity.slurm.test.ts).
    const settings = testClusterSettings({ user: 'slurm', submitAs: 'person' });
    const port = createSlurmScheduler(settings, catalogueClasses());
    const tag = randomUUID().replace(/-/g, '').slice(0, 8);
    const person = `wd${tag}`;
    const group = projectGroupName(randomUUID());

    // What a centre's directory and the budget sync would hold: the person, in the project's group, with an
    // association in the account the job runs under.
    beforeAll(() => {
      run('groupadd', [group]);
      run('useradd', ['-M', '-N', '-g', 'users', '-G', group, '-s', '/bin/bash', person]);
      run('sacctmgr', ['-i', 'add', 'user', person, 'account=contract-account']);
    });
    afterAll(() => {
      spawnSync('sacctmgr', ['-i', 'delete', 'user', person], { env: process.env });
      spawnSync('userdel', [person]);
      spawnSync('groupdel', [group]);
    });

    it("runs as its person in its folder, writes stdout.log (growing while it runs) and stderr.log there; workspace, jobs and the job's folder are the group's, 2770", async () => {
      const s = spec(TALKER, { user: person, group });
      const workDir = madeWorkDir(group, s.portalJobId);
      const [workspace, jobs] = [jobFolder(settings.jobDir, group), `${jobFolder(settings.jobDir, group)}/jobs`];
      for (const folder of [workspace, jobs, workDir]) expect([statSync(folder).gid, octal(folder)], `${folder} as root made it`).toEqual([0, '755']);
      const { stdout, stderr } = await talkerWritesAsItRuns(port, { ...s, workDir });
      const gid = Number(run('getent', ['group', group]).split(':')[2]);
      for (const folder of [workspace, jobs, workDir]) expect([statSync(folder).gid, octal(folder)], folder).toEqual([gid, '2770']);
      const uid = Number(run('id', ['-u', person]).trim());
      for (const file of [stdout, stderr]) {
        expect([statSync(file).uid, statSync(file).gid, octal(file)], `${file}: the person's, the group's, closed to others`).toEqual([uid, gid, '640']);
      }
      expect(run('sacct', ['-n', '-P', '-X', '--name', s.portalJobId, '-o', 'User']).trim()).toBe(person);
      // A second job in the same workspace finds it right and leaves it so.
      const next = spec('pwd', { user: person, group });
      const nextDir = madeWorkDir(group, next.portalJobId);
      await port.submit({ ...next, workDir: nextDir });
      expect(await settled(port, next.portalJobId)).toMatchObject({ state: 'COMPLETED' });
      expect(realpathSync(read(`${nextDir}/${outputFileName('stdout')}`).trim())).toBe(realpathSync(nextDir));
      for (const folder of [workspace, jobs, nextDir]) expect([statSync(folder).gid, octal(folder)], folder).toEqual([gid, '2770']);
    });
  });
});
