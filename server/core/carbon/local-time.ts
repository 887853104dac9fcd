// Local wall-clock hours of a site. Intl.DateTimeFormat with a `timeZone` reads the runtime's own
// time-zone database (ICU in Node and browsers): deterministic for an instant and a zone, no clock and
// no environment read, so the core stays pure. Offsets need not be whole hours.

/** The local hour an instant falls in. */
export interface LocalHour {
  /** 0 = January. */
  month: number;
  /** 0–23. */
  hour: number;
  /** The instant (Unix seconds) the next local hour begins. */
  nextHourSeconds: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-GB', { timeZone, year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', hourCycle: 'h23' });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** isTimeZone tells whether the runtime knows an IANA time zone name. */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** localHourAt returns the month and hour of day an instant (Unix seconds) has in a time zone, and when that hour ends. */
export function localHourAt(timeZone: string, unixSeconds: number): LocalHour {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(unixSeconds * 1000))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const secondsIntoHour = (parts.minute ?? 0) * 60 + (parts.second ?? 0);
  return { month: (parts.month ?? 1) - 1, hour: (parts.hour ?? 0) % 24, nextHourSeconds: unixSeconds - secondsIntoHour + 3600 };
}

