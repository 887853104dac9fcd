// A job array's status as a whole, from its tasks: one rule for both schedulers, so an array ends, is
// charged and reads the same on the simulated cluster and on Slurm. Pure.
import { isFinalState, type SchedulerJobState, type SchedulerJobStatus, type SchedulerTaskStatus } from './port';

export interface ArrayParts {
  portalJobId: string;
  /** The array's id at the scheduler (Slurm: the array's job id). */
  schedulerJobId: string;
  /** Tasks that started (running, requeued or ended), by index. */
  tasks: SchedulerTaskStatus[];
  /** Tasks still waiting to start. */
  waiting: number;
  /** Tasks that ended without ever starting (the array was cancelled while they waited). */
  neverRan: number;
  /** Why the waiting tasks wait (Slurm's reason: JobArrayTaskLimit, Priority, Resources…), when they do. */
  pendingReason: string | null;
  energyMeasured: boolean;
  siteId: string | null;
}

/**
 * summariseArray: the array RUNS while a task runs, WAITS while none runs and some wait (or were
 * requeued), and has ENDED when every task has. Then it is CANCELLED when any task was cancelled or
 * never ran, COMPLETED when all completed, else as its first task that did not complete (by index) ended:
 * FAILED, TIMEOUT, NODE_FAIL or PREEMPTED. GPU time and energy are the sum over the tasks; the start is
 * the first task's, the end the last's; the exit code the highest of the tasks' (with its signal), as
 * sacct shows an array's.
 */
export function summariseArray(parts: ArrayParts): SchedulerJobStatus {
  const tasks = [...parts.tasks].sort((a, b) => a.index - b.index);
  const running = tasks.filter((t) => t.state === 'RUNNING');
  const open = tasks.some((t) => !isFinalState(t.state)) || parts.waiting > 0;
  let state: SchedulerJobState;
  if (running.length > 0) state = 'RUNNING';
  else if (open) state = 'PENDING';
  else if (parts.neverRan > 0 || tasks.some((t) => t.state === 'CANCELLED')) state = 'CANCELLED';
  else state = tasks.find((t) => t.state !== 'COMPLETED')?.state ?? 'COMPLETED';
  let first: number | null = null;
  let last: number | null = null;
  for (const t of tasks) {
    if (t.startedAt && (first === null || t.startedAt.getTime() < first)) first = t.startedAt.getTime();
    if (t.endedAt && (last === null || t.endedAt.getTime() > last)) last = t.endedAt.getTime();
  }
  let exit: SchedulerTaskStatus | null = null;
  if (!open) for (const t of tasks) if (t.exitCode !== null && (exit === null || t.exitCode > (exit.exitCode ?? -1))) exit = t;
  const nodes = new Set((running.length > 0 ? running : tasks).flatMap((t) => t.nodeList));
  return {
    portalJobId: parts.portalJobId,
    schedulerJobId: parts.schedulerJobId,
    state,
    pendingReason: state === 'PENDING' ? (parts.waiting > 0 ? parts.pendingReason : 'Requeued') : null,
    startedAt: first === null ? null : new Date(first),
    endedAt: open || last === null ? null : new Date(last),
    exitCode: exit?.exitCode ?? null,
    signal: exit ? exit.signal : null,
    nodeList: [...nodes].sort(),
    gpuSeconds: tasks.reduce((s, t) => s + t.gpuSeconds, 0),
    energyWh: tasks.reduce((s, t) => s + t.energyWh, 0),
    energyMeasured: parts.energyMeasured,
    siteId: parts.siteId,
    tasks,
    tasksWaiting: parts.waiting,
  };
}
