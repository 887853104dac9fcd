/**
 * Live simulated-cluster benchmark: the simulated scheduler adapter alone on a real Postgres.
 * Three clusters side by side, each with one partition held by a day-long job so every new job
 * queues, filled to 100, 1,000 and 10,000 queued jobs. It times sequential `submit` calls taken
 * round-robin across the three (so the machine's load weighs on each size alike), each followed by
 * an untimed `cancel` of the same job so the queue keeps its size; then per size one `jobs()` call
 * for every queued id, a snapshot (checkpoint), a rebuild of a new adapter instance (a restarted
 * process) from snapshot + ops, and 16 concurrent submitters for a few seconds. Prints median and
 * p99 in ms, and the ratio of the submit medians at 10,000 and at 100.
 *
 *   npx tsx bench/sim-live.ts [--database-url URL] [--reps N]
 *
 * It creates and drops its own database (portal_bench_sim_<random>) on the server the URL names:
 * --database-url, else BENCH_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import postgres from 'postgres';
import { migrateDb, openDb, type DbHandle } from '~/db/client';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler, type SimulatedScheduler, type SimulatedSchedulerOptions } from '~/server/adapters/scheduler/simulated';
import { DEFAULT_CATALOGUE } from '~/server/catalogue';
import type { SchedulerJobSpec } from '~/server/core/scheduler/port';
import type { ClusterConfig } from '~/server/core/sim';
import { syncCatalogue } from '~/server/services/catalogue';
import { cpuModel } from './markdown';

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const LEVELS = [100, 1_000, 10_000];
const PARTITION = 'h100-ch';
const WARMUP = 20;
const FILL_CONCURRENCY = 16;
const CONCURRENT_CLIENTS = 16;
const CONCURRENT_MS = 3000;
const CHECKPOINT_EVERY_ROUNDS = 50;

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function quantile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.min(sorted.length, Math.ceil(p * sorted.length)) - 1)]!;
}

function summary(samples: number[]): { median: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
}

const ms = (n: number, width = 8): string => n.toFixed(2).padStart(width);

let nextId = 0;
function queuedJob(): SchedulerJobSpec {
  const i = nextId++;
  return {
    portalJobId: `bench-${i}`,
    name: `bench-${i}`,
    partition: PARTITION,
    gpus: 4,
    nodes: 1,
    walltimeSeconds: 3600,
    account: `project-${i % 20}`,
    user: `user-${i % 50}`,
    image: 'bench',
    command: 'sleep',
    env: {},
    simulation: { runtimeSeconds: 1800, gpuUtilPercent: 80, exitCode: 0 },
  };
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const value = await fn();
  return [performance.now() - start, value];
}

interface Level {
  size: number;
  port: SimulatedScheduler;
  queued: string[];
  submits: number[];
  cancels: number[];
}

async function main(): Promise<void> {
  const adminUrl = flag('--database-url') ?? process.env.BENCH_DATABASE_URL ?? DEFAULT_URL;
  const reps = Number(flag('--reps') ?? 300);
  const name = `portal_bench_sim_${randomBytes(5).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let handle: DbHandle | undefined;
  try {
    handle = await openDb({ driver: 'postgres', url: url.toString(), max: 20 });
    await migrateDb(handle);
    await syncCatalogue(handle.db, DEFAULT_CATALOGUE);
    const db = handle.db;
    const cluster: ClusterConfig = await clusterConfigFromCatalogue(db);
    const partition = cluster.partitions.find((p) => p.name === PARTITION)!;
    const adapter = (clusterId: string, extra: Partial<SimulatedSchedulerOptions> = {}): SimulatedScheduler =>
      createSimulatedScheduler({ db, cluster, speed: 1, now: () => new Date(), clusterId, ...extra });
    const [serverVersion] = await admin<{ server_version: string }[]>`show server_version`;

    console.log(`sim-live: ${cpuModel()} × ${cpus().length}, load ${loadavg()[0]!.toFixed(1)}, Postgres ${serverVersion!.server_version}`);
    console.log(`partition ${PARTITION} (${partition.nodes} nodes × ${partition.gpusPerNode} GPUs) held by one job; queued jobs of 4 GPUs from 20 accounts`);

    const levels: Level[] = [];
    for (const size of LEVELS) {
      const port = adapter(`bench-${size}`);
      // One job takes the whole partition for a day: everything after it queues.
      await port.submit({ ...queuedJob(), gpus: partition.nodes * partition.gpusPerNode, nodes: partition.nodes, walltimeSeconds: 86_400, simulation: { runtimeSeconds: 86_400, gpuUtilPercent: 90, exitCode: 0 } });
      const queued: string[] = [];
      const fillStart = performance.now();
      await Promise.all(
        Array.from({ length: FILL_CONCURRENCY }, async () => {
          while (queued.length < size) {
            const spec = queuedJob();
            queued.push(spec.portalJobId);
            await port.submit(spec);
          }
        }),
      );
      await port.checkpoint();
      console.log(`  filled ${size.toLocaleString('en-GB')} queued in ${((performance.now() - fillStart) / 1000).toFixed(1)} s`);
      levels.push({ size, port, queued, submits: [], cancels: [] });
    }

    for (let round = 0; round < WARMUP + reps; round++) {
      for (let k = 0; k < levels.length; k++) {
        const level = levels[(round + k) % levels.length]!;
        const spec = queuedJob();
        const [submitMs] = await timed(() => level.port.submit(spec));
        const [cancelMs] = await timed(() => level.port.cancel(spec.portalJobId));
        if (round >= WARMUP) {
          level.submits.push(submitMs);
          level.cancels.push(cancelMs);
        }
      }
      if (round % CHECKPOINT_EVERY_ROUNDS === CHECKPOINT_EVERY_ROUNDS - 1) for (const level of levels) await level.port.checkpoint(); // as the worker would
    }

    console.log(`\n${reps} timed submits per size, round-robin; ms`);
    console.log('  queued   submit median      p99   cancel median   jobs(all)   snapshot   rebuild   16 clients submits/s');
    for (const level of levels) {
      const jobsMs: number[] = [];
      for (let i = 0; i < 3; i++) {
        const [took, statuses] = await timed(() => level.port.jobs(level.queued));
        if (statuses.length !== level.queued.length || statuses.some((s) => s.state !== 'PENDING')) throw new Error('bench: expected every queued job PENDING');
        jobsMs.push(took);
      }
      // A snapshot of the whole engine (forced), then a new instance rebuilding from it and the ops after it.
      const forced = adapter(`bench-${level.size}`, { checkpointEveryOps: 1 });
      await forced.submit(queuedJob());
      const [snapshotMs] = await timed(() => forced.checkpoint());
      await forced.submit(queuedJob());
      const [rebuildMs] = await timed(() => adapter(`bench-${level.size}`).advance());
      // Throughput of one process's adapter under 16 concurrent submitters (calls share transactions).
      let done = 0;
      const until = performance.now() + CONCURRENT_MS;
      const start = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENT_CLIENTS }, async () => {
          while (performance.now() < until) {
            const spec = queuedJob();
            await level.port.submit(spec);
            await level.port.cancel(spec.portalJobId);
            done++;
          }
        }),
      );
      const rate = done / ((performance.now() - start) / 1000);
      const s = summary(level.submits);
      const c = summary(level.cancels);
      console.log(
        `${level.size.toLocaleString('en-GB').padStart(8)}   ${ms(s.median)} ${ms(s.p99)}   ${ms(c.median)}        ${ms(summary(jobsMs).median, 8)}   ${ms(snapshotMs, 8)}  ${ms(rebuildMs, 8)}   ${Math.round(rate).toString().padStart(8)} (+ as many cancels)`,
      );
    }
    const ratio = summary(levels.at(-1)!.submits).median / summary(levels[0]!.submits).median;
    console.log(`\nsubmit median at ${LEVELS.at(-1)!.toLocaleString('en-GB')} queued / at ${LEVELS[0]} queued: ${ratio.toFixed(2)}× (target ≤ 1.25×)`);
  } finally {
    await handle?.close();
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
