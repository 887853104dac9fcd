// Working time for decision clocks (issue #32): the centre's working hours on its working days (Monday to
// Friday, not a public holiday of its country and state), in its time zone. Pure: the holidays come in as a
// predicate (server/services/calendar.ts builds it from date-holidays and the catalogue).

export interface WorkingCalendar {
  /** IANA time zone of the centre, e.g. Europe/Berlin. */
  timeZone: string;
  /** Working hours as whole local hours, start inclusive and end exclusive: 9 and 17 is 09:00–17:00. */
  startHour: number;
  endHour: number;
  /** Whether a local date (YYYY-MM-DD) is a public holiday. */
  isHoliday: (day: string) => boolean;
}

const DAY_MS = 86_400_000;

/** One formatter per zone: making one costs far more than using it, and a queue's clocks ask many times. */
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The local calendar date and time of an instant in a zone. */
function localParts(at: Date, timeZone: string): { day: string; weekday: number; minutes: number } {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', weekday: 'short' });
    formatters.set(timeZone, format);
  }
  const parts = format.formatToParts(at);
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  const day = `${get('year')}-${get('month')}-${get('day')}`;
  const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(get('weekday'));
  return { day, weekday, minutes: Number(get('hour')) * 60 + Number(get('minute')) + Number(get('second')) / 60 };
}

/** The instant a local date and hour of a zone is (the zone's offset on that date; no working hour falls in a DST gap). */
function instantOf(day: string, hour: number, timeZone: string): Date {
  const guess = Date.parse(`${day}T${String(hour).padStart(2, '0')}:00:00Z`);
  // The zone's offset at the guess, then once more at the corrected instant (a change of offset between them).
  let at = guess;
  for (let i = 0; i < 2; i++) {
    const local = localParts(new Date(at), timeZone);
    const localMs = Date.parse(`${local.day}T00:00:00Z`) + local.minutes * 60_000;
    at += guess - localMs;
  }
  return new Date(Math.round(at / 60_000) * 60_000);
}

function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
}

function weekdayOf(day: string): number {
  return new Date(`${day}T00:00:00Z`).getUTCDay();
}

/** isWorkingDay: Monday to Friday and not a public holiday. */
export function isWorkingDay(calendar: WorkingCalendar, day: string): boolean {
  const weekday = weekdayOf(day);
  return weekday !== 0 && weekday !== 6 && !calendar.isHoliday(day);
}

/**
 * addWorkingTime is the instant `hours` working hours after `from`: the clock runs only within working hours
 * of working days. Filed outside them, the clock starts at the next working hours' start. A target of N working
 * days is N × the working day's hours: filed Thursday 16:00 with two working days to go, before a Friday and a
 * Monday off, it is due on Wednesday at 16:00.
 */
export function addWorkingTime(calendar: WorkingCalendar, from: Date, hours: number): Date {
  const dayHours = calendar.endHour - calendar.startHour;
  if (!(dayHours > 0) || !(hours >= 0)) throw new Error(`working time: ${calendar.startHour}–${calendar.endHour} h, ${hours} h`);
  const local = localParts(from, calendar.timeZone);
  let day = local.day;
  // Minutes already into the working day the clock starts on.
  let into = Math.min(Math.max(local.minutes - calendar.startHour * 60, 0), dayHours * 60);
  if (!isWorkingDay(calendar, day) || into >= dayHours * 60) {
    do day = nextDay(day);
    while (!isWorkingDay(calendar, day));
    into = 0;
  }
  let left = hours * 60;
  for (;;) {
    const room = dayHours * 60 - into;
    if (left <= room) return new Date(instantOf(day, calendar.startHour, calendar.timeZone).getTime() + (into + left) * 60_000);
    left -= room;
    do day = nextDay(day);
    while (!isWorkingDay(calendar, day));
    into = 0;
  }
}

/** decisionDueAt is when a decision targeted at `workingDays` working days after `submittedAt` is due. */
export function decisionDueAt(calendar: WorkingCalendar, submittedAt: Date, workingDays: number): Date {
  return addWorkingTime(calendar, submittedAt, workingDays * (calendar.endHour - calendar.startHour));
}

/** dueState says whether a due instant is past, falls on `now`'s local day, or is later. */
export function dueState(calendar: WorkingCalendar, dueAt: Date, now: Date): 'overdue' | 'dueToday' | 'onTime' {
  if (dueAt.getTime() <= now.getTime()) return 'overdue';
  return localParts(dueAt, calendar.timeZone).day === localParts(now, calendar.timeZone).day ? 'dueToday' : 'onTime';
}

/**
 * workingHoursBetween is the working time from `from` to `to`, in hours (0 when `to` is not later): the
 * clock decisionDueAt runs, counted back. A decision taken outside working hours counts up to their end.
 */
export function workingHoursBetween(calendar: WorkingCalendar, from: Date, to: Date): number {
  if (to.getTime() <= from.getTime()) return 0;
  const dayMinutes = (calendar.endHour - calendar.startHour) * 60;
  const into = (minutes: number) => Math.min(Math.max(minutes - calendar.startHour * 60, 0), dayMinutes);
  const start = localParts(from, calendar.timeZone);
  const end = localParts(to, calendar.timeZone);
  let minutes = 0;
  for (let day = start.day; ; day = nextDay(day)) {
    if (isWorkingDay(calendar, day)) {
      const a = day === start.day ? into(start.minutes) : 0;
      const b = day === end.day ? into(end.minutes) : dayMinutes;
      if (b > a) minutes += b - a;
    }
    if (day >= end.day) break;
  }
  return minutes / 60;
}
