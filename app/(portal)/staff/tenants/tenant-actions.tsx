'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Button } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { formErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';
import type { OrgStatus, TenantStatusAction } from '~/server/core/roles';

const ACTIONS: Record<OrgStatus, TenantStatusAction[]> = {
  pending_verification: ['verify', 'suspend'],
  active: ['suspend'],
  suspended: ['reactivate'],
};

/** Verify, suspend or reactivate a tenant; each asks for a reason, which goes to the audit log. */
export function TenantActions({ orgId, orgName, status }: { orgId: string; orgName: string; status: OrgStatus }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [action, setAction] = useState<TenantStatusAction>();
  const [error, setError] = useState<string>();
  const change = useMutation(trpc.staff.changeTenantStatus.mutationOptions());
  const label = (a: TenantStatusAction) => t(`staff.tenants.${a}`);

  if (!action) {
    return (
      <div className="flex flex-wrap gap-2">
        {ACTIONS[status].map((a) => (
          <Button key={a} variant={a === 'suspend' ? 'danger' : 'primary'} onClick={() => setAction(a)} aria-label={`${label(a)} ${orgName}`}>
            {label(a)}
          </Button>
        ))}
      </div>
    );
  }

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const reason = formValue(new FormData(event.currentTarget), 'reason');
    setError(undefined);
    try {
      await change.mutateAsync({ orgId, action: action!, reason });
      setAction(undefined);
      router.refresh();
    } catch (e) {
      const errors = formErrors(e, ['reason']);
      setError(errors.fields.reason ?? errors.message);
    }
  }

  return (
    <form onSubmit={onSubmit} className="flex min-w-72 flex-col gap-2" noValidate>
      <Field label={t('staff.tenants.reasonFor', { action: label(action).toLowerCase(), org: orgName })} error={error}>
        <input name="reason" required autoFocus maxLength={1000} />
      </Field>
      <div className="flex gap-2">
        <Button type="submit" variant={action === 'suspend' ? 'danger' : 'primary'} disabled={change.isPending}>
          {change.isPending ? t('common.working') : label(action)}
        </Button>
        <Button variant="secondary" onClick={() => setAction(undefined)}>
          {t('common.cancel')}
        </Button>
      </div>
    </form>
  );
}
