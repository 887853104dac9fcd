// Utilisation per partition and day: one line per partition, with axes and a legend.
// Plain SVG rendered on the server; lines differ by colour and by dash pattern, and a visually
// hidden table carries the same figures for screen readers.

export interface UtilisationSeries {
  id: string;
  name: string;
  /** Average over the range, already formatted. */
  average: string;
  points: { day: string; utilisation: number }[];
}

export interface UtilisationChartProps {
  series: UtilisationSeries[];
  formatDay: (day: string) => string;
  formatPercent: (fraction: number) => string;
  labels: { title: string; description: string; day: string; axis: string; empty: string };
}

const W = 760;
const H = 280;
const PAD = { top: 16, right: 20, bottom: 40, left: 56 };
export const SERIES_STYLES = [
  { stroke: 'stroke-indigo-600', swatch: 'bg-indigo-600', dash: undefined },
  { stroke: 'stroke-emerald-600', swatch: 'bg-emerald-600', dash: '8 4' },
  { stroke: 'stroke-amber-500', swatch: 'bg-amber-500', dash: '2 3' },
  { stroke: 'stroke-rose-600', swatch: 'bg-rose-600', dash: '10 3 2 3' },
  { stroke: 'stroke-sky-600', swatch: 'bg-sky-600', dash: '4 4' },
  { stroke: 'stroke-violet-600', swatch: 'bg-violet-600', dash: '12 6' },
] as const;

export function UtilisationChart({ series, formatDay, formatPercent, labels }: UtilisationChartProps) {
  const days = series[0]?.points.map((p) => p.day) ?? [];
  if (series.length === 0 || days.length === 0) return <p className="text-sm text-slate-500">{labels.empty}</p>;
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const peak = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.utilisation)));
  const top = Math.ceil(peak * 4) / 4;
  const x = (i: number) => PAD.left + (days.length <= 1 ? innerW / 2 : (i * innerW) / (days.length - 1));
  const y = (v: number) => PAD.top + innerH - (v / top) * innerH;
  const ticks = Array.from({ length: Math.round(top * 4) + 1 }, (_, i) => i / 4).filter((_, i, all) => all.length <= 9 || i % 2 === 0);
  const labelEvery = Math.max(1, Math.ceil(days.length / 7));
  return (
    <figure>
      <svg viewBox={`0 0 ${W} ${H}`} className="h-auto w-full" role="img" aria-label={`${labels.title}. ${labels.description}`}>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} className={t === 1 ? 'stroke-slate-400' : 'stroke-slate-200'} strokeDasharray={t === 1 ? '4 3' : undefined} />
            <text x={PAD.left - 6} y={y(t) + 4} textAnchor="end" className="fill-slate-500 text-[10px]">
              {formatPercent(t)}
            </text>
          </g>
        ))}
        <line x1={PAD.left} x2={PAD.left} y1={PAD.top} y2={PAD.top + innerH} className="stroke-slate-400" />
        <line x1={PAD.left} x2={W - PAD.right} y1={PAD.top + innerH} y2={PAD.top + innerH} className="stroke-slate-400" />
        <text x={12} y={PAD.top + innerH / 2} transform={`rotate(-90 12 ${PAD.top + innerH / 2})`} textAnchor="middle" className="fill-slate-600 text-[10px]">
          {labels.axis}
        </text>
        {days.map((day, i) =>
          i % labelEvery === 0 || i === days.length - 1 ? (
            <g key={day}>
              <line x1={x(i)} x2={x(i)} y1={PAD.top + innerH} y2={PAD.top + innerH + 4} className="stroke-slate-400" />
              <text x={x(i)} y={PAD.top + innerH + 16} textAnchor="middle" className="fill-slate-500 text-[10px]">
                {formatDay(day)}
              </text>
            </g>
          ) : null,
        )}
        <text x={PAD.left + innerW / 2} y={H - 4} textAnchor="middle" className="fill-slate-600 text-[10px]">
          {labels.day}
        </text>
        {series.map((s, si) => {
          const style = SERIES_STYLES[si % SERIES_STYLES.length]!;
          const d = s.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(p.utilisation).toFixed(1)}`).join(' ');
          return (
            <g key={s.id}>
              <path d={d} fill="none" className={style.stroke} strokeWidth={2} strokeDasharray={style.dash} strokeLinejoin="round" />
              {s.points.length === 1 && <circle cx={x(0)} cy={y(s.points[0]!.utilisation)} r={3} className={`${style.stroke} fill-white`} strokeWidth={2} />}
            </g>
          );
        })}
      </svg>
      <figcaption className="mt-2 flex flex-wrap gap-4 text-xs text-slate-700">
        {series.map((s, si) => {
          const style = SERIES_STYLES[si % SERIES_STYLES.length]!;
          return (
            <span key={s.id} className="flex items-center gap-1.5">
              <svg width="24" height="8" aria-hidden>
                <line x1="0" x2="24" y1="4" y2="4" className={style.stroke} strokeWidth={2} strokeDasharray={style.dash} />
              </svg>
              <span>
                <span className="font-medium">{s.id}</span> {s.name} · {s.average}
              </span>
            </span>
          );
        })}
      </figcaption>
      <table className="sr-only">
        <caption>{labels.title}</caption>
        <thead>
          <tr>
            <th scope="col">{labels.day}</th>
            {series.map((s) => (
              <th key={s.id} scope="col">
                {s.id}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {days.map((day, i) => (
            <tr key={day}>
              <th scope="row">{formatDay(day)}</th>
              {series.map((s) => (
                <td key={s.id}>{formatPercent(s.points[i]!.utilisation)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
