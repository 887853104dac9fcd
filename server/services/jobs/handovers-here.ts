// The jobs this process is handing to the scheduler at this moment. The hand-over lease
// (jobs.handover_until) keeps other processes off a job while it is handed over; within one process
// this mark does, however long the hand-over waits: on the embedded database every statement queues
// behind the others on its one connection, and a burst of submissions can keep a request's hand-over
// past its lease (it is alive, only slow). The process's own reconciler then leaves the job to it
// instead of handing it over a second time. A mark older than HANDOVER_STUCK_MS is a hand-over that
// hangs: it no longer counts, and the lease decides again.
// Kept on globalThis: Next bundles the routes and the worker apart, so a module's own state would be one per bundle.

/** After this long a hand-over still marked is taken as hung (a scheduler call that never returns). */
export const HANDOVER_STUCK_MS = 10 * 60_000;

const KEY = Symbol.for('portal.jobs.handingOverHere');

function marks(): Map<string, number> {
  const holder = globalThis as typeof globalThis & { [KEY]?: Map<string, number> };
  return (holder[KEY] ??= new Map<string, number>());
}

/** markHandover notes that this process has started handing the job over (its request created it, or it claimed the lease). */
export function markHandover(jobId: string): void {
  marks().set(jobId, performance.now());
}

/** unmarkHandover notes that this process's hand-over of the job has ended, however it ended. */
export function unmarkHandover(jobId: string): void {
  marks().delete(jobId);
}

/** handingOverHere tells whether this process is handing the job over right now (and has not been for longer than HANDOVER_STUCK_MS). */
export function handingOverHere(jobId: string): boolean {
  const since = marks().get(jobId);
  return since !== undefined && performance.now() - since < HANDOVER_STUCK_MS;
}
