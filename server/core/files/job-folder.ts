// Where a job's files lie in its project's workspace, the same on every backend: the simulated cluster
// writes them there, Slurm's slurmd writes there (the adapter names the paths), the job page reads there.

/** A job's working folder, relative to its project's workspace: `jobs/<job id>`. */
export function jobFolderPath(jobId: string): string {
  if (!/^[0-9a-zA-Z-]{1,64}$/.test(jobId)) throw new Error(`jobFolderPath: not a job id: ${JSON.stringify(jobId)}`);
  return `jobs/${jobId}`;
}

export type OutputStream = 'stdout' | 'stderr';

/**
 * The file a job's stream is written to in its folder: `stdout.log`, `stderr.log`; an array's task writes
 * its own, `stdout-<index>.log` (`%a` gives Slurm's pattern for every task).
 */
export function outputFileName(stream: OutputStream, arrayTask?: number | '%a'): string {
  if (arrayTask === undefined) return `${stream}.log`;
  if (arrayTask !== '%a' && !(Number.isSafeInteger(arrayTask) && arrayTask >= 0)) throw new Error(`outputFileName: not a task index: ${arrayTask}`);
  return `${stream}-${arrayTask}.log`;
}
