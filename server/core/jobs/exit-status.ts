// How a job ended, as Slurm reports it: the exit code and the signal, in Slurm's own notation
// (`sacct`'s ExitCode "3:0", "0:15") and with the signal's name. The job page, the job-finished mail,
// the API and the simulated cluster's log all show this one value.

/** The names of the signals a job commonly ends by, in Linux's numbering (Slurm reports Linux's). */
export const SIGNAL_NAMES: Readonly<Record<number, string>> = {
  1: 'SIGHUP',
  2: 'SIGINT',
  3: 'SIGQUIT',
  4: 'SIGILL',
  6: 'SIGABRT',
  7: 'SIGBUS',
  8: 'SIGFPE',
  9: 'SIGKILL',
  10: 'SIGUSR1',
  11: 'SIGSEGV',
  12: 'SIGUSR2',
  13: 'SIGPIPE',
  14: 'SIGALRM',
  15: 'SIGTERM',
  24: 'SIGXCPU',
  25: 'SIGXFSZ',
};

/**
 * How a job ended: `code` when the program exited by itself (its exit code), `signal` when a signal of
 * a common name ended it, `signalNumber` for any other signal. Each has its words (`job.exit.<kind>`).
 */
export const EXIT_KINDS = ['code', 'signal', 'signalNumber'] as const;

/** A job's end as Slurm reports it. */
export interface ExitStatus {
  kind: (typeof EXIT_KINDS)[number];
  exitCode: number;
  signal: number | null;
  signalName: string | null;
  /** Slurm's notation, `${exitCode}:${signal ?? 0}`, as `sacct` and `scontrol` show it. */
  slurm: string;
}

/**
 * exitStatus describes a job's end from its exit code and signal as the scheduler reported them; null
 * when nothing is known (the job runs, or never ran). A signal without an exit code counts as 0, as in Slurm.
 */
export function exitStatus(exitCode: number | null, signal: number | null): ExitStatus | null {
  if (signal !== null && signal > 0) {
    const code = exitCode ?? 0;
    const signalName = SIGNAL_NAMES[signal] ?? null;
    return { kind: signalName ? 'signal' : 'signalNumber', exitCode: code, signal, signalName, slurm: `${code}:${signal}` };
  }
  if (exitCode === null) return null;
  return { kind: 'code', exitCode, signal: null, signalName: null, slurm: `${exitCode}:0` };
}
