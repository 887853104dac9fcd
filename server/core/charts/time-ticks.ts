// Time-axis ticks at round times (quarter hours, hours, or 2, 3, 4, 6, 12, 24 hours, counted in UTC) for the portal's charts. Pure.

const MINUTE_MS = 60_000;
const STEPS_MS = [15, 30, 60, 120, 180, 240, 360, 720, 1440].map((m) => m * MINUTE_MS);

/** timeTicks picks at most about `count` round instants (ms) from `fromMs` to `toMs`, both included when round; none for an empty span. */
export function timeTicks(fromMs: number, toMs: number, count = 6): number[] {
  if (!(toMs > fromMs)) return [];
  const step = STEPS_MS.find((s) => (toMs - fromMs) / s <= count) ?? STEPS_MS[STEPS_MS.length - 1]!;
  const ticks: number[] = [];
  for (let t = Math.ceil(fromMs / step) * step; t <= toMs; t += step) ticks.push(t);
  return ticks;
}
