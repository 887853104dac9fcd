import { describe, expect, it } from 'vitest';
import { arrayIndexes, isArrayProblem, MAX_ARRAY_TASKS, parseArray } from './array';

describe('job arrays as Slurm writes them', () => {
  it('reads ranges, lists, steps and a throttle, and writes them back as Slurm takes them', () => {
    expect(parseArray('0-9999%64')).toEqual({ ranges: [{ start: 0, end: 9999, step: 1 }], count: 10_000, throttle: 64, text: '0-9999%64' });
    expect(parseArray(' 1, 3, 5-11:2 ')).toMatchObject({ count: 6, throttle: null, text: '1,3,5-11:2' });
    // A stepped range ends on its last index.
    expect(parseArray('0-10:4')).toMatchObject({ ranges: [{ start: 0, end: 8, step: 4 }], count: 3, text: '0-8:4' });
    expect(parseArray('7')).toMatchObject({ count: 1, text: '7' });
    // A throttle above the task count is the task count.
    expect(parseArray('0-3%10')).toMatchObject({ throttle: 4, text: '0-3%4' });
  });

  it('yields every index once, in order, lazily', () => {
    const array = parseArray('0-2,5-9:2,20');
    if (isArrayProblem(array)) throw new Error('expected an array');
    expect([...arrayIndexes(array)]).toEqual([0, 1, 2, 5, 7, 9, 20]);
    const big = parseArray(`0-${MAX_ARRAY_TASKS - 1}`);
    if (isArrayProblem(big)) throw new Error('expected an array');
    expect(arrayIndexes(big).next().value).toBe(0);
  });

  it('names what to fix', () => {
    for (const bad of ['', '%4', 'a-b', '5-1', '1-9:0', '1,,2', '1-2-3', '0-9%4%2', '0-9%x']) expect(parseArray(bad), bad).toEqual({ key: 'job.arrayFormat' });
    expect(parseArray('0-9%0')).toEqual({ key: 'job.arrayThrottle' });
    expect(parseArray(`0-${MAX_ARRAY_TASKS}`)).toEqual({ key: 'job.arrayTooMany', params: { max: MAX_ARRAY_TASKS } });
    expect(parseArray('0-100000')).toEqual({ key: 'job.arrayIndexTooHigh', params: { max: 99_999 } });
    expect(parseArray('0-9,5-20')).toEqual({ key: 'job.arrayOverlap' });
    expect(parseArray('10,2')).toEqual({ key: 'job.arrayOverlap' });
  });
});
