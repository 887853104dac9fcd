// Burn-down of an allocation: daily usage as bars, cumulative use as a line against the budget.
// Plain SVG rendered on the server; a visually hidden table carries the same figures for screen readers.

export interface BurnDownChartProps {
  days: { day: string; amount: number }[];
  granted: number;
  /** Formats an amount in the allocation's unit. */
  format: (amount: number) => string;
  formatDay: (day: string) => string;
  labels: { title: string; daily: string; cumulative: string; budget: string; day: string };
}

const W = 720;
const H = 240;
const PAD = { top: 16, right: 16, bottom: 28, left: 64 };

export function BurnDownChart({ days, granted, format, formatDay, labels }: BurnDownChartProps) {
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  let running = 0;
  const cumulative = days.map((d) => (running += d.amount));
  const maxCum = Math.max(granted, running, 1);
  const maxDaily = Math.max(...days.map((d) => d.amount), 1);
  const x = (i: number) => PAD.left + (days.length <= 1 ? innerW / 2 : (i * innerW) / (days.length - 1));
  const yCum = (v: number) => PAD.top + innerH - (v / maxCum) * innerH;
  const yDaily = (v: number) => (v / maxDaily) * innerH * 0.6;
  const barW = Math.max(1, Math.min(18, innerW / Math.max(days.length, 1) - 2));
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * maxCum);
  const line = cumulative.map((v, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${yCum(v).toFixed(1)}`).join(' ');
  const labelEvery = Math.max(1, Math.ceil(days.length / 6));
  return (
    <figure>
      <svg viewBox={`0 0 ${W} ${H}`} className="h-auto w-full" role="img" aria-label={`${labels.title}: ${format(running)} / ${format(granted)}`}>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={W - PAD.right} y1={yCum(t)} y2={yCum(t)} className="stroke-slate-200" />
            <text x={PAD.left - 6} y={yCum(t) + 4} textAnchor="end" className="fill-slate-500 text-[10px]">
              {format(t)}
            </text>
          </g>
        ))}
        {days.map((d, i) => (
          <rect key={d.day} x={x(i) - barW / 2} y={PAD.top + innerH - yDaily(d.amount)} width={barW} height={yDaily(d.amount)} className="fill-indigo-200">
            <title>{`${formatDay(d.day)}: ${format(d.amount)}`}</title>
          </rect>
        ))}
        <line x1={PAD.left} x2={W - PAD.right} y1={yCum(granted)} y2={yCum(granted)} className="stroke-red-400" strokeDasharray="6 4" />
        <text x={W - PAD.right} y={yCum(granted) - 4} textAnchor="end" className="fill-red-600 text-[10px]">
          {labels.budget} {format(granted)}
        </text>
        {days.length > 0 && <path d={line} fill="none" className="stroke-indigo-700" strokeWidth={2} />}
        {days.map((d, i) =>
          i % labelEvery === 0 ? (
            <text key={d.day} x={x(i)} y={H - 8} textAnchor="middle" className="fill-slate-500 text-[10px]">
              {formatDay(d.day)}
            </text>
          ) : null,
        )}
      </svg>
      <figcaption className="mt-2 flex flex-wrap gap-4 text-xs text-slate-600">
        <span className="flex items-center gap-1">
          <span className="inline-block h-2 w-3 bg-indigo-200" aria-hidden /> {labels.daily}
        </span>
        <span className="flex items-center gap-1">
          <span className="inline-block h-0.5 w-3 bg-indigo-700" aria-hidden /> {labels.cumulative}
        </span>
        <span className="flex items-center gap-1">
          <span className="inline-block h-0.5 w-3 border-t border-dashed border-red-400" aria-hidden /> {labels.budget}
        </span>
      </figcaption>
      <table className="sr-only">
        <caption>{labels.title}</caption>
        <thead>
          <tr>
            <th>{labels.day}</th>
            <th>{labels.daily}</th>
            <th>{labels.cumulative}</th>
          </tr>
        </thead>
        <tbody>
          {days.map((d, i) => (
            <tr key={d.day}>
              <td>{formatDay(d.day)}</td>
              <td>{format(d.amount)}</td>
              <td>{format(cumulative[i]!)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

/** A thin bar showing used, reserved and remaining parts of a budget. */
export function BudgetBar({ granted, charged, reserved, label }: { granted: number; charged: number; reserved: number; label: string }) {
  const pct = (v: number) => `${Math.min(100, Math.max(0, granted > 0 ? (v / granted) * 100 : 0)).toFixed(1)}%`;
  return (
    <div className="flex h-2.5 w-full overflow-hidden rounded-full bg-slate-100" role="img" aria-label={label}>
      <div className="bg-indigo-600" style={{ width: pct(charged) }} />
      <div className="bg-amber-400" style={{ width: pct(reserved) }} />
    </div>
  );
}
