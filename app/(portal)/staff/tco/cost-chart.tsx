// Cost per delivered GPU-hour against utilisation (10–100 %) for one partition, with the tariffs as
// horizontal lines and the measured and what-if utilisations as vertical ones. Rendered on the server
// in the house ChartFrame; lines differ by colour and dash, and a visually hidden table carries the figures.
import { ChartFrame, ChartTable, PLOT, plotY } from '~/app/_components/chart-frame';
import { niceTicks } from '~/server/core/charts/nice-ticks';

export interface CostChartProps {
  curve: { utilisationBp: number; totalCents: number }[];
  tariffs: { kind: string; label: string; centsPerGpuHour: number }[];
  markers: { label: string; utilisationBp: number }[];
  formatEuros: (cents: number) => string;
  formatTick: (euros: number) => string;
  formatBp: (bp: number) => string;
  labels: { title: string; description: string; axisCost: string; axisUtilisation: string; cost: string; clipped: string };
}

const FIRST_BP = 1000;
const LAST_BP = 10_000;
const TARIFF_STYLES = [
  { stroke: 'stroke-emerald-600', dash: '8 4' },
  { stroke: 'stroke-amber-500', dash: '10 3 2 3' },
] as const;

export function CostChart({ curve, tariffs, markers, formatEuros, formatTick, formatBp, labels }: CostChartProps) {
  const maxTariff = Math.max(0, ...tariffs.map((t) => t.centsPerGpuHour));
  const maxCost = Math.max(0, ...curve.map((p) => p.totalCents));
  // Low utilisation makes the cost soar; the axis stops at 2.5 × the higher tariff (or the whole curve if lower).
  const ceilingCents = Math.min(maxCost, Math.max(2.5 * maxTariff, (curve.at(-1)?.totalCents ?? 0) * 1.5));
  const clipped = maxCost > ceilingCents;
  const { top, ticks } = niceTicks(Math.max(ceilingCents, maxTariff) / 100, 5);
  const x = (bp: number) => ((bp - FIRST_BP) / (LAST_BP - FIRST_BP)) * PLOT;
  const y = (cents: number) => Math.max(0, plotY(cents / 100, top));
  const path = curve.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.utilisationBp).toFixed(1)},${y(p.totalCents).toFixed(1)}`).join(' ');
  const xTicks = [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10_000].map((bp, i) => ({ pos: (bp - FIRST_BP) / (LAST_BP - FIRST_BP), label: formatBp(bp), wideOnly: i % 2 === 1 }));
  return (
    <figure>
      <div role="img" aria-label={`${labels.title}. ${labels.description}`}>
        <ChartFrame yTicks={ticks.map((t) => ({ pos: t / top, label: formatTick(t) }))} yLabel={labels.axisCost} xTicks={xTicks} xLabel={labels.axisUtilisation} height="h-56">
          <svg viewBox={`0 0 ${PLOT} ${PLOT}`} preserveAspectRatio="none" className="absolute inset-0 h-full w-full overflow-hidden" aria-hidden>
            {markers
              .filter((m) => m.utilisationBp >= FIRST_BP && m.utilisationBp <= LAST_BP)
              .map((m) => (
                <line key={m.label} x1={x(m.utilisationBp)} x2={x(m.utilisationBp)} y1={0} y2={PLOT} className="stroke-slate-400" strokeWidth={1} strokeDasharray="2 3" vectorEffect="non-scaling-stroke" />
              ))}
            {tariffs.map((t, i) => (
              <line key={t.kind} x1={0} x2={PLOT} y1={y(t.centsPerGpuHour)} y2={y(t.centsPerGpuHour)} className={TARIFF_STYLES[i % TARIFF_STYLES.length]!.stroke} strokeWidth={2} strokeDasharray={TARIFF_STYLES[i % TARIFF_STYLES.length]!.dash} vectorEffect="non-scaling-stroke" />
            ))}
            <path d={path} fill="none" className="stroke-indigo-600" strokeWidth={2} strokeLinejoin="round" strokeLinecap="round" vectorEffect="non-scaling-stroke" />
          </svg>
        </ChartFrame>
      </div>
      <figcaption className="mt-2 flex flex-wrap gap-4 text-xs text-slate-700">
        <span className="flex items-center gap-1.5">
          <svg width="24" height="8" aria-hidden>
            <line x1="0" x2="24" y1="4" y2="4" className="stroke-indigo-600" strokeWidth={2} />
          </svg>
          {labels.cost}
        </span>
        {tariffs.map((t, i) => (
          <span key={t.kind} className="flex items-center gap-1.5">
            <svg width="24" height="8" aria-hidden>
              <line x1="0" x2="24" y1="4" y2="4" className={TARIFF_STYLES[i % TARIFF_STYLES.length]!.stroke} strokeWidth={2} strokeDasharray={TARIFF_STYLES[i % TARIFF_STYLES.length]!.dash} />
            </svg>
            {t.label} · {formatEuros(t.centsPerGpuHour)}
          </span>
        ))}
        {markers.map((m) => (
          <span key={m.label} className="flex items-center gap-1.5">
            <svg width="8" height="12" aria-hidden>
              <line x1="4" x2="4" y1="0" y2="12" className="stroke-slate-400" strokeWidth={1} strokeDasharray="2 3" />
            </svg>
            {m.label} · {formatBp(m.utilisationBp)}
          </span>
        ))}
      </figcaption>
      {clipped && <p className="mt-1 text-xs text-slate-500">{labels.clipped}</p>}
      <ChartTable caption={labels.title} columns={[labels.axisUtilisation, labels.cost]} rows={curve.map((p) => ({ key: String(p.utilisationBp), cells: [formatBp(p.utilisationBp), formatEuros(p.totalCents)] }))} />
    </figure>
  );
}
