/**
 * Seeded pseudo-random numbers (mulberry32). The whole generator state is one
 * unsigned 32-bit integer, so it serialises to JSON and restores exactly.
 */

/** Generator state; mutate only through the functions below. */
export interface RngState {
  state: number;
}

/** createRng makes a generator state from an integer seed. */
export function createRng(seed: number): RngState {
  return { state: seed >>> 0 };
}

/** nextUint32 advances the generator and returns an unsigned 32-bit integer. */
export function nextUint32(rng: RngState): number {
  rng.state = (rng.state + 0x6d2b79f5) >>> 0;
  let t = rng.state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
}

/** nextFloat returns a uniform number in [0, 1). */
export function nextFloat(rng: RngState): number {
  return nextUint32(rng) / 4294967296;
}

/** nextInt returns a uniform integer in [minInclusive, maxInclusive]. */
export function nextInt(rng: RngState, minInclusive: number, maxInclusive: number): number {
  return minInclusive + Math.floor(nextFloat(rng) * (maxInclusive - minInclusive + 1));
}

/** exponentialSeconds draws a whole number of seconds (at least 1) from an exponential distribution with the given mean. */
export function exponentialSeconds(rng: RngState, meanSeconds: number): number {
  const u = nextFloat(rng);
  return Math.max(1, Math.ceil(-meanSeconds * Math.log(1 - u)));
}
