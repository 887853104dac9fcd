// One place for number, money and date formatting with units, in the reader's language.
import type { Locale } from '~/server/i18n/core';

const cache = new Map<string, Intl.NumberFormat>();
function numberFormat(locale: Locale, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `${locale}:${JSON.stringify(options)}`;
  let format = cache.get(key);
  if (!format) cache.set(key, (format = new Intl.NumberFormat(locale, options)));
  return format;
}

/**
 * roundGpuHours is the one rounding rule for GPU-hours shown to people: whole hours from 100, one decimal
 * from 10, else two. The form's estimate and a refusal's message params both use it, so they never
 * disagree ("663 GPU-h left" and "662.66 remain" for the same amount).
 */
export function roundGpuHours(gpuSeconds: number): number {
  const hours = gpuSeconds / 3600;
  const digits = Math.abs(hours) >= 100 ? 0 : Math.abs(hours) >= 10 ? 1 : 2;
  return Math.round(hours * 10 ** digits) / 10 ** digits;
}

/** formatGpuHours renders GPU-seconds as GPU-hours with a unit, e.g. "1,234.5 GPU-h" (rounded by roundGpuHours). */
export function formatGpuHours(locale: Locale, gpuSeconds: number): string {
  return `${numberFormat(locale, { maximumFractionDigits: 2 }).format(roundGpuHours(gpuSeconds))} GPU-h`;
}

/** formatEuros renders cents as euros, e.g. "€1,234.56" / "1.234,56 €". */
export function formatEuros(locale: Locale, cents: number): string {
  return numberFormat(locale, { style: 'currency', currency: 'EUR' }).format(cents / 100);
}

/** formatAmount renders an allocation amount in its unit. */
export function formatAmount(locale: Locale, unit: 'gpu_seconds' | 'cents', amount: number): string {
  return unit === 'cents' ? formatEuros(locale, amount) : formatGpuHours(locale, amount);
}

/** formatPercent renders a fraction (0..1) as a percentage. */
export function formatPercent(locale: Locale, fraction: number): string {
  return numberFormat(locale, { style: 'percent', maximumFractionDigits: 0 }).format(fraction);
}

/** formatBasisPoints renders a utilisation in basis points (10,000 = 100 %) as a percentage with up to one decimal, e.g. "46.7 %". */
export function formatBasisPoints(locale: Locale, bp: number): string {
  return numberFormat(locale, { style: 'percent', maximumFractionDigits: 1 }).format(bp / 10_000);
}

/** formatDecimal renders a number with at most `digits` decimals in the reader's style (no unit). */
export function formatDecimal(locale: Locale, value: number, digits: number): string {
  return numberFormat(locale, { maximumFractionDigits: digits }).format(value);
}

/** formatDay renders a YYYY-MM-DD date in the reader's style. */
export function formatDay(locale: Locale, day: string): string {
  return dateTimeFormat(locale, 'UTC', { dateStyle: 'medium' }).format(new Date(`${day}T00:00:00Z`));
}

/** formatMonth renders a calendar month (yyyy-mm) as the reader names it, e.g. "November 2026". */
export function formatMonth(locale: Locale, month: string): string {
  return dateTimeFormat(locale, 'UTC', { month: 'long', year: 'numeric' }).format(new Date(`${month}-01T00:00:00Z`));
}

/** formatDate renders an instant's calendar day (UTC, as the ledger and reports count days), e.g. "1 Dec 2026". */
export function formatDate(locale: Locale, at: Date | string): string {
  return dateTimeFormat(locale, 'UTC', { dateStyle: 'medium' }).format(typeof at === 'string' ? new Date(at) : at);
}

/** formatCount renders a whole number with the reader's grouping, e.g. "12,345" / "12.345". */
export function formatCount(locale: Locale, value: number): string {
  return numberFormat(locale, { maximumFractionDigits: 0 }).format(value);
}

const BYTE_UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'] as const;

/**
 * formatBytes renders a size in decimal units as storage is sold and quotas are granted (1 GB = 10⁹
 * bytes): "999 B", "1.5 kB", "12.4 GB", "3.07 TB" — three significant digits from 1 kB on.
 */
export function formatBytes(locale: Locale, bytes: number): string {
  let unit = 0;
  let value = bytes;
  while (Math.abs(value) >= 1000 && unit < BYTE_UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  const digits = unit === 0 ? 0 : Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${numberFormat(locale, { maximumFractionDigits: digits }).format(value)} ${BYTE_UNITS[unit]}`;
}

const SUPERSCRIPT = '⁰¹²³⁴⁵⁶⁷⁸⁹';

/** formatScientific renders a large figure as "2.1 × 10¹⁹" (mantissa in the reader's style), never "2.10e+19". */
export function formatScientific(locale: Locale, value: number): string {
  if (value === 0 || !Number.isFinite(value)) return numberFormat(locale, { maximumFractionDigits: 2 }).format(value);
  let exponent = Math.floor(Math.log10(Math.abs(value)));
  let mantissa = Math.round((value / 10 ** exponent) * 100) / 100;
  if (Math.abs(mantissa) >= 10) {
    mantissa /= 10;
    exponent += 1;
  }
  if (exponent >= -2 && exponent < 6) return numberFormat(locale, { maximumFractionDigits: 2 }).format(value);
  const power = `${exponent < 0 ? '⁻' : ''}${[...String(Math.abs(exponent))].map((d) => SUPERSCRIPT[Number(d)]).join('')}`;
  return `${numberFormat(locale, { maximumFractionDigits: 2 }).format(mantissa)} × 10${power}`;
}

/** formatDayShort renders a day without its year, for chart axes ("Nov 2" / "2. Nov."). */
export function formatDayShort(locale: Locale, day: string): string {
  return dateTimeFormat(locale, 'UTC', { day: 'numeric', month: 'short' }).format(new Date(`${day}T00:00:00Z`));
}

/**
 * DEFAULT_TIME_ZONE is the zone a person reads times in until they choose one on their profile: the
 * centre's own (its sites and most of its customers are in Central Europe). The ledger's days stay UTC.
 */
export const DEFAULT_TIME_ZONE = 'Europe/Berlin';

/** TIME_ZONES lists the IANA zones a person may choose (the runtime's own list, plus UTC). */
export function timeZoneNames(): string[] {
  return ['UTC', ...Intl.supportedValuesOf('timeZone').filter((zone) => zone !== 'UTC')];
}

let knownZones: Set<string> | undefined;

/**
 * isTimeZoneName tells whether a string is an IANA time zone a person may choose: one of
 * Intl.supportedValuesOf('timeZone') or UTC, or an alias of one (ICU lists "Asia/Calcutta" while
 * browsers report "Asia/Kolkata").
 */
export function isTimeZoneName(value: string): boolean {
  knownZones ??= new Set(timeZoneNames());
  if (knownZones.has(value)) return true;
  if (!/^[A-Za-z]+(\/[A-Za-z0-9_+-]+)+$/.test(value)) return false;
  try {
    return knownZones.has(new Intl.DateTimeFormat('en', { timeZone: value }).resolvedOptions().timeZone);
  } catch {
    return false;
  }
}

// Made once per locale, zone and options: an Intl.DateTimeFormat costs far more to make than to use (a
// page formats hundreds of dates; making one each time was 1.4 % of the server's CPU under load).
const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();
function dateTimeFormat(locale: Locale, timeZone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale}:${timeZone}:${JSON.stringify(options)}`;
  let format = dateTimeFormats.get(key);
  if (!format) dateTimeFormats.set(key, (format = new Intl.DateTimeFormat(locale, { ...options, timeZone })));
  return format;
}

/** zoneAbbreviation names the zone an instant is shown in, as the reader's language abbreviates it ("CET", "MEZ", "GMT+1", "UTC"): winter and summer time differ. */
export function zoneAbbreviation(locale: Locale, at: Date, timeZone: string): string {
  return dateTimeFormat(locale, timeZone, { timeZoneName: 'short' }).formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? timeZone;
}

/**
 * formatDateTime renders an instant with date and time in the reader's time zone, naming it ("1 Dec 2026,
 * 15:05 CET"); without a zone in UTC ("… 14:05 UTC"), the clock the ledger's days, reports and invoices
 * count in. Pages pass the person's zone from the server, so server and browser render the same text.
 */
export function formatDateTime(locale: Locale, at: Date, timeZone = 'UTC'): string {
  return `${dateTimeFormat(locale, timeZone, { dateStyle: 'medium', timeStyle: 'short' }).format(at)} ${zoneAbbreviation(locale, at, timeZone)}`;
}

/**
 * formatTimeIn renders an instant's weekday and time of day in a time zone ("Thu 02:00"), with the zone
 * named as formatDateTime names it ("CET"): the low-carbon suggestion in the reader's zone, as the job page shows the begin.
 */
export function formatTimeIn(locale: Locale, at: Date, timeZone: string): { time: string; zone: string } {
  const time = dateTimeFormat(locale, timeZone, { weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
  return { time, zone: zoneAbbreviation(locale, at, timeZone) };
}

/** formatKw renders watts as kW to one decimal, e.g. "412.5 kW" (power; energy is formatKwh). */
export function formatKw(locale: Locale, w: number): string {
  return `${numberFormat(locale, { maximumFractionDigits: 1 }).format(Math.round(w / 100) / 10)} kW`;
}

/** formatClockUtc renders an instant's time of day in UTC, 24-hour ("14:05"): a time axis under a heading that says UTC. */
export function formatClockUtc(locale: Locale, at: Date): string {
  return dateTimeFormat(locale, 'UTC', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
}

/** formatKwh renders watt-hours as kWh to one decimal, as the usage page does, e.g. "1,234.5 kWh". */
export function formatKwh(locale: Locale, wh: number): string {
  return `${numberFormat(locale, { maximumFractionDigits: 1 }).format(Math.round(wh / 100) / 10)} kWh`;
}

/** formatEnergyWh renders watt-hours as kWh below 10 MWh and as MWh from there, to one decimal ("1,234.5 kWh", "222.8 MWh"). */
export function formatEnergyWh(locale: Locale, wh: number): string {
  if (Math.abs(wh) < 10_000_000) return formatKwh(locale, wh);
  return `${numberFormat(locale, { maximumFractionDigits: 1 }).format(Math.round(wh / 100_000) / 10)} MWh`;
}

/** formatCo2e renders grams CO2e as kg below 10 t and as tonnes from there, to one decimal ("12.3 kg", "52.4 t"). */
export function formatCo2e(locale: Locale, grams: number): string {
  if (Math.abs(grams) < 10_000_000) return formatCo2eKg(locale, grams);
  return `${numberFormat(locale, { maximumFractionDigits: 1 }).format(Math.round(grams / 100_000) / 10)} t`;
}

/** formatCo2eKg renders grams CO2e as kilograms to one decimal, as the usage page does, e.g. "12.3 kg". */
export function formatCo2eKg(locale: Locale, grams: number): string {
  return `${numberFormat(locale, { maximumFractionDigits: 1 }).format(Math.round(grams / 100) / 10)} kg`;
}

/** formatDuration renders whole seconds as "2 h 5 min 3 s", leaving out zero parts ("3 h", "0 s"); the units read the same in English and German. */
export function formatDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const parts = [h > 0 ? `${h} h` : '', m > 0 || (h > 0 && s > 0) ? `${m} min` : '', s > 0 || (h === 0 && m === 0) ? `${s} s` : ''];
  return parts.filter(Boolean).join(' ');
}
