// Queue waits in buckets, for the centre dashboard's percentiles at any size (issue #30): a range's waits
// are counted per bucket in `centre_days.wait_counts` as jobs settle, and a percentile is read from the
// counts instead of sorting millions of jobs. A wait under 128 s is its own bucket (exact); above, each
// doubling is cut into 32 buckets, so a bucket's middle — the value a percentile reports — is within
// 1.6 % of every wait in it. The SQL function portal_wait_bucket (drizzle/0061) is the same rule; keep
// the two in step (services/usage/centre.integration.test.ts compares them).

/** Waits below this many seconds are exact. */
const EXACT_BELOW = 128;
const EXACT_BITS = 7; // 2^7 = EXACT_BELOW
/** Buckets per doubling above EXACT_BELOW, as a power of two (2^5 = 32). */
const SUB_BITS = 5;
/** Waits are clamped here (68 years): the rule works on 31-bit integers. */
const MAX_WAIT = 2 ** 31 - 1;

/** waitBucket is the bucket of a wait in seconds (negative waits count as 0). */
export function waitBucket(seconds: number): number {
  const w = Math.min(MAX_WAIT, Math.max(0, Math.floor(seconds)));
  if (w < EXACT_BELOW) return w;
  const e = 31 - Math.clz32(w); // 2^e ≤ w < 2^(e+1)
  return EXACT_BELOW + (e - EXACT_BITS) * 2 ** SUB_BITS + Math.floor((w - 2 ** e) / 2 ** (e - SUB_BITS));
}

/** bucketValue is what a bucket reports: its wait when exact, else the middle of its seconds (rounded down). */
export function bucketValue(bucket: number): number {
  if (bucket < EXACT_BELOW) return bucket;
  const e = EXACT_BITS + Math.floor((bucket - EXACT_BELOW) / 2 ** SUB_BITS);
  const width = 2 ** (e - SUB_BITS);
  return 2 ** e + ((bucket - EXACT_BELOW) % 2 ** SUB_BITS) * width + Math.floor(width / 2);
}

/** addCounts adds bucket counts (`wait_counts` rows, or waits bucketed here) into `into`. */
export function addCounts(into: Map<number, number>, counts: Record<string, number> | Iterable<[number, number]>): void {
  const entries: Iterable<[string | number, number]> = Symbol.iterator in counts ? counts : Object.entries(counts);
  for (const [bucket, n] of entries) into.set(Number(bucket), (into.get(Number(bucket)) ?? 0) + Number(n));
}

/**
 * percentileOfCounts is Postgres's percentile_disc over bucketed waits: the value of the first bucket whose
 * running count reaches ceil(p × n) (the same float product Postgres takes); null without waits.
 */
export function percentileOfCounts(counts: ReadonlyMap<number, number>, p: number): number | null {
  let n = 0;
  for (const c of counts.values()) n += c;
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil(p * n));
  let seen = 0;
  for (const bucket of [...counts.keys()].sort((a, b) => a - b)) {
    seen += counts.get(bucket)!;
    if (seen >= rank) return bucketValue(bucket);
  }
  return bucketValue(Math.max(...counts.keys()));
}
