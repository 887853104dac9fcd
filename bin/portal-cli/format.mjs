// Human output: aligned tables and figures with their units. The same renderings as the portal's
// pages (server/i18n/format.ts, English): the CLI runs on plain Node without the TypeScript build,
// so it keeps this small copy rather than importing the server's module.

const number = (maximumFractionDigits) => new Intl.NumberFormat('en-GB', { maximumFractionDigits });
const eurosFormat = new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'EUR' });

/** gpuHours renders GPU-seconds as GPU-hours, e.g. "1,234.5 GPU-h" (fewer decimals as it grows). */
export function gpuHours(gpuSeconds) {
  if (gpuSeconds === null || gpuSeconds === undefined) return '–';
  const hours = gpuSeconds / 3600;
  const digits = Math.abs(hours) >= 100 ? 0 : Math.abs(hours) >= 10 ? 1 : 2;
  return `${number(digits).format(hours)} GPU-h`;
}

/** euros renders cents as euros, e.g. "€1,234.56". */
export function euros(cents) {
  if (cents === null || cents === undefined) return '–';
  return eurosFormat.format(cents / 100);
}

/** kwh renders watt-hours as kWh to one decimal, e.g. "1,234.5 kWh". */
export function kwh(wh) {
  if (wh === null || wh === undefined) return '–';
  return `${number(1).format(wh / 1000)} kWh`;
}

/** amount renders an allocation's amount in its unit (GPU-seconds or cents). */
export function amount(unit, value) {
  return unit === 'cents' ? euros(value) : gpuHours(value);
}

/** count renders a whole number with grouping, e.g. "12,345". */
export function count(value) {
  return value === null || value === undefined ? '–' : number(0).format(value);
}

/** bytes renders a size in decimal units: "950 B", "20.0 MB", "1.23 GB". */
export function bytes(n) {
  if (n === null || n === undefined) return '–';
  if (n < 1000) return `${count(n)} B`;
  const units = ['kB', 'MB', 'GB', 'TB', 'PB'];
  let value = n;
  let unit = -1;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${units[unit]}`;
}

/** dateTime renders an ISO instant as "2026-12-02 08:05:09 UTC" (`short` leaves out the seconds and the zone). */
export function dateTime(iso, { short = false } = {}) {
  if (!iso) return '–';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return String(iso);
  const text = at.toISOString().replace('T', ' ');
  return short ? text.slice(0, 16) : `${text.slice(0, 19)} UTC`;
}

/** duration renders seconds as "2d 3h", "1h 30m", "45m" or "20s". */
export function duration(seconds) {
  if (seconds === null || seconds === undefined) return '–';
  const s = Math.round(seconds);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return h > 0 ? `${d}d ${h}h` : `${d}d`;
  if (h > 0) return m > 0 ? `${h}h ${m}m` : `${h}h`;
  if (m > 0) return `${m}m`;
  return `${s}s`;
}

/**
 * table aligns rows under headers, two spaces apart, without trailing blanks. A column whose header
 * is given as { header, right: true } is right-aligned (figures, so their digits line up).
 */
export function table(columns, rows) {
  const heads = columns.map((c) => (typeof c === 'string' ? { header: c, right: false } : c));
  const cells = rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? '–' : String(cell))));
  const widths = heads.map((h, i) => Math.max(h.header.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (row) =>
    heads
      .map((h, i) => (h.right ? (row[i] ?? '').padStart(widths[i]) : (row[i] ?? '').padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(heads.map((h) => h.header)), ...cells.map(line)].join('\n') + '\n';
}

/** keyValues aligns "label  value" pairs, leaving out pairs whose value is undefined. */
export function keyValues(pairs) {
  const shown = pairs.filter(([, value]) => value !== undefined);
  const width = Math.max(0, ...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${`${label}:`.padEnd(width + 1)}  ${value === null ? '–' : value}`).join('\n') + '\n';
}
