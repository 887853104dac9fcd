// A scheduler's clock and the portal's differ in grain: the simulated cluster counts in simulated
// seconds (1.7 ms of wall time at 600×), Slurm in whole seconds, the portal's submission in
// milliseconds. Read naively, a job that started at once "started" 2 ms before it was submitted
// (the usage CSV showed it). The portal owns the job record, so it keeps the order it can prove. Pure.

interface RunTimes {
  startedAt: Date | null;
  endedAt: Date | null;
}

/** notBeforeSubmission moves a reported start (and end) that falls before the portal's submission up to it: started ≥ submitted, ended ≥ started. */
export function notBeforeSubmission<T extends RunTimes>(status: T, submittedAt: Date): T {
  const startedAt = status.startedAt && status.startedAt < submittedAt ? submittedAt : status.startedAt;
  const floor = startedAt ?? submittedAt;
  const endedAt = status.endedAt && status.endedAt < floor ? floor : status.endedAt;
  return startedAt === status.startedAt && endedAt === status.endedAt ? status : { ...status, startedAt, endedAt };
}
