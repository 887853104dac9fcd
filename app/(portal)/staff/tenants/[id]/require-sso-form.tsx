'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Button } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';

/** Requires single sign-on of a tenant's members, or allows passwords again; the reason goes to the audit log. */
export function RequireSsoForm({ orgId, orgName, requireSso }: { orgId: string; orgName: string; requireSso: boolean }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const change = useMutation(trpc.staff.setRequireSso.mutationOptions());
  const [error, setError] = useState<string>();

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const target = event.currentTarget;
    setError(undefined);
    try {
      await change.mutateAsync({ orgId, requireSso: !requireSso, reason: formValue(new FormData(target), 'reason') });
      target.reset();
      router.refresh();
    } catch (e) {
      const errors = formErrors(e, ['reason']);
      setError(errors.fields.reason ?? errors.message);
    }
  }

  return (
    <form onSubmit={onSubmit} className="flex max-w-md flex-col gap-2" noValidate>
      <Field label={t('staff.tenants.ssoReason', { org: orgName })} error={error}>
        <input name="reason" required maxLength={1000} />
      </Field>
      <div>
        <Button type="submit" variant={requireSso ? 'secondary' : 'primary'} disabled={change.isPending}>
          {change.isPending ? t('common.working') : requireSso ? t('staff.tenants.allowPasswords') : t('staff.tenants.requireSso')}
        </Button>
      </div>
    </form>
  );
}
