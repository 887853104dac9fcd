// Horizontal bars of the biggest tenants by one figure, rendered on the server in HTML: each
// tenant's full name above its bar (it wraps, never shrinks with the chart), the value beside it, and
// a value axis with round ticks and its unit under the bars. A visually hidden table carries the same figures.
import { ChartTable } from '~/app/_components/chart-frame';
import { niceTicks } from '~/server/core/charts/nice-ticks';

export interface TenantBarsProps {
  rows: { id: string; name: string; value: number; label: string }[];
  labels: { title: string; tenant: string; value: string; empty: string; axis: string };
  /** Bars' values in the axis's unit (e.g. GPU-seconds → GPU-hours: 1 / 3600). */
  toAxisUnit: (value: number) => number;
  formatTick: (value: number) => string;
  /** Tailwind background class of the bars. */
  fill?: string;
}

export function TenantBars({ rows, labels, toAxisUnit, formatTick, fill = 'bg-indigo-500' }: TenantBarsProps) {
  if (rows.length === 0) return <p className="text-sm text-slate-500">{labels.empty}</p>;
  const { top, ticks } = niceTicks(Math.max(...rows.map((r) => toAxisUnit(r.value))), 4);
  const width = (value: number) => `${Math.min(100, (toAxisUnit(value) / top) * 100)}%`;
  return (
    <figure>
      <ol className="space-y-2.5" aria-hidden>
        {rows.map((r) => (
          <li key={r.id} className="text-sm">
            <div className="flex items-baseline justify-between gap-3">
              <span className="min-w-0 break-words text-slate-800">{r.name}</span>
              <span className="shrink-0 tabular-nums text-slate-600">{r.label}</span>
            </div>
            <div className="relative mt-1 h-3 rounded-sm bg-slate-100">
              <div className={`absolute inset-y-0 left-0 rounded-sm ${fill}`} style={{ width: width(r.value) }} title={`${r.name}: ${r.label}`} />
            </div>
          </li>
        ))}
      </ol>
      <div className="relative mt-1 h-5 border-t border-slate-400 text-xs text-slate-600" aria-hidden>
        {ticks.map((t) => {
          const pos = t / top;
          return (
            <span key={t} className={`absolute top-1 whitespace-nowrap tabular-nums ${pos < 0.08 ? '' : pos > 0.92 ? '-translate-x-full' : '-translate-x-1/2'}`} style={{ left: `${pos * 100}%` }}>
              {formatTick(t)}
            </span>
          );
        })}
      </div>
      <figcaption className="mt-1 text-center text-xs font-medium text-slate-600" aria-hidden>
        {labels.axis}
      </figcaption>
      <ChartTable caption={labels.title} columns={[labels.tenant, labels.value]} rows={rows.map((r) => ({ key: r.id, cells: [r.name, r.label] }))} />
    </figure>
  );
}
