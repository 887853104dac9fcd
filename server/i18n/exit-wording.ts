// The words for how a job ended (core/jobs/exit-status.ts): the job page and the job-finished mail say it alike.
import type { ExitStatus } from '~/server/core/jobs/exit-status';
import type { MessageKey } from './en';

/** exitWording picks the message and its parameters for a job's end; "no exit code" when none was reported. */
export function exitWording(status: ExitStatus | null): { key: MessageKey; params: Record<string, string | number> } {
  if (!status) return { key: 'job.exit.none', params: {} };
  // Codes and signals are identifiers, not amounts: never grouped or localised.
  const params = { exitCode: String(status.exitCode), signal: String(status.signal ?? 0), signalName: status.signalName ?? '', slurm: status.slurm };
  return { key: `job.exit.${status.kind}`, params };
}
