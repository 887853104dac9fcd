// The demo centre's projects, applications and budget history: a PI with an active allocation that
// has been used for weeks, an application waiting for review, a company with a credit line.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { memberships, organisations, staffRoles, users } from '~/db/schema';
import { addDays } from '~/server/core/working-days';
import type { TenantActor } from './actor';
import { loadActor } from './accounts';
import { grantCreditLine, setAllocationLimits } from './allocations';
import { createApplication, decideApplication, submitApplication } from './applications';
import { createProject } from './projects';
import { reserveBudget, settleJob } from './ledger';

async function tenantActor(db: Db, email: string): Promise<TenantActor> {
  const [row] = await db
    .select({ userId: users.id, orgId: organisations.id, orgName: organisations.name, kind: organisations.kind, status: organisations.status, role: memberships.role })
    .from(users)
    .innerJoin(memberships, eq(memberships.userId, users.id))
    .innerJoin(organisations, eq(organisations.id, memberships.orgId))
    .where(eq(users.email, email));
  const actor = await loadActor(db, row!.userId);
  return { ...actor!, org: { id: row!.orgId, name: row!.orgName, kind: row!.kind, status: row!.status }, role: row!.role };
}

// A deterministic generator so every demo centre looks the same.
function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** seedDemoHistory adds projects, allocations with weeks of usage, a waiting application and a company credit line. */
export async function seedDemoHistory(db: Db, now: Date): Promise<void> {
  const today = now.toISOString().slice(0, 10);
  const pi = await tenantActor(db, 'pi@uni.example');
  const member = await tenantActor(db, 'member@uni.example');
  const owner = await tenantActor(db, 'owner@company.example');
  const staffActor = async (role: 'admin' | 'reviewer') => (await loadActor(db, (await db.select({ id: staffRoles.userId }).from(staffRoles).where(eq(staffRoles.role, role)))[0]!.id))!;
  const reviewer = await staffActor('reviewer');
  const admin = await staffActor('admin');

  // 1. The PI's project with an approved Development allocation, 45 days into its period.
  const start = addDays(today, -45);
  const project = await createProject(db, pi, {
    title: 'Protein structure prediction with diffusion models',
    abstract: 'We train and evaluate diffusion-based generative models that predict protein backbones from sequence, and compare them with AlphaFold-style baselines on CASP targets.',
    fieldOfScience: 'Life sciences',
    members: [{ userId: member.userId, role: 'member' }],
  });
  const app = await createApplication(
    db,
    pi,
    { projectId: project.id, accessModeId: 'development', kind: 'new', periodStart: start, periodEnd: addDays(start, 91), justification: 'Training runs of 8 to 32 GPUs for about 40 GPU-hours each; ablations and evaluation need roughly 1,500 GPU-hours over three months.', lines: [{ resourceClassId: 'h100', gpuSeconds: 1500 * 3600 }] },
    start,
  );
  await submitApplication(db, pi, app.id, new Date(`${start}T09:00:00Z`));
  const decided = await decideApplication(db, reviewer, app.id, { outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuSeconds: 1200 * 3600 }], comment: 'Approved with 1,200 GPU-h for the first phase; apply for a top-up with your ablation results.' }, new Date(`${addDays(start, 1)}T14:00:00Z`));
  const allocationId = decided.allocationIds[0]!;
  await setAllocationLimits(db, admin, {
    allocationId,
    maxGpusAtOnce: 192,
    maxWalltimeSeconds: 48 * 3600,
    maxQueuedJobs: 50,
    reason: 'Scaling study needs the whole H100 partition at times',
  });
  const random = seeded(42);
  for (let d = 44; d >= 1; d--) {
    const day = addDays(today, -d);
    const jobs = random() < 0.3 ? 0 : 1 + Math.floor(random() * 2);
    for (let j = 0; j < jobs; j++) {
      const gpus = [2, 4, 4, 8][Math.floor(random() * 4)]!;
      const walltime = (2 + Math.floor(random() * 4)) * 3600;
      const runtime = Math.floor(walltime * (0.4 + random() * 0.6));
      const jobId = randomUUID();
      const at = new Date(`${day}T${String(8 + j * 4).padStart(2, '0')}:00:00Z`);
      await db.transaction((tx) => reserveBudget(tx, { allocationId, orgId: pi.org.id, jobId, amount: gpus * walltime, actorUserId: pi.userId, today: day, at }));
      await settleJob(db, { jobId, actualAmount: gpus * runtime, at: new Date(at.getTime() + runtime * 1000) });
    }
  }

  // 2. A second project whose application waits in the staff queue, submitted three days ago.
  const waiting = await createProject(db, pi, {
    title: 'Low-resource machine translation for Alemannic dialects',
    abstract: 'Fine-tuning multilingual language models on small dialect corpora and measuring how much data and compute each dialect needs.',
    fieldOfScience: 'Linguistics',
    members: [],
  });
  const pending = await createApplication(
    db,
    pi,
    { projectId: waiting.id, accessModeId: 'development', kind: 'new', periodStart: addDays(today, 7), periodEnd: addDays(today, 91), justification: 'Twelve fine-tuning runs of a 7B model at about 60 GPU-hours each, plus evaluation: 800 GPU-hours on B200.', lines: [{ resourceClassId: 'b200', gpuSeconds: 800 * 3600 }] },
    today,
  );
  await submitApplication(db, pi, pending.id, new Date(now.getTime() - 3 * 86_400_000));

  // 3. The company's project with a credit line, a monthly cap and some spending this month.
  const company = await createProject(db, owner, {
    title: 'Warehouse picking vision model',
    abstract: 'Fine-tuning an open vision-language model to recognise parcels and grasp points in our warehouse robots.',
    fieldOfScience: 'Robotics',
    members: [],
  });
  const credit = await grantCreditLine(db, admin, { projectId: company.id, amountCents: 20_000_00, periodStart: addDays(today, -20), periodEnd: addDays(today, 345), reason: 'Framework contract 2026/11, prepaid credit' });
  await db.update(organisations).set({ monthlyCapCents: 5_000_00 }).where(eq(organisations.id, owner.org.id));
  for (let d = 18; d >= 2; d -= 4) {
    const day = addDays(today, -d);
    const jobId = randomUUID();
    const at = new Date(`${day}T09:00:00Z`);
    const reservedCents = 8 * 6 * 290; // 8 GPUs × 6 h × €2.90
    await db.transaction((tx) => reserveBudget(tx, { allocationId: credit.id, orgId: owner.org.id, jobId, amount: reservedCents, actorUserId: owner.userId, today: day, at }));
    await settleJob(db, { jobId, actualAmount: Math.round(reservedCents * 0.7), at: new Date(at.getTime() + 4 * 3600_000) });
  }
}
