// The REST bridge's retry rule: a refused token is renewed and a read is tried once more, but a submit
// is never sent twice — slurmctld's "refused" answer also comes when it took the job and the answer was
// lost, so the next hand-over must look the job up first.
import { describe, expect, it } from 'vitest';
import { SchedulerRefusedError, SchedulerUnavailableError } from '~/server/core/scheduler/port';
import { createSlurmApi } from './api';
import type { SlurmClient } from './client';
import { SlurmError } from './errors';

function clientFailingOnce(): { client: SlurmClient; calls: string[] } {
  const calls: string[] = [];
  let failed = false;
  const once = <T>(name: string, value: T) => () => {
    calls.push(name);
    if (!failed) {
      failed = true;
      return Promise.reject(new SlurmError('auth', 'submitJob: slurmrestd 500: 5005 Zero Bytes were transmitted or received', { code: 5005, status: 500 }));
    }
    return Promise.resolve(value);
  };
  const client = { submitJob: once('submit', { jobId: '7' }), listJobs: once('list', []) } as unknown as SlurmClient;
  return { client, calls };
}

describe('Slurm REST bridge', () => {
  it('does not send a submit twice after a refused answer; it renews the token and reports the job as waiting', async () => {
    const { client, calls } = clientFailingOnce();
    let renewals = 0;
    const api = createSlurmApi({ client, renewToken: () => renewals++, cluster: 'ci', serviceUser: 'portal', now: () => new Date() });
    await expect(api.submit({ script: '#!/bin/bash\ntrue\n', job: { name: 'x', environment: { PATH: '/bin' } } })).rejects.toThrow(SchedulerUnavailableError);
    expect(calls).toEqual(['submit']);
    expect(renewals).toBe(1);
  });

  it('tries a read once more with a renewed token', async () => {
    const { client, calls } = clientFailingOnce();
    let renewals = 0;
    const api = createSlurmApi({ client, renewToken: () => renewals++, cluster: 'ci', serviceUser: 'portal', now: () => new Date() });
    expect(await api.listJobs()).toEqual([]);
    expect(calls).toEqual(['list', 'list']);
    expect(renewals).toBe(1);
  });

  it('raises a time limit as the admin where there is one; Slurm refusing the user is a refusal naming SLURM_ADMIN_USER, not an outage', async () => {
    const asked: string[] = [];
    const client = (who: string, answer: () => Promise<void>) => ({ setTimeLimit: (id: string, minutes: number) => (asked.push(`${who} ${id} ${minutes}`), answer()) }) as unknown as SlurmClient;
    const denied = () => Promise.reject(new SlurmError('transient', 'setTimeLimit 42: slurmrestd 500: 2002 Access/permission denied', { code: 2002, status: 500 }));
    const withAdmin = createSlurmApi({ client: client('service', denied), admin: { client: client('admin', () => Promise.resolve()), renewToken: () => {} }, renewToken: () => {}, cluster: 'ci', serviceUser: 'portal', now: () => new Date() });
    await withAdmin.setTimeLimit(42, 30);
    expect(asked).toEqual(['admin 42 30']);
    const serviceOnly = createSlurmApi({ client: client('service', denied), renewToken: () => {}, cluster: 'ci', serviceUser: 'portal', now: () => new Date() });
    const error: unknown = await serviceOnly.setTimeLimit(42, 30).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchedulerRefusedError);
    expect((error as Error).message).toContain('SLURM_ADMIN_USER');
    // A Slurm that does not answer stays an outage: try again later.
    const down = createSlurmApi({ client: client('service', () => Promise.reject(new SlurmError('unreachable', 'connect ECONNREFUSED', { code: null, status: null }))), renewToken: () => {}, cluster: 'ci', serviceUser: 'portal', now: () => new Date() });
    await expect(down.setTimeLimit(42, 30)).rejects.toThrow(SchedulerUnavailableError);
  });
});
