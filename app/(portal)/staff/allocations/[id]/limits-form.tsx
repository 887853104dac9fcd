'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';

/** Staff set an allocation's limits: GPUs at once, walltime per job, queued jobs and its storage line (GB) — with a reason. */
export function LimitsForm({ allocationId, current }: { allocationId: string; current: { maxGpusAtOnce: number | null; maxWalltimeSeconds: number | null; maxQueuedJobs: number | null; storageGb: number } }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [done, setDone] = useState(false);
  const save = useMutation(trpc.staff.setAllocationLimits.mutationOptions());
  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setErrors({ fields: {} });
    setDone(false);
    try {
      await save.mutateAsync({
        allocationId,
        maxGpusAtOnce: Number(formValue(form, 'maxGpusAtOnce')),
        maxWalltimeHours: Number(formValue(form, 'maxWalltimeHours')),
        maxQueuedJobs: Number(formValue(form, 'maxQueuedJobs')),
        storageGb: Number(formValue(form, 'storageGb')),
        reason: formValue(form, 'reason'),
      });
      setDone(true);
      router.refresh();
    } catch (error) {
      setErrors(formErrors(error, ['maxGpusAtOnce', 'maxWalltimeHours', 'maxQueuedJobs', 'storageGb', 'reason']));
    }
  }
  return (
    <Card title={t('limits.title')}>
      <form onSubmit={onSubmit} className="grid items-start gap-4 sm:grid-cols-5" noValidate>
        <Field label={t('limits.gpus')} error={errors.fields.maxGpusAtOnce}>
          <input name="maxGpusAtOnce" type="number" min={1} step={1} defaultValue={current.maxGpusAtOnce ?? ''} required />
        </Field>
        <Field label={t('limits.walltime')} error={errors.fields.maxWalltimeHours}>
          <input name="maxWalltimeHours" type="number" min={1} step={1} defaultValue={current.maxWalltimeSeconds ? current.maxWalltimeSeconds / 3600 : ''} required />
        </Field>
        <Field label={t('limits.queued')} error={errors.fields.maxQueuedJobs}>
          <input name="maxQueuedJobs" type="number" min={1} step={1} defaultValue={current.maxQueuedJobs ?? ''} required />
        </Field>
        <Field label={t('limits.storageGb')} error={errors.fields.storageGb}>
          <input name="storageGb" type="number" min={0} step={1} defaultValue={current.storageGb} required />
        </Field>
        <Field label={t('common.reason')} error={errors.fields.reason}>
          <input name="reason" required maxLength={1000} />
        </Field>
        <div className="sm:col-span-5">
          <Button type="submit" disabled={save.isPending}>
            {save.isPending ? t('common.working') : t('limits.submit')}
          </Button>
        </div>
      </form>
      <div className="mt-3">
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {done && <Alert tone="success">{t('limits.done')}</Alert>}
      </div>
    </Card>
  );
}
