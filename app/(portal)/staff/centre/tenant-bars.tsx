// Horizontal bars of the biggest tenants by one figure. Plain SVG rendered on the server, with a
// visually hidden table for screen readers.

export interface TenantBarsProps {
  rows: { id: string; name: string; value: number; label: string }[];
  labels: { title: string; tenant: string; value: string; empty: string };
  /** Tailwind fill class of the bars. */
  fill?: string;
}

const W = 760;
const ROW = 26;
const LABEL_W = 220;
const VALUE_W = 120;

function shorten(name: string, max = 32): string {
  return name.length > max ? `${name.slice(0, max - 1)}…` : name;
}

export function TenantBars({ rows, labels, fill = 'fill-indigo-500' }: TenantBarsProps) {
  if (rows.length === 0) return <p className="text-sm text-slate-500">{labels.empty}</p>;
  const max = Math.max(1, ...rows.map((r) => r.value));
  const barW = W - LABEL_W - VALUE_W;
  const H = rows.length * ROW + 8;
  return (
    <figure>
      <svg viewBox={`0 0 ${W} ${H}`} className="h-auto w-full" role="img" aria-label={`${labels.title}: ${rows.map((r) => `${r.name} ${r.label}`).join('; ')}`}>
        <line x1={LABEL_W} x2={LABEL_W} y1={0} y2={H - 4} className="stroke-slate-400" />
        {rows.map((r, i) => {
          const top = 4 + i * ROW;
          const width = Math.max(r.value > 0 ? 1 : 0, (r.value / max) * barW);
          return (
            <g key={r.id}>
              <text x={LABEL_W - 8} y={top + ROW / 2 + 3} textAnchor="end" className="fill-slate-700 text-[11px]">
                <title>{r.name}</title>
                {shorten(r.name)}
              </text>
              <rect x={LABEL_W} y={top + 4} width={width} height={ROW - 8} rx={2} className={fill}>
                <title>{`${r.name}: ${r.label}`}</title>
              </rect>
              <text x={LABEL_W + width + 6} y={top + ROW / 2 + 3} className="fill-slate-600 text-[11px] tabular-nums">
                {r.label}
              </text>
            </g>
          );
        })}
      </svg>
      <table className="sr-only">
        <caption>{labels.title}</caption>
        <thead>
          <tr>
            <th scope="col">{labels.tenant}</th>
            <th scope="col">{labels.value}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <th scope="row">{r.name}</th>
              <td>{r.label}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
