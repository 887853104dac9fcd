'use client';
// An admin opens a call of an access mode that takes requests in rounds (issue #32): its title, the
// GPU-hours given out per round, its cut-offs, one per line in the browser's time zone, and the criteria
// its reviewers score (the default rubric when none is given).
import { useMutation } from '@tanstack/react-query';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';

/** A cut-off typed as "2027-01-15 17:00" (local time) as an instant with its offset; as typed when it is not one, so the server names it. */
export function cutoffInstant(line: string): string {
  const typed = line.trim();
  const local = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}$/.test(typed) ? new Date(typed.replace(' ', 'T')) : null;
  return local && !Number.isNaN(local.getTime()) ? local.toISOString() : typed;
}

export function OpenCallForm({ modes }: { modes: { id: string; name: string }[] }) {
  const { t } = useT();
  const trpc = useTRPC();
  const open = useMutation(trpc.calls.open.mutationOptions());
  const { errors, done, onSubmit } = useFormMutation(open.mutateAsync, {
    read: (form) => ({
      accessModeId: formValue(form, 'accessModeId'),
      title: formValue(form, 'title'),
      description: formValue(form, 'description'),
      gpuHoursPerRound: Number(formValue(form, 'gpuHoursPerRound')),
      cutoffs: formValue(form, 'cutoffs')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map(cutoffInstant),
      rubric: formValue(form, 'rubric')
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean),
    }),
    fields: ['accessModeId', 'title', 'description', 'gpuHoursPerRound', 'cutoffs', 'rubric'],
  });
  return (
    <form onSubmit={onSubmit} className="grid gap-3 md:grid-cols-2" noValidate aria-label={t('calls.open')}>
      <Field label={t('application.mode')} error={errors.fields.accessModeId}>
        <select name="accessModeId" defaultValue={modes[0]?.id}>
          {modes.map((m) => (
            <option key={m.id} value={m.id}>
              {m.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label={t('calls.title')} error={errors.fields.title}>
        <input name="title" maxLength={200} required />
      </Field>
      <Field label={t('calls.gpuHoursPerRound')} error={errors.fields.gpuHoursPerRound} hint={t('calls.gpuHoursPerRoundHint')}>
        <input name="gpuHoursPerRound" type="number" inputMode="numeric" min={1} step={1} required />
      </Field>
      <Field label={t('calls.cutoffs')} error={errors.fields.cutoffs} hint={t('calls.cutoffsHint')}>
        <textarea name="cutoffs" rows={3} placeholder="2027-01-15 17:00" required />
      </Field>
      <Field label={t('calls.rubric')} error={errors.fields.rubric} hint={t('calls.rubricHint')}>
        <textarea name="rubric" rows={3} placeholder={'Excellence\nTechnical feasibility\nImpact'} />
      </Field>
      <Field label={t('calls.description')} error={errors.fields.description}>
        <textarea name="description" rows={3} maxLength={5000} />
      </Field>
      <div className="flex items-center gap-3 md:col-span-2">
        <Button type="submit" disabled={open.isPending}>
          {t('calls.open')}
        </Button>
        {done && <span className="text-sm text-green-700">{t('calls.opened')}</span>}
      </div>
      {errors.message && (
        <div className="md:col-span-2">
          <Alert tone="error">{errors.message}</Alert>
        </div>
      )}
    </form>
  );
}
