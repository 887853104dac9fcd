'use client';
// Parts the single decision, the ranking's bulk decision and the panel forms share.
import type { SelectHTMLAttributes } from 'react';
import { useT } from '~/app/_components/i18n';
import { cx } from '~/app/_components/ui';

export type Outcome = 'approved' | 'changes_requested' | 'rejected';

/** The three outcomes as a group of radio buttons. */
export function OutcomePicker({ legend, outcome, onChange }: { legend: string; outcome: Outcome; onChange: (o: Outcome) => void }) {
  const { t } = useT();
  return (
    <fieldset>
      <legend className="text-sm font-medium text-slate-800">{legend}</legend>
      <div className="mt-2 flex flex-wrap gap-2">
        {(['approved', 'changes_requested', 'rejected'] as const).map((o) => (
          <label key={o} className={cx('cursor-pointer rounded-md px-3 py-2 text-sm ring-1', outcome === o ? 'bg-indigo-50 ring-2 ring-indigo-600' : 'ring-slate-300')}>
            <input type="radio" name="outcome" value={o} checked={outcome === o} onChange={() => onChange(o)} className="mr-2" />
            {t(`review.outcome.${o}`)}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/**
 * A select of staff members by name (the first chosen), posted as `reviewerUserId`. Inside a Field, which
 * gives it its id, class and error state: those are passed on to the select.
 */
export function StaffSelect({ candidates, ...field }: { candidates: { userId: string; name: string }[] } & SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <select {...field} name="reviewerUserId" defaultValue={candidates[0]?.userId}>
      {candidates.map((c) => (
        <option key={c.userId} value={c.userId}>
          {c.name}
        </option>
      ))}
    </select>
  );
}
