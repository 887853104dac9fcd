import { describe, expect, it } from 'vitest';
import { syntheticOutput, type OutputInput } from './synthetic-output';

const job: OutputInput = { jobId: '00000000-0000-4000-8000-000000000001', kind: 'training', image: 'nvcr.io/nvidia/pytorch:24.05-py3', nodeList: ['gpu-a-001'], gpus: 4, state: 'RUNNING', elapsedSeconds: 1_800, exitCode: null };

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
});
