import { describe, expect, it } from 'vitest';
import { swfLine } from './fixtures';
import { replayMetrics } from './metrics';
import { replayTrace, type ReplayPolicy } from './replay';
import { parseSwf } from './swf';
import { repeatTrace, traceFromJobs } from './trace';

type J = [submit: number, runtime: number, estimate: number, processors: number];

function starts(jobs: J[], machine: number, policy: ReplayPolicy): number[] {
  const trace = traceFromJobs(
    jobs.map(([submitSeconds, runtimeSeconds, estimateSeconds, processors]) => ({ submitSeconds, runtimeSeconds, estimateSeconds, processors })),
    machine,
  );
  return Array.from(replayTrace(trace, policy));
}

// Machine of 10 processors throughout. Jobs: [submit, runtime, estimate, processors].
const cases: { name: string; jobs: J[]; fifo: number[]; easy: number[] }[] = [
  {
    // A runs 0–100 on 6. B (6) waits for A. C (2, ends 30 ≤ shadow 100) backfills at 10 under EASY;
    // under FIFO it waits behind B and starts with it at 100 (6 + 2 ≤ 10).
    name: '(a) a short job backfills',
    jobs: [[0, 100, 100, 6], [0, 50, 50, 6], [10, 20, 20, 2]],
    fifo: [0, 100, 100],
    easy: [0, 100, 10],
  },
  {
    // B needs 8 at shadow 100 → extra = 10 − 8 = 2. C (4) fits now (4 free) but ends at 210 > 100 and 4 > extra:
    // starting it would delay B, so it waits; at 100 B takes 8, C starts when B ends at 150.
    name: '(b) backfilling would delay the head job',
    jobs: [[0, 100, 100, 6], [0, 50, 50, 8], [10, 200, 200, 4]],
    fifo: [0, 100, 150],
    easy: [0, 100, 150],
  },
  {
    // Same head (B needs 8 at 100, extra 2). C (2) ends late but uses only the 2 extra processors → starts at 10.
    // D (2) also fits now (2 free) but extra is used up → waits; at 100 B takes the 8 freed, D starts at 150.
    // FIFO: at 100 B takes 8, C the last 2; D waits for B's end at 150.
    name: '(c) the extra processors',
    jobs: [[0, 100, 100, 6], [0, 50, 50, 8], [10, 200, 200, 2], [10, 200, 200, 2]],
    fifo: [0, 100, 100, 150],
    easy: [0, 100, 10, 150],
  },
  {
    // Ends are processed before arrivals at the same instant: B starts at 100, not later.
    name: 'ends before arrivals in one instant',
    jobs: [[0, 100, 100, 10], [100, 10, 10, 10]],
    fifo: [0, 100],
    easy: [0, 100],
  },
  {
    // A was estimated at 50 but runs to 100. At 60, A counts as ending now: shadow 60, extra 10 − 8 = 2,
    // so C (2, ends 70 > 60) starts on the extra processors. B starts when A really ends at 100.
    name: 'a job that outlived its estimate counts as ending now',
    jobs: [[0, 100, 50, 6], [0, 50, 50, 8], [60, 10, 10, 2]],
    fifo: [0, 100, 100],
    easy: [0, 100, 60],
  },
  {
    // FIFO stops at the first job that does not fit even if later ones would.
    name: 'FIFO stops at the first misfit',
    jobs: [[0, 100, 100, 8], [0, 10, 10, 4], [0, 10, 10, 1]],
    fifo: [0, 100, 100],
    easy: [0, 100, 0],
  },
];

describe('replayTrace', () => {
  for (const c of cases) {
    it(`FIFO: ${c.name}`, () => expect(starts(c.jobs, 10, 'fifo')).toEqual(c.fifo));
    it(`EASY: ${c.name}`, () => expect(starts(c.jobs, 10, 'easy')).toEqual(c.easy));
  }

  it('is deterministic and independent of repetition', () => {
    const jobs: J[] = [[0, 100, 100, 6], [0, 50, 50, 8], [10, 200, 200, 2], [10, 200, 200, 2]];
    expect(starts(jobs, 10, 'easy')).toEqual(starts(jobs, 10, 'easy'));
  });
});

describe('replay metrics', () => {
  const swf = [
    '; MaxProcs: 10',
    swfLine([1, 0, 0, 100, 6, -1, -1, 6, 100]),
    swfLine([2, 0, 0, 50, 6, -1, -1, 6, 50]),
    swfLine([3, 10, 0, 20, 2, -1, -1, 2, 20]),
  ].join('\n');

  it('on a tiny hand-made SWF (EASY)', () => {
    const { trace } = parseSwf(swf);
    const m = replayMetrics(trace, replayTrace(trace, 'easy'));
    // Starts 0, 100, 10 → waits 0, 100, 0. Ends 100, 150, 30 → makespan 150 − 0.
    // Bounded slowdowns: 100/100 = 1, (100 + 50)/50 = 3, 20/20 = 1.
    // Utilisation: (6·100 + 6·50 + 2·20) / (10 · 150) = 940 / 1500.
    expect(m.jobs).toBe(3);
    expect(m.makespanSeconds).toBe(150);
    expect(m.avgWaitSeconds).toBeCloseTo(100 / 3, 10);
    expect(m.avgBoundedSlowdown).toBeCloseTo(5 / 3, 10);
    expect(m.utilization).toBeCloseTo(940 / 1500, 10);
  });

  it('on a tiny hand-made SWF (FIFO)', () => {
    const { trace } = parseSwf(swf);
    const m = replayMetrics(trace, replayTrace(trace, 'fifo'));
    // Starts 0, 100, 100 → waits 0, 100, 90; slowdowns 1, 3, (90 + 20)/20 = 5.5.
    expect(m.avgWaitSeconds).toBeCloseTo(190 / 3, 10);
    expect(m.avgBoundedSlowdown).toBeCloseTo(9.5 / 3, 10);
    expect(m.makespanSeconds).toBe(150);
  });

  it('bounds the slowdown of short jobs at 10 s', () => {
    const trace = traceFromJobs([{ submitSeconds: 0, runtimeSeconds: 5, estimateSeconds: 5, processors: 1 }], 1);
    // Wait 15, run 5: (15 + 5) / max(5, 10) = 2.
    expect(replayMetrics(trace, Float64Array.from([15])).avgBoundedSlowdown).toBe(2);
    // No wait: 5 / 10 = 0.5 → bounded below by 1.
    expect(replayMetrics(trace, Float64Array.from([0])).avgBoundedSlowdown).toBe(1);
  });
});

describe('repeatTrace', () => {
  it('shifts each copy by the submit span + 1 s', () => {
    const t = traceFromJobs(
      [
        { submitSeconds: 10, runtimeSeconds: 5, estimateSeconds: 5, processors: 1 },
        { submitSeconds: 30, runtimeSeconds: 5, estimateSeconds: 5, processors: 2 },
      ],
      4,
    );
    const r = repeatTrace(t, 3);
    expect(Array.from(r.submitSeconds)).toEqual([10, 30, 31, 51, 52, 72]);
    expect(Array.from(r.processors)).toEqual([1, 2, 1, 2, 1, 2]);
  });
});
