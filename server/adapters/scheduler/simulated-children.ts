// The simulated cluster's real processes: the jobs whose program runs on this machine because the
// simulated nodes are this machine — an interactive session's app (simulated-sessions.ts, issue #28) and
// an inference service's model server (simulated-services.ts, issue #29). Each kind keeps its children
// by job id; a job that starts running gets its child, one that ended has it stopped (SIGTERM, then
// SIGKILL after a grace), and the portal's exit stops them all. Output goes into files of the job's folder.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { OutputJob, SchedulerJobStatus } from '~/server/core/scheduler/port';
import { isFinalState } from '~/server/core/scheduler/port';
import { logger } from '~/server/observability/log';

/** How a job's child is started. */
export interface ChildSpec {
  command: string;
  args: string[];
  env: Record<string, string | undefined>;
  /** Files in the job's folder for stdout and stderr (the same name: one file for both). */
  stdout: string;
  stderr: string;
  /** Its own process group (stopped as a group: a launcher and what it started). */
  group: boolean;
  /** For the log: what started. */
  what: string;
}

export interface SimulatedChildren {
  /** follow starts the child of each job `specOf` names that runs and has none, and stops the child of each that ended. */
  follow(items: readonly { job: OutputJob; status: SchedulerJobStatus }[]): void;
  /** running lists the jobs whose child runs now (tests). */
  running(): string[];
}

interface Registry {
  /** Each job's child, and whether it leads its own process group (kept here: a module loaded twice shares it). */
  children: Map<string, { child: ChildProcess; group: boolean }>;
  exitHook: boolean;
}

/** The most environment a child inherits: what a login on a node would have; the portal's secrets stay out. */
export function loginEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'USER', 'LOGNAME', 'SHELL']) if (process.env[name] !== undefined) env[name] = process.env[name];
  return env;
}

/**
 * simulatedChildren keeps one kind of child process (`name` keys its registry on globalThis, so a
 * module loaded twice shares it). `specOf` says whether a job has a child and how it starts; `graceMs`
 * is how long a child has after SIGTERM.
 */
export function simulatedChildren(name: string, specOf: (job: OutputJob, node: string) => ChildSpec | null, graceMs: number): SimulatedChildren {
  const holder = globalThis as unknown as Record<string, Registry | undefined>;
  const registry: Registry = (holder[`__portalSimChildren_${name}`] ??= { children: new Map(), exitHook: false });

  const signal = (child: ChildProcess, group: boolean, sig: NodeJS.Signals) => {
    try {
      if (group) process.kill(-child.pid!, sig);
      else child.kill(sig);
    } catch {
      // Gone already.
    }
  };

  const stop = (jobId: string, { child, group }: { child: ChildProcess; group: boolean }) => {
    registry.children.delete(jobId);
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    signal(child, group, 'SIGTERM');
    const timer = setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) signal(child, group, 'SIGKILL');
    }, graceMs);
    timer.unref();
  };

  const start = (job: OutputJob, spec: ChildSpec) => {
    fs.mkdirSync(job.workDir, { recursive: true });
    const out = fs.openSync(path.join(job.workDir, spec.stdout), 'a');
    const err = spec.stderr === spec.stdout ? out : fs.openSync(path.join(job.workDir, spec.stderr), 'a');
    try {
      const child = spawn(spec.command, spec.args, { cwd: job.workDir, env: spec.env as NodeJS.ProcessEnv, detached: spec.group, stdio: ['ignore', out, err] });
      child.on('error', (error) => logger().error({ err: error, jobId: job.jobId }, `${spec.what} could not start`));
      child.on('exit', () => {
        if (registry.children.get(job.jobId)?.child === child) registry.children.delete(job.jobId);
      });
      child.unref();
      registry.children.set(job.jobId, { child, group: spec.group });
      logger().info({ jobId: job.jobId, pid: child.pid }, `simulated cluster: ${spec.what} started on this machine`);
    } finally {
      fs.closeSync(out);
      if (err !== out) fs.closeSync(err);
    }
    if (!registry.exitHook) {
      registry.exitHook = true;
      process.once('exit', () => {
        for (const [jobId, running] of registry.children) stop(jobId, running);
      });
    }
  };

  return {
    follow(items) {
      for (const { job, status } of items) {
        const running = registry.children.get(job.jobId);
        if (isFinalState(status.state)) {
          if (running) stop(job.jobId, running);
          continue;
        }
        if (status.state !== 'RUNNING' || running) continue;
        const spec = specOf(job, status.nodeList[0] ?? 'localhost');
        if (spec) start(job, spec);
      }
    },
    running: () => [...registry.children.keys()],
  };
}
