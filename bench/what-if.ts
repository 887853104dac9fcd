/**
 * What-if planning benchmark: the time of a 90-day what-if run on the demo centre, as staff wait for
 * it — the worker's `runDueWhatIf` from claiming the run to storing both outcomes (history read from
 * the database, the current and the proposed machine replayed, in slices with progress notes) — for
 * 8 more H100 nodes and for a tight power cap at Jena; then the replays alone on the demo's 90 days
 * scaled k times (k copies of every job on a machine with k times the nodes, so the load stays the
 * demo's), to show how the time grows with a centre's size. Writes its section of BENCHMARKS.md.
 *
 *   npx tsx bench/what-if.ts [--no-write]
 *
 * Runs on an in-memory PGlite seeded with the demo centre (as a newcomer's first start does).
 */
import { cpus, loadavg } from 'node:os';
import { eq } from 'drizzle-orm';
import { migrateDb, openDb } from '~/db/client';
import { users } from '~/db/schema';
import { DEFAULT_CATALOGUE } from '~/server/catalogue';
import { applyChanges, type WhatIfChange, type WhatIfJob, type WhatIfMachine } from '~/server/core/whatif/machine';
import { WhatIfReplay } from '~/server/core/whatif/replay';
import { addDays } from '~/server/core/working-days';
import { syncCatalogue } from '~/server/services/catalogue';
import { seedDemoCentre } from '~/server/services/demo/demo-seed';
import { seedDemoHistory } from '~/server/services/demo/demo-history';
import { createWhatIfRun, currentMachine, getWhatIfRun, loadHistory, periodSeconds, runDueWhatIf, type WhatIfResult } from '~/server/services/planning/what-if';
import { loadAverage, machine as machineLine, writeSection } from './markdown';
import { ascending, median, num } from './stats';

const SECTION = '## What-if planning';
const REPS = 5;
const SCALES = [1, 10, 50];


/** scaled makes k copies of every job (ids suffixed, accounts kept) and k times the nodes of every partition. */
function scaled(machine: WhatIfMachine, jobs: WhatIfJob[], k: number): { machine: WhatIfMachine; jobs: WhatIfJob[] } {
  if (k === 1) return { machine, jobs };
  return {
    machine: { ...machine, partitions: machine.partitions.map((p) => ({ ...p, nodes: p.nodes * k })) },
    jobs: jobs.flatMap((j) => Array.from({ length: k }, (_, c) => ({ ...j, id: `${j.id}-${c}`, submitSeconds: j.submitSeconds + c }))),
  };
}

async function main() {
  const load = loadavg();
  const handle = await openDb({ driver: 'pglite' });
  await migrateDb(handle);
  await syncCatalogue(handle.db, DEFAULT_CATALOGUE);
  const now = new Date();
  const today = now.toISOString().slice(0, 10);
  const seedStart = performance.now();
  await seedDemoCentre(handle.db, now);
  await seedDemoHistory(handle.db, now);
  const seedMs = performance.now() - seedStart;
  const period = { from: addDays(today, -90), to: addDays(today, -1) };
  const [admin] = await handle.db.select({ id: users.id }).from(users).where(eq(users.email, 'admin@centre.example'));
  const actor = { userId: admin!.id, email: 'admin@centre.example', name: 'Admin', staffRoles: ['admin' as const] };

  const proposals: { label: string; changes: WhatIfChange[] }[] = [
    { label: '8 more H100 nodes (16 → 24)', changes: [{ kind: 'nodes', classId: 'h100', delta: 8 }] },
    { label: 'Jena capped at 80 kW', changes: [{ kind: 'powerCap', siteId: 'de-jena', capKw: 80 }] },
  ];
  const runRows: string[] = [];
  for (const p of proposals) {
    const times: number[] = [];
    let result: WhatIfResult | null = null;
    for (let r = 0; r < REPS; r++) {
      const { id } = await createWhatIfRun(handle.db, actor, { title: p.label, ...period, changes: p.changes }, today);
      const t0 = performance.now();
      await runDueWhatIf(handle.db, () => new Date());
      times.push(performance.now() - t0);
      result = (await getWhatIfRun(handle.db, id)).result;
    }
    if (!result) throw new Error(`${p.label}: no result`);
    const { current, proposed, history } = result;
    runRows.push(
      `| ${p.label} | ${num(history.replayed)} | ${num(median(ascending(times)))} | ${num(Math.min(...times))} | ${num(current.waitMeanSeconds / 60, 1)} → ${num(proposed.waitMeanSeconds / 60, 1)} | ${num(current.waitP90Seconds / 60, 1)} → ${num(proposed.waitP90Seconds / 60, 1)} | ${num(current.jobsDelayedByPowerCap)} → ${num(proposed.jobsDelayedByPowerCap)} |`,
    );
    process.stdout.write(`${p.label}: median ${num(median(ascending(times)))} ms\n`);
  }

  // The replays alone, the demo's 90 days scaled.
  const machine = await currentMachine(handle.db);
  const history = await loadHistory(handle.db, machine, period);
  const bounds = periodSeconds(period);
  const scaleRows: string[] = [];
  let baseMs = 0;
  for (const k of SCALES) {
    const { machine: m, jobs } = scaled(machine, history.jobs, k);
    const proposal = applyChanges(m, jobs, [{ kind: 'nodes', classId: 'h100', delta: 8 * k }]);
    const times: number[] = [];
    for (let r = 0; r < (k >= 50 ? 3 : REPS); r++) {
      const t0 = performance.now();
      const a = new WhatIfReplay(m, jobs, bounds, { queueDepth: 100 });
      a.outcome();
      const b = new WhatIfReplay(proposal.machine, proposal.jobs, bounds, { queueDepth: 100 });
      b.outcome();
      times.push(performance.now() - t0);
    }
    const ms = median(ascending(times));
    if (k === 1) baseMs = ms;
    const gpus = m.partitions.reduce((s, p) => s + p.nodes * p.gpusPerNode, 0);
    scaleRows.push(`| ×${k} | ${num(jobs.length)} | ${num(gpus)} | ${num(ms)} | ${num((jobs.length * 2) / (ms / 1000))} | ${num(ms / baseMs / k, 2)} |`);
    process.stdout.write(`scale ×${k}: ${num(ms)} ms\n`);
  }
  await handle.close();

  const text = [
    SECTION,
    '',
    `Measured by \`npx tsx bench/what-if.ts\` on ${today}. Machine: ${machineLine()}; load average ${loadAverage(load)} when it started. In-memory PGlite seeded with the demo centre (${num(seedMs / 1000, 1)} s to seed).`,
    '',
    `A 90-day what-if run on the demo centre (${period.from} – ${period.to}), as staff wait for it: \`runDueWhatIf\` from claiming the run to storing both outcomes — reading the history, replaying it on the current and on the proposed machine with the live cluster's scheduler (multifactor, EASY, queue depth 100) in 40 ms slices with progress notes. ${REPS} runs each.`,
    '',
    '| proposal | jobs replayed | median (ms) | min (ms) | mean wait (min), current → proposed | p90 wait (min) | jobs delayed by the cap |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...runRows,
    '',
    `The two replays alone (8 more H100 nodes per demo-sized block), on the demo's 90 days scaled k times: k copies of every job on a machine with k times the nodes, so the load per GPU stays the demo's. The last column is the time per job relative to ×1 (1.00: linear in the jobs).`,
    '',
    '| scale | jobs | GPUs (current) | both replays, median (ms) | jobs replayed/s | time per job vs ×1 |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...scaleRows,
    '',
    `Cores: ${cpus().length}. The worker yields to the event loop between slices, so a run this long never holds up the reconciler for more than one slice.`,
  ].join('\n');
  if (!process.argv.includes('--no-write')) process.stdout.write(`wrote ${writeSection(process.cwd(), SECTION, text)}\n`);
  else process.stdout.write(`${text}\n`);
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
