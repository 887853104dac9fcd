import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SlurmAssociationInput, SlurmClient } from './client';
import { SlurmError, type SlurmErrorEntry } from './errors';
import { accountLimits, budgetHoldsFrom, groupGpuMinutes, limitAssociation, portalJobIdFromComment, setAccountLimitsSacctmgr, syncBudgetsRest } from './limits';
import { ctldJobsResponseSchema, type CtldJob, type SlurmAssociation } from './schemas';

const MISSING_USER: SlurmErrorEntry = { code: null, error: null, description: "Missing required field 'user'", source: '_parser_run' };

// An in-memory slurmdbd that behaves as 22.05 did on the test cluster: a user association needs the
// account's own association first, and the account association answers the "missing user" entry.
function fakeSlurmdbd(initial: { accounts?: string[]; associations?: SlurmAssociation[] } = {}) {
  const accounts = new Set(initial.accounts ?? []);
  const associations: SlurmAssociation[] = [...(initial.associations ?? [])];
  const calls: string[] = [];
  const client: Partial<SlurmClient> = {
    accounts: () => {
      calls.push('GET accounts');
      return Promise.resolve([...accounts].map((name) => ({ name })));
    },
    postAccounts: (list) => {
      calls.push(`POST accounts ${list.map((a) => a.name).join(',')}`);
      list.forEach((a) => accounts.add(a.name));
      return Promise.resolve();
    },
    associations: (q = {}) => {
      calls.push(`GET associations ${q.account}${q.user ? `/${q.user}` : ''}`);
      return Promise.resolve(associations.filter((a) => (!q.account || a.account === q.account) && (!q.user || a.user === q.user) && (!q.cluster || a.cluster === q.cluster)));
    },
    postAssociations: (list: SlurmAssociationInput[], options = {}) => {
      calls.push(`POST associations ${list.map((a) => `${a.account}/${a.user ?? '-'}/${a.partition ?? '-'}${typeof a.parent_account === 'string' ? ` under ${a.parent_account}` : ''}`).join(',')}`);
      for (const a of list) {
        if (!accounts.has(a.account)) return Promise.reject(new SlurmError('transient', 'no such account', { code: -1 }));
        if (!a.user) {
          associations.push({ account: a.account, cluster: a.cluster, user: null, partition: null });
          if (!options.accept?.(MISSING_USER)) return Promise.reject(new SlurmError('transient', "Missing required field 'user'"));
          continue;
        }
        if (!associations.some((x) => x.account === a.account && !x.user)) return Promise.reject(new SlurmError('transient', 'Unspecified error', { code: -1 }));
        const max = a.max as SlurmAssociation['max'];
        const existing = associations.find((x) => x.account === a.account && x.user === a.user && x.partition === (a.partition ?? null));
        if (existing) existing.max = max;
        else associations.push({ account: a.account, cluster: a.cluster, user: a.user, partition: a.partition ?? null, max });
      }
      return Promise.resolve();
    },
    deleteAssociation: (q) => {
      calls.push(`DELETE association ${q.account}/${q.user}/${q.partition ?? '-'}`);
      const i = associations.findIndex((x) => x.account === q.account && x.user === q.user && x.partition === (q.partition ?? null));
      if (i >= 0) associations.splice(i, 1);
      return Promise.resolve();
    },
  };
  return { client: client as SlurmClient, calls, associations };
}

describe('syncBudgetsRest', () => {
  it('creates the account, its association under root, then the limit, and reads it back', async () => {
    const slurm = fakeSlurmdbd({ accounts: ['contract-account'] });
    const applied = await syncBudgetsRest(slurm.client, 'ci', 'portal', [
      { account: 'proj-a', partition: 'gpu', gpuMinutes: 120 },
      { account: 'proj-a', partition: 'debug', gpuMinutes: 5 },
    ]);
    expect(applied).toEqual([
      { account: 'proj-a', partition: 'gpu', gpuMinutes: 120, usedGpuMinutes: null },
      { account: 'proj-a', partition: 'debug', gpuMinutes: 5, usedGpuMinutes: null },
    ]);
    expect(slurm.calls).toEqual([
      'GET accounts',
      'POST accounts proj-a',
      'GET associations proj-a',
      'POST associations proj-a/-/- under root',
      'POST associations proj-a/portal/gpu,proj-a/portal/debug',
      'GET associations proj-a/portal',
    ]);
  });

  it("where jobs run as their people, each member gets the project's limit, and one who left loses the association", async () => {
    const slurm = fakeSlurmdbd();
    await syncBudgetsRest(slurm.client, 'ci', 'slurm', [{ account: 'proj-m', partition: 'gpu', gpuMinutes: 600, users: ['alice', 'bob'] }]);
    const members = () =>
      slurm.associations
        .filter((a) => a.account === 'proj-m' && a.user)
        .map((a) => `${a.user}:${groupGpuMinutes(a)}`)
        .sort();
    expect(members()).toEqual(['alice:600', 'bob:600', 'slurm:600']);
    slurm.calls.length = 0;
    await syncBudgetsRest(slurm.client, 'ci', 'slurm', [{ account: 'proj-m', partition: 'gpu', gpuMinutes: 540, users: ['alice'] }]);
    expect(members()).toEqual(['alice:540', 'slurm:540']);
    expect(slurm.calls).toContain('DELETE association proj-m/bob/gpu');
    // A second run changes nothing and removes nothing.
    slurm.calls.length = 0;
    await syncBudgetsRest(slurm.client, 'ci', 'slurm', [{ account: 'proj-m', partition: 'gpu', gpuMinutes: 540, users: ['alice'] }]);
    expect(slurm.calls.filter((c) => c.startsWith('DELETE'))).toEqual([]);
    await expect(syncBudgetsRest(slurm.client, 'ci', 'slurm', [{ account: 'proj-m', partition: 'gpu', gpuMinutes: 1, users: ['Bad Name'] }])).rejects.toThrow(/not a Unix user name/);
  });

  it("makes a project's account under its tenant's account (made once, under root), for every project of the tenant", async () => {
    const slurm = fakeSlurmdbd();
    await syncBudgetsRest(slurm.client, 'ci', 'portal', [
      { account: 'proj-x', partition: 'gpu', gpuMinutes: 60, parent: 'tenant-t' },
      { account: 'proj-y', partition: 'gpu', gpuMinutes: 30, parent: 'tenant-t' },
    ]);
    expect(slurm.calls.slice(0, 9)).toEqual([
      'GET accounts',
      'POST accounts tenant-t,proj-x,proj-y',
      'GET associations tenant-t',
      'POST associations tenant-t/-/- under root',
      'GET associations proj-x',
      'POST associations proj-x/-/- under tenant-t',
      'GET associations proj-y',
      'POST associations proj-y/-/- under tenant-t',
      'POST associations proj-x/portal/gpu,proj-y/portal/gpu',
    ]);
    slurm.calls.length = 0;
    await syncBudgetsRest(slurm.client, 'ci', 'portal', [{ account: 'proj-x', partition: 'gpu', gpuMinutes: 90, parent: 'tenant-t' }]);
    expect(slurm.calls.filter((c) => c.startsWith('POST accounts') || c.endsWith('under root'))).toEqual([]);
    await expect(syncBudgetsRest(slurm.client, 'ci', 'portal', [{ account: 'proj-x', partition: 'gpu', gpuMinutes: 1, parent: 'Bad Parent' }])).rejects.toThrow(/not a Slurm account name/);
  });

  it('a top-up only rewrites the limit', async () => {
    const slurm = fakeSlurmdbd();
    await syncBudgetsRest(slurm.client, 'ci', 'portal', [{ account: 'proj-b', partition: 'gpu', gpuMinutes: 120 }]);
    slurm.calls.length = 0;
    expect(await syncBudgetsRest(slurm.client, 'ci', 'portal', [{ account: 'proj-b', partition: 'gpu', gpuMinutes: 180 }])).toEqual([
      { account: 'proj-b', partition: 'gpu', gpuMinutes: 180, usedGpuMinutes: null },
    ]);
    expect(slurm.calls).toEqual(['GET accounts', 'GET associations proj-b', 'POST associations proj-b/portal/gpu', 'GET associations proj-b/portal']);
    expect(slurm.associations.filter((a) => a.account === 'proj-b')).toHaveLength(2);
  });

  it('writes only max.tres.group.minutes gres/gpu (max.tres.total crashed slurmrestd)', () => {
    expect(limitAssociation('ci', 'portal', { account: 'p', partition: 'gpu', gpuMinutes: 7 })).toEqual({
      cluster: 'ci',
      account: 'p',
      user: 'portal',
      partition: 'gpu',
      max: { tres: { group: { minutes: [{ type: 'gres', name: 'gpu', count: 7 }] } } },
    });
  });

  it('refuses names and amounts Slurm would misread, before writing anything', async () => {
    const slurm = fakeSlurmdbd();
    for (const bad of [
      { account: 'Proj A', partition: 'gpu', gpuMinutes: 1 },
      { account: 'p', partition: 'gpu,debug', gpuMinutes: 1 },
      { account: 'p', partition: 'gpu', gpuMinutes: 1.5 },
      { account: 'p', partition: 'gpu', gpuMinutes: -1 },
    ]) {
      await expect(syncBudgetsRest(slurm.client, 'ci', 'portal', [bad])).rejects.toMatchObject({ kind: 'permanent' });
    }
    await expect(
      syncBudgetsRest(slurm.client, 'ci', 'portal', [
        { account: 'p', partition: 'gpu', gpuMinutes: 1 },
        { account: 'p', partition: 'gpu', gpuMinutes: 2 },
      ]),
    ).rejects.toThrow(/twice/);
    expect(slurm.calls).toEqual([]);
    expect(await syncBudgetsRest(slurm.client, 'ci', 'portal', [])).toEqual([]);
  });

  it('reads GrpTRESMins from an association as slurmdbd reports it', () => {
    expect(groupGpuMinutes({ max: { tres: { group: { minutes: [{ type: 'gres', name: 'gpu', count: 180 }], active: [] } } } })).toBe(180);
    expect(groupGpuMinutes({ max: { tres: { group: { minutes: [], active: [] } } } })).toBeNull();
    expect(groupGpuMinutes({})).toBeNull();
  });
});

describe('budgetHoldsFrom', () => {
  const base = (ctldJobsResponseSchema.parse(JSON.parse(readFileSync(path.join(import.meta.dirname, 'fixtures', '03-job-get.resp.json'), 'utf8'))).jobs ?? [])[0]!;
  const pending = (over: Partial<CtldJob>): CtldJob => ({ ...base, job_state: 'PENDING', nodes: '', tres_alloc_str: '', ...over });

  it('lists pending jobs held on a GPU-minute limit, and only those', () => {
    const jobs = [
      pending({ job_id: 10, state_reason: 'AssocGrpGRESMinutes', comment: 'portal:job-1', account: 'proj-a', partition: 'gpu', tres_req_str: 'cpu=1,node=1,gres/gpu=4', time_limit: 2, submit_time: 1796030000 }),
      pending({ job_id: 11, state_reason: 'QOSGrpTRESMinutes', comment: '', account: 'proj-a', partition: 'other', tres_req_str: 'cpu=1,node=2', tres_per_node: 'gres:gpu:2', node_count: 2 }),
      pending({ job_id: 12, state_reason: 'Priority' }),
      pending({ job_id: 13, state_reason: 'AssocGrpGRESRunMinutes' }),
      { ...base, job_id: 14, job_state: 'RUNNING', state_reason: 'AssocGrpGRESMinutes' },
    ];
    const holds = budgetHoldsFrom(jobs, (p) => (p === 'gpu' ? 'h100' : null));
    expect(holds).toEqual([
      { schedulerJobId: '10', portalJobId: 'job-1', account: 'proj-a', partition: 'h100', reason: 'AssocGrpGRESMinutes', gpus: 4, timeLimitSeconds: 120, submittedAt: new Date(1796030000 * 1000) },
      { schedulerJobId: '11', portalJobId: null, account: 'proj-a', partition: 'other', reason: 'QOSGrpTRESMinutes', gpus: 4, timeLimitSeconds: 300, submittedAt: new Date(base.submit_time! * 1000) },
    ]);
  });

  it('reads the portal job id from the comment submitBody writes', () => {
    expect(portalJobIdFromComment('portal:abc-1')).toBe('abc-1');
    expect(portalJobIdFromComment('portal:run=42')).toBe('run=42');
    expect(portalJobIdFromComment('something else')).toBeNull();
    expect(portalJobIdFromComment(null)).toBeNull();
  });
});

describe("an account's own limit with sacctmgr (all members together)", () => {
  it('sums the budgets over partitions, writes each account once and reads it back', async () => {
    const limits = accountLimits([
      { account: 'proj-a', partition: 'gpu', gpuMinutes: 600 },
      { account: 'proj-a', partition: 'b200', gpuMinutes: 60 },
      { account: 'proj-b', partition: 'gpu', gpuMinutes: 0 },
    ]);
    expect(limits).toEqual([
      { account: 'proj-a', gpuMinutes: 660 },
      { account: 'proj-b', gpuMinutes: 0 },
    ]);
    const held = new Map<string, number>();
    const calls: string[] = [];
    const sacctmgr = (args: string[]) => {
      calls.push(args.join(' '));
      const account = /(?:name|account)=([^ ]+)/.exec(args.join(' '))![1]!;
      const set = /GrpTRESMins=gres\/gpu=(\d+)/.exec(args.join(' '));
      if (set) held.set(account, Number(set[1]));
      // The account's own row (no user, no partition), then a member's.
      return Promise.resolve(`||gres/gpu=${held.get(account) ?? ''}\nalice|gpu|gres/gpu=600\n`);
    };
    await setAccountLimitsSacctmgr(sacctmgr, 'ci', limits);
    expect(calls.slice(0, 2)).toEqual(['-i modify account where name=proj-a cluster=ci set GrpTRESMins=gres/gpu=660', '-i modify account where name=proj-b cluster=ci set GrpTRESMins=gres/gpu=0']);
    expect(Object.fromEntries(held)).toEqual({ 'proj-a': 660, 'proj-b': 0 });
  });

  it('a limit that did not take fails the sync with what sacctmgr shows; a bad name is never passed on', async () => {
    const ignoring = () => Promise.resolve('||gres/gpu=120\n');
    await expect(setAccountLimitsSacctmgr(ignoring, 'ci', [{ account: 'proj-a', gpuMinutes: 660 }])).rejects.toThrow(/sacctmgr shows 120 GPU-minutes, not 660/);
    let called = false;
    const spy = () => ((called = true), Promise.resolve(''));
    await expect(setAccountLimitsSacctmgr(spy, 'ci', [{ account: 'a; rm -rf /', gpuMinutes: 1 }])).rejects.toThrow(/bad account/);
    expect(called).toBe(false);
  });
});
