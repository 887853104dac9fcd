// Storage allocations (issue #27): a project's quota at a site, the alerts at 80 and 100 %, and TB-months.
// Pure: bytes and byte-days in, figures out.
//
// Units. A quota is granted in whole GB (10^9 bytes, as storage is sold; not GiB). Usage is measured in
// bytes (apparent file sizes, as `du --apparent-size` counts them). A day's usage is its high-water mark:
// the most the workspace held that day, the day starting with what the last measurement before it said —
// so a project cannot fill its workspace for a day and empty it before midnight unbilled, and days on
// which nothing was measured count what was there when they began. TB-months of a month are
// Σ over its days of bytes / 10^12 / days in the month: the exact sum is kept as integer byte-days, and
// both the shown figure (thousandths of a TB-month) and the price are rounded half up once from it, so an
// invoice line and the usage page say the same.

export const BYTES_PER_GB = 1_000_000_000;
const BYTES_PER_TB = 1_000_000_000_000n;

/** The shares of a quota at which a project's leads and the tenant's owners are told, once per crossing. */
export const STORAGE_ALERT_PERCENT = [80, 100] as const;
export type StorageAlertLevel = 0 | (typeof STORAGE_ALERT_PERCENT)[number];

/** grantedBytes is a quota in GB as bytes. */
export function grantedBytes(grantedGb: number): number {
  return grantedGb * BYTES_PER_GB;
}

/** A refused write: what the workspace holds, what the write asked for, what was granted and what is left, in bytes. */
export interface StorageRefusal {
  usedBytes: number;
  askedBytes: number;
  grantedBytes: number;
  leftBytes: number;
}

/**
 * storageQuotaRefusal decides whether a write of `askedBytes` fits a workspace holding `usedBytes` under a
 * quota of `grantedGb`: null when used + asked stays within the quota, else the figures of the refusal. A
 * workspace already over its quota (a job wrote past it) takes nothing more, not even an empty file.
 */
export function storageQuotaRefusal(input: { usedBytes: number; askedBytes: number; grantedGb: number }): StorageRefusal | null {
  for (const [name, value] of Object.entries(input)) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
  const granted = grantedBytes(input.grantedGb);
  if (input.usedBytes + input.askedBytes <= granted) return null;
  return { usedBytes: input.usedBytes, askedBytes: input.askedBytes, grantedBytes: granted, leftBytes: Math.max(0, granted - input.usedBytes) };
}

/** gbOneDecimal is bytes as GB with one decimal, rounded half up (12,345,678,901 → 12.3), for messages. */
export function gbOneDecimal(bytes: number): number {
  return Math.floor((bytes + 50_000_000) / 100_000_000) / 10;
}

/** storageLevel is the highest alert share the usage has reached (0: below 80 %). Without a quota any usage is over it. */
export function storageLevel(usedBytes: number, grantedGb: number): StorageAlertLevel {
  const granted = grantedBytes(grantedGb);
  let level: StorageAlertLevel = 0;
  for (const percent of STORAGE_ALERT_PERCENT) if (usedBytes > 0 && usedBytes * 100 >= percent * granted) level = percent;
  return level;
}

/**
 * storageAlertStep is what a new measurement does to a workspace's alert state: the level to keep (the
 * highest share reached now) and the alert to send, if the usage crossed a share upwards since the last
 * alert. Once per crossing: a level stays alerted while the usage stays at or above it; falling below
 * lowers the kept level, so crossing it again alerts again. A jump from below 80 % to 100 % sends the 100 %
 * alert only.
 */
export function storageAlertStep(input: { alertedPercent: number; usedBytes: number; grantedGb: number }): { level: StorageAlertLevel; alert: StorageAlertLevel | null } {
  const level = storageLevel(input.usedBytes, input.grantedGb);
  return { level, alert: level > input.alertedPercent ? level : null };
}

/** usedPercent is the usage as a whole percentage of the quota (rounded down; null without a quota). */
export function usedPercent(usedBytes: number, grantedGb: number): number | null {
  if (grantedGb <= 0) return null;
  return Math.floor((usedBytes * 100) / grantedBytes(grantedGb));
}

// ---- TB-months ----------------------------------------------------------------------------------

/** daysInMonth is the number of days of a month YYYY-MM. */
export function daysInMonth(month: string): number {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new RangeError(`not a month YYYY-MM: ${month}`);
  return new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 0)).getUTCDate();
}

function divRoundHalfUpBig(numerator: bigint, denominator: bigint): bigint {
  return (2n * numerator + denominator) / (2n * denominator);
}

function checkByteDays(byteDays: bigint, days: number): void {
  if (byteDays < 0n) throw new RangeError(`byteDays must not be negative, got ${byteDays}`);
  if (!Number.isInteger(days) || days < 28 || days > 31) throw new RangeError(`daysInMonth must be 28..31, got ${days}`);
}

/** milliTbMonths is a month's byte-days as thousandths of a TB-month, rounded half up once (1,234 = 1.234 TB-months). */
export function milliTbMonths(byteDays: bigint, daysOfMonth: number): number {
  checkByteDays(byteDays, daysOfMonth);
  return Number(divRoundHalfUpBig(byteDays * 1000n, BYTES_PER_TB * BigInt(daysOfMonth)));
}

/** storageCents prices a month's byte-days at cents per TB-month, rounded half up once to the cent. */
export function storageCents(byteDays: bigint, daysOfMonth: number, centsPerTbMonth: number): number {
  checkByteDays(byteDays, daysOfMonth);
  if (!Number.isSafeInteger(centsPerTbMonth) || centsPerTbMonth < 0) throw new RangeError(`centsPerTbMonth must be a non-negative integer, got ${centsPerTbMonth}`);
  return Number(divRoundHalfUpBig(byteDays * BigInt(centsPerTbMonth), BYTES_PER_TB * BigInt(daysOfMonth)));
}

/** A day's high-water mark of one workspace. */
export interface StorageDay {
  day: string;
  bytes: number | bigint;
}

/** byteDaysByMonth sums days' high-water marks per month (YYYY-MM), exactly. */
export function byteDaysByMonth(days: readonly StorageDay[]): Map<string, bigint> {
  const months = new Map<string, bigint>();
  for (const d of days) {
    const month = d.day.slice(0, 7);
    months.set(month, (months.get(month) ?? 0n) + BigInt(d.bytes));
  }
  return months;
}

/**
 * periodMilliTbMonths is the TB-months of days spanning one or more months, in thousandths: each month's
 * byte-days over that month's days, rounded once per month (as each month's invoice line is), summed.
 */
export function periodMilliTbMonths(days: readonly StorageDay[]): number {
  let total = 0;
  for (const [month, byteDays] of byteDaysByMonth(days)) total += milliTbMonths(byteDays, daysInMonth(month));
  return total;
}

/** periodStorageCents prices days spanning one or more months: each month rounded once, as its invoice line, summed. */
export function periodStorageCents(days: readonly StorageDay[], centsPerTbMonth: number): number {
  let total = 0;
  for (const [month, byteDays] of byteDaysByMonth(days)) total += storageCents(byteDays, daysInMonth(month), centsPerTbMonth);
  return total;
}

/**
 * daysBetweenMeasurements lists the days after the last measurement's day and before today's, which
 * nothing measured: each keeps what the last measurement said (at most `limit`, the most recent).
 */
export function daysBetweenMeasurements(lastDay: string, today: string, limit = 400): string[] {
  const days: string[] = [];
  const end = Date.parse(`${today}T00:00:00Z`);
  let at = Math.max(Date.parse(`${lastDay}T00:00:00Z`) + 86_400_000, end - limit * 86_400_000);
  for (; at < end; at += 86_400_000) days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}
