// Small SVG charts rendered on the server, each with a visually hidden table for screen readers.

const PALETTE = ['#4f46e5', '#0891b2', '#16a34a', '#ca8a04', '#dc2626', '#9333ea', '#db2777', '#0d9488', '#65a30d', '#ea580c'];

/** colourOf picks a stable colour for the n-th series. */
export function colourOf(index: number): string {
  return PALETTE[index % PALETTE.length]!;
}

export interface StackedSeries {
  id: string;
  label: string;
  values: Map<string, number>;
}

/** StackedBars draws one bar per day, stacked by series (e.g. GPU-hours per project). */
export function StackedBars({ days, series, format, formatDay, title }: { days: string[]; series: StackedSeries[]; format: (v: number) => string; formatDay: (d: string) => string; title: string }) {
  const W = 720;
  const H = 220;
  const P = { top: 10, right: 10, bottom: 26, left: 64 };
  const totals = days.map((d) => series.reduce((s, x) => s + (x.values.get(d) ?? 0), 0));
  const max = Math.max(1, ...totals);
  const innerW = W - P.left - P.right;
  const innerH = H - P.top - P.bottom;
  const barW = Math.max(1, innerW / Math.max(1, days.length) - 2);
  const x = (i: number) => P.left + (i * innerW) / Math.max(1, days.length) + 1;
  const y = (v: number) => (v / max) * innerH;
  const labelEvery = Math.max(1, Math.ceil(days.length / 7));
  return (
    <figure>
      <svg viewBox={`0 0 ${W} ${H}`} className="h-auto w-full" role="img" aria-label={title}>
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line x1={P.left} x2={W - P.right} y1={P.top + innerH - f * innerH} y2={P.top + innerH - f * innerH} className="stroke-slate-200" />
            <text x={P.left - 6} y={P.top + innerH - f * innerH + 3} textAnchor="end" className="fill-slate-500 text-[10px]">
              {format(f * max)}
            </text>
          </g>
        ))}
        {days.map((d, i) => {
          let base = P.top + innerH;
          return (
            <g key={d}>
              {series.map((s, si) => {
                const v = s.values.get(d) ?? 0;
                if (v <= 0) return null;
                const h = y(v);
                base -= h;
                return (
                  <rect key={s.id} x={x(i)} y={base} width={barW} height={h} fill={colourOf(si)}>
                    <title>{`${formatDay(d)} · ${s.label}: ${format(v)}`}</title>
                  </rect>
                );
              })}
              {i % labelEvery === 0 && (
                <text x={x(i) + barW / 2} y={H - 8} textAnchor="middle" className="fill-slate-500 text-[10px]">
                  {formatDay(d)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption className="mt-2 flex flex-wrap gap-3 text-xs text-slate-600">
        {series.map((s, i) => (
          <span key={s.id} className="flex items-center gap-1">
            <span className="inline-block h-2.5 w-2.5 rounded-sm" style={{ background: colourOf(i) }} aria-hidden /> {s.label}
          </span>
        ))}
      </figcaption>
      <table className="sr-only">
        <caption>{title}</caption>
        <tbody>
          {days.map((d, i) => (
            <tr key={d}>
              <th scope="row">{formatDay(d)}</th>
              <td>{format(totals[i]!)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

/** HorizontalBars draws labelled bars, optionally with a second, overlaid value (e.g. heat reused within facility energy). */
export function HorizontalBars({ rows, format, title, overlayLabel }: { rows: { label: string; value: number; overlay?: number }[]; format: (v: number) => string; title: string; overlayLabel?: string }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  return (
    <figure aria-label={title}>
      <ul className="space-y-2">
        {rows.map((r, i) => (
          <li key={`${r.label}-${i}`} className="grid grid-cols-[10rem_1fr_7rem] items-center gap-3 text-sm">
            <span className="truncate" title={r.label}>
              {r.label}
            </span>
            <span className="relative h-4 rounded bg-slate-100" aria-hidden>
              <span className="absolute inset-y-0 left-0 rounded" style={{ width: `${(r.value / max) * 100}%`, background: colourOf(i) }} />
              {r.overlay !== undefined && <span className="absolute inset-y-1 left-0 rounded bg-white/60" style={{ width: `${(r.overlay / max) * 100}%` }} />}
            </span>
            <span className="text-right tabular-nums">{format(r.value)}</span>
          </li>
        ))}
      </ul>
      {overlayLabel && <figcaption className="mt-2 text-xs text-slate-500">{overlayLabel}</figcaption>}
    </figure>
  );
}
