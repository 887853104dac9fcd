// Axis ticks at round numbers (1, 2, 2.5 or 5 times a power of ten) for the portal's charts. Pure.

export interface Ticks {
  /** The step between ticks. */
  step: number;
  /** The axis's top: the first tick at or above the largest value. */
  top: number;
  /** 0, step, 2 × step … top. */
  ticks: number[];
}

const STEPS = [1, 2, 2.5, 5, 10];

/** niceTicks picks round ticks from 0 to at least `max`, about `count` steps; 0 to 1 when there is nothing to show. */
export function niceTicks(max: number, count = 5): Ticks {
  if (!(max > 0) || !Number.isFinite(max)) return { step: 1, top: 1, ticks: [0, 1] };
  const raw = max / Math.max(1, count);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = STEPS.find((s) => s * magnitude >= raw * (1 - 1e-9))! * magnitude;
  const n = Math.ceil(max / step - 1e-9);
  // toPrecision: 3 × 0.1 is 0.30000000000000004 in binary floating point.
  const round = (v: number) => Number(v.toPrecision(12));
  return { step: round(step), top: round(n * step), ticks: Array.from({ length: n + 1 }, (_, i) => round(i * step)) };
}
