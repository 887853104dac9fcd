import { describe, expect, it } from 'vitest';
import { syntheticOutput, type OutputInput } from './synthetic-output';

const job: OutputInput = { jobId: '00000000-0000-4000-8000-000000000001', kind: 'training', image: 'nvcr.io/nvidia/pytorch:24.05-py3', nodeList: ['gpu-a-001'], gpus: 4, state: 'RUNNING', elapsedSeconds: 1_800, exitCode: null, signal: null };

describe('syntheticOutput', () => {
  it.each(['PENDING', 'SUBMITTING'])('a %s job has printed nothing (the page says so in the reader language, not the log)', (state) => {
    expect(syntheticOutput({ ...job, state, elapsedSeconds: 0 })).toEqual([]);
  });

  it('a running job prints its steps, the same every time', () => {
    const lines = syntheticOutput(job);
    expect(lines[0]).toBe('[portal] pulling nvcr.io/nvidia/pytorch:24.05-py3');
    expect(lines.filter((l) => l.startsWith('[train] step'))).toHaveLength(6);
    expect(syntheticOutput(job)).toEqual(lines);
  });

  // The last line says how the job ended as the job page and the mail do (Slurm's notation, the signal's name).
  it.each([
    ['COMPLETED', 0, null, '[portal] finished: exit code 0, Slurm 0:0'],
    ['FAILED', 3, null, '[portal] the program failed: exit code 3, Slurm 3:0'],
    ['TIMEOUT', 0, 15, '[portal] walltime reached, the job was stopped (TIMEOUT): signal 15 (SIGTERM), Slurm 0:15'],
    ['CANCELLED', 0, 15, '[portal] cancelled: signal 15 (SIGTERM), Slurm 0:15'],
    ['FAILED', 0, 9, '[portal] the program failed: signal 9 (SIGKILL), Slurm 0:9'],
    ['CANCELLED', null, null, '[portal] cancelled'],
    ['PREEMPTED', 0, 15, '[portal] preempted, another job took its nodes (PREEMPTED): signal 15 (SIGTERM), Slurm 0:15'],
    ['NODE_FAIL', null, null, '[portal] a node failed, the job was stopped (NODE_FAIL)'],
  ] as const)('a %s job (%j:%j) ends its log with how it ended', (state, exitCode, signal, last) => {
    expect(syntheticOutput({ ...job, state, exitCode, signal }).at(-1)).toBe(last);
  });
});
