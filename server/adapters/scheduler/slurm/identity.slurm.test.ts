// One Unix identity per person on a real Slurm (SLURM_SUBMIT_AS=person): two people of one project submit
// through the portal and their jobs run as their own users (sacct's User), in the project's folder of its
// group (2770) with files for the project only (0640), its account under its tenant's; a person of another project can read none of it,
// neither from a job nor from a shell. Each member has an association bound by the project's budget, and
// one who leaves the project loses it; the portal cancels a person's job. The users and groups are made here as a centre's directory would.
import { configuredSiteRoots } from '~/server/services/files/roots';
import { workspaceOf } from '~/server/services/files/workspace';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { slurmClassesFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { projectGroupName } from '~/server/core/scheduler/identity';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { posixNameOf } from '~/server/services/identity/posix';
import { activeAllocation, addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { createSlurmScheduler } from './index';
import { settleJob, testClusterSettings, waitUntil } from './testing';

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', env: process.env });

/** The user associations of an account, as sacctmgr shows them: user → GrpTRESMins gres/gpu (partition gpu). */
function memberLimits(account: string): Record<string, number | null> {
  const out = run('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', `account=${account}`, 'format=User,Partition,GrpTRESMins']);
  const limits: Record<string, number | null> = {};
  for (const line of out.split('\n').filter((l) => l.trim() !== '')) {
    const [user = '', partition = '', tres = ''] = line.split('|');
    if (user && partition === 'gpu') limits[user] = Number(/gres\/gpu=(\d+)/.exec(tres)?.[1] ?? NaN) || null;
  }
  return limits;
}

describe('one Unix identity per person, on a real Slurm', () => {
  let handle: DbHandle;
  let db: Db;
  let port: SchedulerPort;
  const now = () => new Date();
  const today = now().toISOString().slice(0, 10);
  const settings = testClusterSettings({ user: 'slurm', submitAs: 'person', accountLimits: 'sacctmgr' });
  const madeUsers: string[] = [];
  const madeGroups: string[] = [];

  /** What a centre's directory holds: the person's user, member of their projects' groups. */
  function directoryUser(name: string, groups: string[]) {
    for (const group of groups) {
      if (spawnSync('getent', ['group', group]).status !== 0) {
        run('groupadd', [group]);
        madeGroups.push(group);
      }
    }
    if (spawnSync('getent', ['passwd', name]).status !== 0) {
      run('useradd', ['-M', '-N', '-g', 'users', '-s', '/bin/bash', name]);
      madeUsers.push(name);
    }
    run('usermod', ['-a', '-G', groups.join(','), name]);
  }

  beforeAll(async () => {
    handle = await openTestDb(dbTargets().at(-1)!);
    db = handle.db;
    port = createSlurmScheduler(settings, await slurmClassesFromCatalogue(db));
  });
  afterAll(async () => {
    for (const user of madeUsers) spawnSync('userdel', [user]);
    for (const group of madeGroups) spawnSync('groupdel', [group]);
    await handle?.close();
  });

  const settle = (jobId: string) => settleJob(db, port, jobId);

  it('two people of a project run as themselves; a person of another project reads none of their files; a member who leaves loses the association', async () => {
    const admin = await createStaff(db, 'admin');
    const tag = randomUUID().slice(0, 6);
    // Project A: its PI (the tenant's owner) and a member.
    const ownerA = await createTenant(db, { name: `Slurm Identity A ${tag}` });
    const memberA = await addMember(db, ownerA);
    const [nameA1, nameA2] = [await posixNameOf(db, ownerA.userId), await posixNameOf(db, memberA.userId)];
    const a = await activeAllocation(db, ownerA, admin, { gpuHours: 10, today, scheduler: port });
    const groupA = projectGroupName(a.projectId);
    directoryUser(nameA1, [groupA]);
    directoryUser(nameA2, [groupA]);
    const asOwnerA = callerFor(db, { userId: ownerA.userId, orgId: ownerA.orgId, now, scheduler: port });
    await asOwnerA.project.setMember({ projectId: a.projectId, userId: memberA.userId, role: 'member' });
    // Every member's association carries the project's budget (10 GPU-hours = 600 GPU-minutes).
    expect(memberLimits(a.projectId)).toMatchObject({ [nameA1]: 600, [nameA2]: 600 });
    // The project's account belongs under its tenant's (tenant → project), which belongs under root.
    const parentOf = (account: string) => run('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', `account=${account}`, 'user=', 'format=User,ParentName']).split('\n').find((l) => l.startsWith('|'))?.slice(1);
    expect(parentOf(a.projectId)).toBe(ownerA.orgId);
    expect(parentOf(ownerA.orgId)).toBe('root');

    // Project B of another tenant: its person is named only after the grant (the first hand-over adds the association).
    const ownerB = await createTenant(db, { name: `Slurm Identity B ${tag}` });
    const b = await activeAllocation(db, ownerB, admin, { gpuHours: 10, today, scheduler: port });
    const nameB = await posixNameOf(db, ownerB.userId);
    directoryUser(nameB, [projectGroupName(b.projectId)]);

    const input = (allocationId: string, command: string) => ({ allocationId, resourceClassId: 'h100', name: 'identity', kind: 'training' as const, gpus: 1, nodes: 1, walltimeMinutes: 5, image: 'img', command, env: {}, idempotencyKey: randomUUID() });
    const write = 'id -un; echo "results of $(id -un)" > "result-$SLURM_JOB_ID.txt"; sleep 2';
    const asMemberA = callerFor(db, { userId: memberA.userId, orgId: memberA.orgId, now, scheduler: port });
    const [jobA1, jobA2] = [await asOwnerA.job.submit(input(a.allocationId, write)), await asMemberA.job.submit(input(a.allocationId, write))];
    const [rowA1, rowA2] = [await settle(jobA1.id), await settle(jobA2.id)];
    expect(rowA1).toMatchObject({ state: 'COMPLETED', runAsUser: nameA1, runAsGroup: groupA });
    expect(rowA2).toMatchObject({ state: 'COMPLETED', runAsUser: nameA2, runAsGroup: groupA });

    // Slurm ran each as its person.
    for (const [row, name] of [[rowA1, nameA1], [rowA2, nameA2]] as const) {
      expect(run('sacct', ['-n', '-P', '-X', '-j', row.schedulerJobId!, '-o', 'User,Account']).trim()).toBe(`${name}|${a.projectId}`);
    }

    // The project's workspace: its group's, 2770; each job ran in its own folder there (jobs/<id>), each
    // file its person's and the group's, nothing for others.
    const folderA = workspaceOf(configuredSiteRoots(), 'de-jena', a.projectId).dir;
    const folder = statSync(folderA);
    expect((folder.mode & 0o7777).toString(8)).toBe('2770');
    expect(folder.gid).toBe(Number(run('getent', ['group', groupA]).split(':')[2]));
    const uidOf = (name: string) => Number(run('id', ['-u', name]).trim());
    for (const [row, name] of [[rowA1, nameA1], [rowA2, nameA2]] as const) {
      const jobDir = `${folderA}/jobs/${row.id}`;
      const files = readdirSync(jobDir);
      expect(files).toEqual(expect.arrayContaining([`result-${row.schedulerJobId}.txt`, 'stdout.log', 'stderr.log']));
      for (const file of files) {
        const st = statSync(`${jobDir}/${file}`);
        expect(st.mode & 0o007, `${file} is closed to others`).toBe(0);
        expect(st.gid).toBe(folder.gid);
      }
      expect(statSync(`${jobDir}/result-${row.schedulerJobId}.txt`).uid).toBe(uidOf(name));
    }

    // The other project's person, from a job: cannot list or read project A's folder.
    const asOwnerB = callerFor(db, { userId: ownerB.userId, orgId: ownerB.orgId, now, scheduler: port });
    const snoop = await asOwnerB.job.submit(input(b.allocationId, `ls ${folderA} || exit 3; cat ${folderA}/jobs/*/result-*.txt`));
    const snooped = await settle(snoop.id);
    expect(snooped).toMatchObject({ state: 'FAILED', exitCode: 3, runAsUser: nameB });
    expect(run('sacct', ['-n', '-P', '-X', '-j', snooped.schedulerJobId!, '-o', 'User']).trim()).toBe(nameB);
    // … nor from a shell.
    const shell = spawnSync('runuser', ['-u', nameB, '--', 'cat', `${folderA}/jobs/${rowA1.id}/result-${rowA1.schedulerJobId}.txt`], { encoding: 'utf8' });
    expect(shell.status).not.toBe(0);
    expect(shell.stderr).toMatch(/Permission denied/);

    // The portal still cancels a person's job (the service's token may act on every job).
    const long = await asMemberA.job.submit(input(a.allocationId, 'sleep 120'));
    expect(await waitUntil(async () => (await port.jobs([long.id]))[0]?.state === 'RUNNING', 60)).toBe(true);
    await asMemberA.job.cancel({ jobId: long.id });
    expect(await settle(long.id)).toMatchObject({ state: 'CANCELLED', runAsUser: nameA2 });

    // The member leaves project A: their association goes, so Slurm refuses their shell's jobs there.
    await asOwnerA.project.removeMember({ projectId: a.projectId, userId: memberA.userId });
    expect(Object.keys(memberLimits(a.projectId))).not.toContain(nameA2);
    const sbatch = spawnSync('runuser', ['-u', nameA2, '--', 'sbatch', '-A', a.projectId, '-p', 'gpu', '-t', '1', '-D', folderA, '-o', '/dev/null', '--wrap', 'true'], { encoding: 'utf8', env: process.env });
    expect(sbatch.status).not.toBe(0);
    expect(sbatch.stderr).toMatch(/Invalid account/i);
  });
  it("the project's budget binds its members together: one member's running job leaves the other only the rest", async () => {
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Slurm Shared Budget ${randomUUID().slice(0, 6)}` });
    const member = await addMember(db, owner);
    const [first, second] = [await posixNameOf(db, owner.userId), await posixNameOf(db, member.userId)];
    // 1 GPU-hour = 60 GPU-minutes for the whole project.
    const p = await activeAllocation(db, owner, admin, { gpuHours: 1, today, scheduler: port });
    const group = projectGroupName(p.projectId);
    directoryUser(first, [group]);
    directoryUser(second, [group]);
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    await asOwner.project.setMember({ projectId: p.projectId, userId: member.userId, role: 'member' });
    const accountLimit = run('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', `account=${p.projectId}`, 'format=User,Partition,GrpTRESMins']).split('\n').find((l) => l.startsWith('||'));
    expect(accountLimit).toBe('||gres/gpu=60');
    expect(memberLimits(p.projectId)).toMatchObject({ [first]: 60, [second]: 60 });

    // The first member runs 4 GPUs × 10 minutes (40 GPU-minutes) through the portal …
    const running = await asOwner.job.submit({ allocationId: p.allocationId, resourceClassId: 'h100', name: 'shared', kind: 'training', gpus: 4, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'sleep 120', env: {}, idempotencyKey: randomUUID() });
    expect(await waitUntil(async () => (await port.jobs([running.id]))[0]?.state === 'RUNNING', 60)).toBe(true);
    // … so the second member's 40 GPU-minutes from a shell do not fit the 20 left: Slurm holds the job on
    // the account's limit, though the member's own association (60) alone would let it run.
    const held = run('runuser', ['-u', second, '--', 'sbatch', '--parsable', '-A', p.projectId, '-p', 'gpu', '--gres=gpu:4', '-t', '10', '-D', workspaceOf(configuredSiteRoots(), 'de-jena', p.projectId).dir, '-o', '/dev/null', '--wrap', 'sleep 1']).trim();
    const reason = () => run('squeue', ['-h', '-j', held, '-o', '%T|%r']).trim();
    try {
      expect(await waitUntil(() => reason() === 'PENDING|AssocGrpGRESMinutes', 30), reason()).toBe(true);
    } finally {
      spawnSync('scancel', [held], { env: process.env });
      await asOwner.job.cancel({ jobId: running.id });
    }
  });
});
