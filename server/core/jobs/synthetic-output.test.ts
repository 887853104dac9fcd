import { describe, expect, it } from 'vitest';
import { lastLine, progressText, startLines, syntheticOutput, syntheticProgress, type OutputInput } from './synthetic-output';

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

describe('syntheticProgress and progressText', () => {
  const training = { jobId: job.jobId, kind: 'training' as const, gpus: 4 };

  it('the same job and minute give the same figures; another job others', () => {
    expect(syntheticProgress(training, 17)).toEqual(syntheticProgress(training, 17));
    expect(syntheticProgress({ ...training, jobId: `${job.jobId}_1` }, 17)).not.toEqual(syntheticProgress(training, 17));
  });

  it('training: the step counts up, the loss falls, the learning rate warms up then decays', () => {
    const at = (minute: number) => syntheticProgress(training, minute);
    const [early, peak, late] = [at(1), at(10), at(1000)];
    if (early.kind === 'serve' || peak.kind === 'serve' || late.kind === 'serve') throw new Error('not a training report');
    expect([early.step, peak.step, late.step]).toEqual([100, 1000, 100_000]);
    expect(late.loss).toBeLessThan(early.loss);
    expect(peak.learningRate).toBeCloseTo(3e-4);
    expect(early.learningRate).toBeLessThan(peak.learningRate);
    expect(late.learningRate).toBeLessThan(peak.learningRate);
  });

  it.each([
    ['training', /^\[train\] step 500 {2}loss \d\.\d{3} {2}lr \d\.\d{2}e-\d {2}throughput \d+ tokens\/s$/],
    ['fine_tuning', /^\[train\] step 500 {2}loss \d\.\d{3} {2}lr \d\.\d{2}e-\d {2}throughput \d+ tokens\/s$/],
    ['batch', /^\[batch\] step 500 {2}loss \d\.\d{3} {2}throughput \d+ tokens\/s$/],
    ['inference', /^\[serve\] t\+5 min {2}requests\/s \d+ {2}p95 latency \d+ ms$/],
  ] as const)('a %s job prints its progress as %s', (kind, shape) => {
    expect(progressText(syntheticProgress({ ...training, kind }, 5))).toMatch(shape);
  });

  it('startLines name the image and the nodes; lastLine is null while the job runs', () => {
    expect(startLines({ image: 'img:1', nodeList: [], gpus: 2 })).toEqual(['[portal] pulling img:1', '[portal] running on the allocated nodes with 2 GPU(s)']);
    expect(lastLine('RUNNING', null, null)).toBeNull();
    expect(lastLine('COMPLETED', 0, null)).toBe('[portal] finished: exit code 0, Slurm 0:0');
  });

  it('syntheticOutput keeps its cadence: a step every 5 minutes, at most 40', () => {
    expect(syntheticOutput({ ...job, elapsedSeconds: 1e6 }).filter((l) => l.startsWith('[train] step'))).toHaveLength(40);
    expect(syntheticOutput({ ...job, kind: 'inference' })[2]).toMatch(/^\[serve\] t\+5 min /);
  });
});
