// The e2e shards of `npm test`: every spec file runs in exactly one shard, the split follows the recorded
// times (longest first to the emptiest shard), and a filter matches only its own file.
import { describe, expect, it } from 'vitest';
import { assignShards, durationsOfReport, fileFilter, readDurations, specFiles } from './e2e-shards.mjs';

type Shard = { files: string[]; seconds: number };

describe('e2e shards', () => {
  it('puts every file in exactly one shard, balanced by time', () => {
    const durations = { 'a.spec.ts': 600, 'b.spec.ts': 500, 'c.spec.ts': 400, 'd.spec.ts': 300, 'e.spec.ts': 200, 'f.spec.ts': 100 };
    const shards = assignShards(Object.keys(durations), durations, 2) as Shard[];
    expect(shards.flatMap((s) => s.files).sort()).toEqual(Object.keys(durations));
    // LPT: a(600) → 1, b(500) → 2, c(400) → 2 (900), d(300) → 1 (900), e(200) → 1 (1100), f(100) → 2 (1000).
    expect(shards).toEqual([
      { files: ['a.spec.ts', 'd.spec.ts', 'e.spec.ts'], seconds: 1100 },
      { files: ['b.spec.ts', 'c.spec.ts', 'f.spec.ts'], seconds: 1000 },
    ]);
  });

  it("counts a file without a recorded time as the median of the others, and splits as Playwright's count would with none", () => {
    const shards = assignShards(['new.spec.ts', 'x.spec.ts', 'y.spec.ts', 'z.spec.ts'], { 'x.spec.ts': 10, 'y.spec.ts': 20, 'z.spec.ts': 30 }, 2) as Shard[];
    // new.spec.ts counts 20 s (the median): z(30) → 1, new(20) → 2, y(20) → 2, x(10) → 1.
    expect(shards.map((s) => s.seconds)).toEqual([40, 40]);
    expect(shards.flatMap((s) => s.files)).toContain('new.spec.ts');
    const none = assignShards(['a.spec.ts', 'b.spec.ts', 'c.spec.ts', 'd.spec.ts'], {}, 2) as Shard[];
    expect(none.map((s) => s.files.length)).toEqual([2, 2]);
  });

  it('covers the repository’s spec files with its recorded times, one shard or two', () => {
    const files = specFiles();
    expect(files.length).toBeGreaterThan(20);
    for (const count of [1, 2, 3]) {
      const shards = assignShards(files, readDurations(), count) as Shard[];
      expect(shards).toHaveLength(count);
      expect(shards.flatMap((s) => s.files).sort()).toEqual(files);
    }
  });

  it('filters exactly one file', () => {
    const re = new RegExp(fileFilter('jobs.spec.ts'), 'gi');
    expect(re.test('/repo/e2e/jobs.spec.ts')).toBe(true);
    re.lastIndex = 0;
    expect(re.test('/repo/e2e/my-jobs.spec.ts')).toBe(false);
    re.lastIndex = 0;
    expect(re.test('/repo/e2e/jobsXspec.ts')).toBe(false);
  });

  it('sums a report’s test times per file, retries included', () => {
    const report = {
      suites: [
        { file: 'a.spec.ts', specs: [{ file: 'a.spec.ts', tests: [{ results: [{ duration: 1500 }, { duration: 500 }] }] }], suites: [{ file: 'a.spec.ts', specs: [{ file: 'a.spec.ts', tests: [{ results: [{ duration: 1000 }] }] }] }] },
        { file: 'b.spec.ts', specs: [{ file: 'b.spec.ts', tests: [{ results: [{ duration: 250 }] }] }] },
      ],
    };
    expect(durationsOfReport(report)).toEqual({ 'a.spec.ts': 3, 'b.spec.ts': 0.3 });
  });
});
