'use client';
// Staff admins let a tenant with overdue invoices submit again until a day, with a reason (audited).
import { useMutation } from '@tanstack/react-query';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';

export function LiftBlockForm({ tenants, today }: { tenants: { id: string; name: string }[]; today: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const lift = useMutation(trpc.invoice.liftOverdueBlock.mutationOptions());
  const { errors, done, onSubmit } = useFormMutation(lift.mutateAsync, {
    read: (form) => ({ orgId: formValue(form, 'orgId'), untilDay: formValue(form, 'untilDay'), reason: formValue(form, 'reason') }),
    fields: ['orgId', 'untilDay', 'reason'],
  });
  return (
    <form onSubmit={onSubmit} className="grid grid-cols-1 items-start gap-4 md:grid-cols-3" noValidate>
      <Field label={t('payment.lift.tenant')} error={errors.fields.orgId}>
        <select name="orgId" required defaultValue={tenants[0]?.id}>
          {tenants.map((tenant) => (
            <option key={tenant.id} value={tenant.id}>
              {tenant.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label={t('payment.lift.until')} error={errors.fields.untilDay}>
        <input name="untilDay" type="date" required min={today} defaultValue={today} />
      </Field>
      <Field label={t('common.reason')} error={errors.fields.reason}>
        <input name="reason" required maxLength={1000} />
      </Field>
      <div className="md:col-span-3">
        <Button type="submit" disabled={lift.isPending}>
          {lift.isPending ? t('common.working') : t('payment.lift.submit')}
        </Button>
      </div>
      <div className="md:col-span-3">
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {done && <Alert tone="success">{t('payment.lift.done')}</Alert>}
      </div>
    </form>
  );
}
