// Decision clocks in working time: working hours of working days, the centre's public holidays, its time zone.
import { describe, expect, it } from 'vitest';
import { addWorkingTime, decisionDueAt, dueState, isWorkingDay, workingHoursBetween, type WorkingCalendar } from './working-time';

// Easter 2027 in Germany: Good Friday 26 March, Easter Monday 29 March (and 1 January, for the year's turn).
const HOLIDAYS = new Set(['2027-03-26', '2027-03-29', '2027-01-01', '2026-12-25', '2026-12-26']);
const berlin: WorkingCalendar = { timeZone: 'Europe/Berlin', startHour: 9, endHour: 17, isHoliday: (day) => HOLIDAYS.has(day) };
/** An instant given as Berlin's local time (CET +01:00 or CEST +02:00 as written). */
const at = (iso: string) => new Date(iso);

describe('working time', () => {
  it('knows weekends and holidays', () => {
    expect(isWorkingDay(berlin, '2027-03-25')).toBe(true); // Maundy Thursday
    expect(isWorkingDay(berlin, '2027-03-26')).toBe(false); // Good Friday
    expect(isWorkingDay(berlin, '2027-03-27')).toBe(false); // Saturday
    expect(isWorkingDay(berlin, '2027-03-29')).toBe(false); // Easter Monday
    expect(isWorkingDay(berlin, '2027-03-30')).toBe(true);
  });

  it('makes a Playground request filed at 16:00 on the Thursday before Easter due on Wednesday at 16:00', () => {
    // Thursday 25 March 2027, 16:00 in Berlin (CET); summer time begins on Sunday the 28th.
    expect(decisionDueAt(berlin, at('2027-03-25T16:00:00+01:00'), 2).toISOString()).toBe(new Date('2027-03-31T16:00:00+02:00').toISOString());
    // Four working days (Fast Lane): Friday 2 April at 16:00.
    expect(decisionDueAt(berlin, at('2027-03-25T16:00:00+01:00'), 4).toISOString()).toBe(new Date('2027-04-02T16:00:00+02:00').toISOString());
  });

  it('starts the clock at the next working hours when filed outside them', () => {
    // Filed on Saturday: counted from Monday 09:00, due Tuesday 17:00 after two days.
    expect(decisionDueAt(berlin, at('2027-03-06T11:00:00+01:00'), 2).toISOString()).toBe(new Date('2027-03-09T17:00:00+01:00').toISOString());
    // Filed at 20:00 on a Monday: from Tuesday 09:00.
    expect(decisionDueAt(berlin, at('2027-03-01T20:00:00+01:00'), 1).toISOString()).toBe(new Date('2027-03-02T17:00:00+01:00').toISOString());
    // Filed at 07:30: from 09:00 the same day.
    expect(addWorkingTime(berlin, at('2027-03-01T07:30:00+01:00'), 3).toISOString()).toBe(new Date('2027-03-01T12:00:00+01:00').toISOString());
    // Over the year's turn: Christmas and New Year's Day are off.
    expect(decisionDueAt(berlin, at('2026-12-23T10:00:00+01:00'), 3).toISOString()).toBe(new Date('2026-12-29T10:00:00+01:00').toISOString());
  });

  it('counts the working time between two instants as the due clock runs it, over Easter and the change to summer time', () => {
    const filed = at('2027-03-25T16:00:00+01:00');
    expect(workingHoursBetween(berlin, filed, at('2027-03-31T16:00:00+02:00'))).toBe(16); // two working days
    expect(workingHoursBetween(berlin, filed, at('2027-03-25T16:30:00+01:00'))).toBe(0.5);
    // Decided on Easter Sunday evening: the last working hour of Thursday only.
    expect(workingHoursBetween(berlin, filed, at('2027-03-28T21:00:00+02:00'))).toBe(1);
    expect(workingHoursBetween(berlin, filed, filed)).toBe(0);
    expect(workingHoursBetween(berlin, at('2027-03-31T10:00:00+02:00'), filed)).toBe(0);
    // Filed on a Saturday and decided on Monday at 11:00: two hours.
    expect(workingHoursBetween(berlin, at('2027-03-06T11:00:00+01:00'), at('2027-03-08T11:00:00+01:00'))).toBe(2);
    // The inverse of addWorkingTime, from inside and outside working hours.
    for (const from of ['2027-03-25T16:00:00+01:00', '2027-03-06T11:00:00+01:00', '2026-12-23T10:00:00+01:00', '2027-03-01T07:30:00+01:00']) {
      for (const hours of [0.25, 3, 8, 13, 40]) expect(workingHoursBetween(berlin, at(from), addWorkingTime(berlin, at(from), hours))).toBeCloseTo(hours, 9);
    }
  });

  it('tells overdue, due today and on time in the centre’s day', () => {
    const due = at('2027-03-31T16:00:00+02:00');
    expect(dueState(berlin, due, at('2027-03-31T16:00:01+02:00'))).toBe('overdue');
    expect(dueState(berlin, due, at('2027-03-31T08:00:00+02:00'))).toBe('dueToday');
    expect(dueState(berlin, due, at('2027-03-30T23:30:00+02:00'))).toBe('onTime');
  });
});
