// The centre the submission benchmark loads: tenants, people, projects and allocations made through the
// API (the integration-test factories), one partition filled with running jobs, and the load's clients.
import { randomUUID } from 'node:crypto';
import type { Db } from '~/db/client';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { activeAllocation, addMember, callerFor, createStaff, createTenant } from '~/server/testing/harness';
import { JOB_GPUS, JOB_WALLTIME_MINUTES, jobInput, PARTITION } from './job-input';

/**
 * Fillers: 16 inference jobs of 8 GPUs with 48 h walltime, so nothing queued can start. The simulated
 * cluster runs an inference job until its walltime, so all of them end at a known time.
 */
export const FILLER_JOBS = 16;
export const FILLER_WALLTIME_MINUTES = 48 * 60;

export interface Client {
  /** 'big' = a member of the big tenant's one project; 'other' = a person of another tenant. */
  group: 'big' | 'other';
  tenant: string;
  userId: string;
  orgId: string;
  allocationId: string;
}

export interface World {
  adminUserId: string;
  clients: Client[];
  /** The big tenant's members (owner included) and the number of tenants that submit. */
  bigMembers: number;
  tenants: number;
  allocationIds: string[];
  filler: { userId: string; orgId: string; allocationId: string };
}

export interface WorldOptions {
  queued: number;
  clients: number;
  tenants: number;
  today: string;
}

type Person = { userId: string; orgId: string };

/** limitsAbove lifts an allocation's limits above anything the load asks for (a refusal would be a setup error). */
async function limitsAbove(db: Db, adminUserId: string, allocationId: string): Promise<void> {
  await callerFor(db, { userId: adminUserId }).staff.setAllocationLimits({
    allocationId,
    maxGpusAtOnce: 100_000,
    maxWalltimeHours: 48,
    maxQueuedJobs: 100_000,
    reason: 'Benchmark: limits above the load',
  });
}

/** tenantWithProject signs up a tenant with `people` persons (owner first), all in one project with one allocation. */
async function tenantWithProject(db: Db, adminUserId: string, name: string, people: number, gpuHours: number, today: string) {
  const owner = await createTenant(db, { name });
  const members: Person[] = [owner];
  for (let i = 1; i < people; i++) members.push(await addMember(db, owner, 'member'));
  const allocation = await activeAllocation(db, owner, { userId: adminUserId }, { gpuHours, today, resourceClassId: PARTITION });
  const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId });
  for (const m of members.slice(1)) await asOwner.project.setMember({ projectId: allocation.projectId, userId: m.userId, role: 'member' });
  await limitsAbove(db, adminUserId, allocation.allocationId);
  return { members, allocationId: allocation.allocationId };
}

/**
 * buildWorld creates the centre: a big tenant whose members (half the clients, at least five people)
 * share one project and one allocation, `tenants − 1` other tenants of two people with an allocation
 * each, and a filler tenant; every allocation holds budget for the whole load.
 */
export async function buildWorld(db: Db, o: WorldOptions): Promise<World> {
  const admin = await createStaff(db, 'admin');
  const tag = randomUUID().slice(0, 6);
  // Enough for every job of the load at the largest size in one allocation, plus a margin.
  const gpuHours = Math.ceil(o.queued * Math.max(...JOB_GPUS) * (JOB_WALLTIME_MINUTES / 60) * 1.25) + 1_000;
  const bigClients = Math.max(1, Math.ceil(o.clients / 2));
  const big = await tenantWithProject(db, admin.userId, `Bench Big University ${tag}`, Math.max(5, bigClients), gpuHours, o.today);
  const others: Awaited<ReturnType<typeof tenantWithProject>>[] = [];
  for (let t = 1; t < o.tenants; t++) others.push(await tenantWithProject(db, admin.userId, `Bench Institute ${t} ${tag}`, 2, gpuHours, o.today));
  const fillerTenant = await tenantWithProject(db, admin.userId, `Bench Filler Lab ${tag}`, 1, FILLER_JOBS * 8 * (FILLER_WALLTIME_MINUTES / 60) + 1_000, o.today);

  const clients: Client[] = [];
  for (let i = 0; i < bigClients; i++) {
    const m = big.members[i % big.members.length]!;
    clients.push({ group: 'big', tenant: 'big', userId: m.userId, orgId: m.orgId, allocationId: big.allocationId });
  }
  const otherPeople = others.flatMap((t, ti) => t.members.map((m) => ({ ...m, tenant: `other-${ti + 1}`, allocationId: t.allocationId })));
  for (let i = 0; clients.length < o.clients; i++) {
    // Round-robin over tenants first, then over their people; with no other tenant, the big one takes all.
    const p = otherPeople.length ? otherPeople[(i % others.length) * 2 + (Math.floor(i / others.length) % 2)]! : { ...big.members[i % big.members.length]!, tenant: 'big', allocationId: big.allocationId };
    clients.push({ group: p.tenant === 'big' ? 'big' : 'other', tenant: p.tenant, userId: p.userId, orgId: p.orgId, allocationId: p.allocationId });
  }
  const filler = fillerTenant.members[0]!;
  return {
    adminUserId: admin.userId,
    clients,
    bigMembers: big.members.length,
    tenants: 1 + others.length,
    allocationIds: [big.allocationId, ...others.map((t) => t.allocationId)],
    filler: { userId: filler.userId, orgId: filler.orgId, allocationId: fillerTenant.allocationId },
  };
}

/** fillPartition submits the filler jobs through the API: every GPU of the partition runs one of them. */
export async function fillPartition(db: Db, scheduler: SchedulerPort, filler: World['filler']): Promise<void> {
  const caller = callerFor(db, { userId: filler.userId, orgId: filler.orgId, scheduler });
  for (let i = 0; i < FILLER_JOBS; i++) {
    await caller.job.submit({
      ...jobInput(filler.allocationId, i),
      name: `bench-filler-${i}`,
      kind: 'inference',
      gpus: 8,
      walltimeMinutes: FILLER_WALLTIME_MINUTES,
      estimate: undefined,
    });
  }
}

/**
 * onePersonWorld creates a centre where `clients` clients are one and the same person submitting into
 * one allocation (a script in parallel, issue #26): the allocation's lock and its counters of jobs in
 * flight are as busy as they can be. Plus the filler tenant.
 */
export async function onePersonWorld(db: Db, o: WorldOptions): Promise<World> {
  const admin = await createStaff(db, 'admin');
  const tag = randomUUID().slice(0, 6);
  const gpuHours = Math.ceil(o.queued * Math.max(...JOB_GPUS) * (JOB_WALLTIME_MINUTES / 60) * 1.25) + 1_000;
  const single = await tenantWithProject(db, admin.userId, `Bench Solo Lab ${tag}`, 1, gpuHours, o.today);
  const fillerTenant = await tenantWithProject(db, admin.userId, `Bench Filler Lab ${tag}`, 1, FILLER_JOBS * 8 * (FILLER_WALLTIME_MINUTES / 60) + 1_000, o.today);
  const person = single.members[0]!;
  const filler = fillerTenant.members[0]!;
  return {
    adminUserId: admin.userId,
    clients: Array.from({ length: o.clients }, () => ({ group: 'big' as const, tenant: 'solo', userId: person.userId, orgId: person.orgId, allocationId: single.allocationId })),
    bigMembers: 1,
    tenants: 1,
    allocationIds: [single.allocationId],
    filler: { userId: filler.userId, orgId: filler.orgId, allocationId: fillerTenant.allocationId },
  };
}
