// Number formatting of the centre dashboard, in the reader's language, with units.
import type { Locale } from '~/server/i18n/core';

function number(locale: Locale, value: number, digits: number): string {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: digits, minimumFractionDigits: 0 }).format(value);
}

/** kwh renders Wh as kWh (no unit). */
export function kwh(locale: Locale, wh: number): string {
  const value = wh / 1000;
  return number(locale, value, value >= 100 ? 0 : value >= 10 ? 1 : 2);
}

/** kg renders grams as kilograms (no unit). */
export function kg(locale: Locale, grams: number): string {
  const value = grams / 1000;
  return number(locale, value, value >= 100 ? 0 : value >= 10 ? 1 : 2);
}

/** hours renders seconds as hours (no unit). */
export function hours(locale: Locale, seconds: number): string {
  const value = seconds / 3600;
  return number(locale, value, value >= 100 ? 0 : value >= 10 ? 1 : 2);
}

/** fixed renders a number with exactly `digits` decimals (PUE: 1.08). */
export function fixed(locale: Locale, value: number, digits: number): string {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: digits, minimumFractionDigits: digits }).format(value);
}

/** decimal renders a number with at most `digits` decimals. */
export function decimal(locale: Locale, value: number, digits = 2): string {
  return number(locale, value, digits);
}

/** percent renders a fraction as a percentage with one decimal below 10 %. */
export function percent(locale: Locale, fraction: number): string {
  return new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: fraction !== 0 && Math.abs(fraction) < 0.1 ? 1 : 0 }).format(fraction);
}
