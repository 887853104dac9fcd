// The centre's working calendar (issue #32), from the catalogue's `calendar`: working hours, time zone and the
// public holidays of its country and state (date-holidays), for the decision clocks of core/working-time.ts.
import Holidays from 'date-holidays';
import { configuredCatalogue, type Catalogue } from '~/server/catalogue';
import type { WorkingCalendar } from '~/server/core/working-time';

const calendars = new WeakMap<Catalogue['calendar'], WorkingCalendar>();

/** workingCalendar is the calendar the catalogue describes (made once per catalogue; holidays read per year as asked). */
export function workingCalendar(settings: Catalogue['calendar'] = configuredCatalogue().calendar): WorkingCalendar {
  const known = calendars.get(settings);
  if (known) return known;
  const holidays = settings.state ? new Holidays(settings.country, settings.state) : new Holidays(settings.country);
  const byYear = new Map<number, Set<string>>();
  const publicHolidaysOf = (year: number) => {
    let days = byYear.get(year);
    if (!days) {
      // Public holidays only: a bank holiday or an optional one is a working day at a computing centre.
      days = new Set(holidays.getHolidays(year).filter((h) => h.type === 'public').map((h) => h.date.slice(0, 10)));
      byYear.set(year, days);
    }
    return days;
  };
  const calendar: WorkingCalendar = {
    timeZone: settings.timeZone,
    startHour: settings.workingHours.start,
    endHour: settings.workingHours.end,
    isHoliday: (day) => publicHolidaysOf(Number(day.slice(0, 4))).has(day),
  };
  calendars.set(settings, calendar);
  return calendar;
}
