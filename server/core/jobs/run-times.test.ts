import { describe, expect, it } from 'vitest';
import { notBeforeSubmission } from './run-times';

const submittedAt = new Date('2026-12-01T10:00:00.005Z');
const at = (iso: string) => new Date(`2026-12-01T${iso}Z`);

describe('notBeforeSubmission', () => {
  it.each([
    ['a start 2 ms before the submission (the simulator’s grain)', at('10:00:00.003'), at('10:05:00.003'), at('10:00:00.005'), at('10:05:00.003')],
    ['a start and end in the second of the submission (Slurm’s grain)', at('10:00:00.000'), at('10:00:00.000'), at('10:00:00.005'), at('10:00:00.005')],
    ['a start after the submission, left as it is', at('10:00:01.000'), at('10:01:00.000'), at('10:00:01.000'), at('10:01:00.000')],
    ['a job that never started but ended (cancelled while queued)', null, at('10:00:00.001'), null, at('10:00:00.005')],
  ])('%s', (_name, startedAt, endedAt, expectedStart, expectedEnd) => {
    const status = { state: 'COMPLETED', startedAt, endedAt };
    const result = notBeforeSubmission(status, submittedAt);
    expect(result).toEqual({ state: 'COMPLETED', startedAt: expectedStart, endedAt: expectedEnd });
    if (result.startedAt) expect(result.startedAt.getTime()).toBeGreaterThanOrEqual(submittedAt.getTime());
  });

  it('returns the very status when nothing needs moving', () => {
    const status = { startedAt: null, endedAt: null };
    expect(notBeforeSubmission(status, submittedAt)).toBe(status);
  });
});
