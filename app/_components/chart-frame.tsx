// The frame of the portal's charts: a plot that stretches to its container's width, with axis
// labels and tick labels in HTML around it, so text keeps its size on a phone and on a wide screen
// (an SVG scaled with its viewBox shrinks its text with it). The plot is an SVG drawn in a
// 1000 × 1000 box stretched to the frame (preserveAspectRatio none); lines keep their width with
// vector-effect non-scaling-stroke.
import type { ReactNode } from 'react';

/** A tick: its position along the axis from 0 (bottom or left) to 1 (top or right), and its label. */
export interface AxisTick {
  pos: number;
  label: string;
  /** Hidden on narrow screens (every other day label), so labels never overlap on a phone. */
  wideOnly?: boolean;
}

export const PLOT = 1000;

/** plotY is the SVG y of a value on an axis from 0 to top. */
export function plotY(value: number, top: number): number {
  return PLOT - (top > 0 ? (value / top) * PLOT : 0);
}

export function ChartFrame({ yTicks, yLabel, xTicks, xLabel, height = 'h-56', children }: { yTicks: AxisTick[]; yLabel: string; xTicks?: AxisTick[]; xLabel?: string; height?: string; children: ReactNode }) {
  return (
    <div className="pt-2 text-xs text-slate-600">
      <div className="flex">
        <div className="flex w-5 shrink-0 items-center justify-center">
          <span className="rotate-180 whitespace-nowrap font-medium [writing-mode:vertical-rl]">{yLabel}</span>
        </div>
        <div className={`relative w-12 shrink-0 ${height}`} aria-hidden>
          {yTicks.map((t) => (
            <span key={t.pos} className="absolute right-1.5 translate-y-1/2 whitespace-nowrap tabular-nums" style={{ bottom: `${t.pos * 100}%` }}>
              {t.label}
            </span>
          ))}
        </div>
        <div className={`relative min-w-0 flex-1 border-b border-l border-slate-400 ${height}`}>
          {yTicks.map((t) => (t.pos > 0 ? <div key={t.pos} className="absolute inset-x-0 border-t border-slate-200" style={{ bottom: `${t.pos * 100}%` }} aria-hidden /> : null))}
          {children}
        </div>
      </div>
      {xTicks && (
        <div className="flex" aria-hidden>
          <div className="w-[4.25rem] shrink-0" />
          <div className="relative h-5 min-w-0 flex-1">
            {xTicks.map((t) => (
              <span
                key={`${t.pos}-${t.label}`}
                className={`absolute top-1 whitespace-nowrap ${t.pos < 0.08 ? '' : t.pos > 0.92 ? '-translate-x-full' : '-translate-x-1/2'} ${t.wideOnly ? 'max-sm:hidden' : ''}`}
                style={{ left: `${t.pos * 100}%` }}
              >
                {t.label}
              </span>
            ))}
          </div>
        </div>
      )}
      {xLabel && <p className="mt-1 pl-[4.25rem] text-center font-medium">{xLabel}</p>}
    </div>
  );
}

/**
 * dayTicks labels about `count` of a run of days, evenly spaced, each at the centre of its band
 * (bars) or on its point (lines); every other label is for wide screens only.
 */
export function dayTicks(days: string[], formatDay: (day: string) => string, layout: 'bands' | 'points', count = 6): AxisTick[] {
  if (days.length === 0) return [];
  const every = Math.max(1, Math.ceil(days.length / count));
  const pos = (i: number) => (layout === 'bands' ? (i + 0.5) / days.length : days.length === 1 ? 0.5 : i / (days.length - 1));
  const shown = days.map((day, i) => ({ day, i })).filter(({ i }) => i % every === 0);
  return shown.map(({ day, i }, n) => ({ pos: pos(i), label: formatDay(day), wideOnly: n % 2 === 1 }));
}

/** LegendItem is one entry of a chart's legend: a swatch (its size and colour classes) and what it stands for. */
export function LegendItem({ swatch, children }: { swatch: string; children: ReactNode }) {
  return (
    <span className="flex items-center gap-1">
      <span className={`inline-block ${swatch}`} aria-hidden /> {children}
    </span>
  );
}

/**
 * ChartTable is a chart's figures as a table for screen readers: the first cell of each row is its
 * header. In a clipped box, because a table grows to its content and would widen the page on a phone.
 */
export function ChartTable({ caption, columns, rows }: { caption: string; columns: string[]; rows: { key: string; cells: string[] }[] }) {
  return (
    <div className="sr-only">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key}>
              <th scope="row">{r.cells[0]}</th>
              {r.cells.slice(1).map((cell, i) => (
                <td key={i}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
