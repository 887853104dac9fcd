'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field, inputClass } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';
import { OutcomePicker, type Outcome } from './decision-parts';


/** The reviewer's decision: approve (possibly less than requested, in GPU-hours or storage), ask for changes, or reject — with words for the applicants. */
export function DecisionForm({ applicationId, lines }: { applicationId: string; lines: { resourceClassId: string; name: string; gpuHours: number; storageGb: number }[] }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [outcome, setOutcome] = useState<Outcome>('approved');
  const [granted, setGranted] = useState<Record<string, string>>(Object.fromEntries(lines.map((l) => [l.resourceClassId, String(l.gpuHours)])));
  const [grantedStorage, setGrantedStorage] = useState<Record<string, string>>(Object.fromEntries(lines.map((l) => [l.resourceClassId, String(l.storageGb)])));
  const [comment, setComment] = useState('');
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const decide = useMutation(trpc.staff.decide.mutationOptions());

  async function onSubmit(event: React.FormEvent) {
    event.preventDefault();
    setErrors({ fields: {} });
    try {
      await decide.mutateAsync({
        applicationId,
        outcome,
        comment,
        grantedLines: outcome === 'approved' ? lines.map((l) => ({ resourceClassId: l.resourceClassId, gpuHours: Number(granted[l.resourceClassId] || 0), storageGb: Number(grantedStorage[l.resourceClassId] || 0) })) : [],
      });
      router.push('/staff/applications');
      router.refresh();
    } catch (error) {
      setErrors(formErrors(error, ['comment', 'grantedLines', 'outcome']));
    }
  }

  const grantedError = errors.fields.grantedLines ?? Object.entries(errors.fields).find(([k]) => k.startsWith('grantedLines.'))?.[1];
  return (
    <Card title={t('review.decide')}>
      <form onSubmit={onSubmit} className="space-y-5" noValidate>
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        <OutcomePicker legend={t('review.outcome')} outcome={outcome} onChange={setOutcome} />
        {outcome === 'approved' && (
          <fieldset>
            <legend className="text-sm font-medium text-slate-800">{t('review.grant')}</legend>
            <p className="text-xs text-slate-500">{t('review.grantHint')}</p>
            <div className="mt-2 space-y-2">
              {lines.map((l) => (
                <div key={l.resourceClassId} className="flex flex-wrap items-center gap-3">
                  <label htmlFor={`grant-${l.resourceClassId}`} className="w-64 text-sm">
                    {l.name} <span className="text-slate-500">({t('review.requestedHours', { hours: l.gpuHours })})</span>
                  </label>
                  <input
                    id={`grant-${l.resourceClassId}`}
                    type="number"
                    min={0}
                    max={l.gpuHours}
                    step={1}
                    className={`${inputClass} w-36`}
                    value={granted[l.resourceClassId] ?? ''}
                    onChange={(e) => setGranted({ ...granted, [l.resourceClassId]: e.target.value })}
                    aria-label={t('review.grantHours', { name: l.name, hours: l.gpuHours })}
                  />
                  <span className="text-sm text-slate-600">GPU-h</span>
                  <input
                    id={`grant-storage-${l.resourceClassId}`}
                    type="number"
                    min={0}
                    max={l.storageGb}
                    step={1}
                    className={`${inputClass} w-36`}
                    value={grantedStorage[l.resourceClassId] ?? ''}
                    onChange={(e) => setGrantedStorage({ ...grantedStorage, [l.resourceClassId]: e.target.value })}
                    aria-label={t('review.grantStorage', { name: l.name, gb: l.storageGb })}
                  />
                  <span className="text-sm text-slate-600">GB</span>
                </div>
              ))}
            </div>
            {grantedError && <p className="mt-1 text-sm text-red-700">{grantedError}</p>}
          </fieldset>
        )}
        <Field label={t('review.comment')} error={errors.fields.comment} hint={t('review.commentHint')}>
          <textarea rows={4} value={comment} onChange={(e) => setComment(e.target.value)} maxLength={5000} />
        </Field>
        <Button type="submit" variant={outcome === 'rejected' ? 'danger' : 'primary'} disabled={decide.isPending}>
          {decide.isPending ? t('common.working') : t(`review.submit.${outcome}`)}
        </Button>
      </form>
    </Card>
  );
}
