'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card, Table, Td, Th } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';
import type { MemberRole } from '~/server/core/roles';
import { formatDate } from '~/server/i18n/format';

interface OpenInvitation {
  id: string;
  email: string;
  role: MemberRole;
  expiresAt: string;
}

export function InvitationsPanel({ myRole, invitations }: { myRole: MemberRole; invitations: OpenInvitation[] }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [created, setCreated] = useState<{ email: string; link: string; mailed: boolean }>();
  const [copied, setCopied] = useState(false);
  const invite = useMutation(trpc.organisation.invite.mutationOptions());
  const revoke = useMutation(trpc.organisation.revokeInvitation.mutationOptions({ onSuccess: () => router.refresh() }));
  const roles: MemberRole[] = myRole === 'owner' ? ['member', 'manager', 'owner'] : ['member', 'manager'];

  const { errors, onSubmit } = useFormMutation(invite.mutateAsync, {
    read: (form) => {
      setCopied(false);
      return { email: formValue(form, 'email'), role: formValue(form, 'role') as MemberRole };
    },
    fields: ['email', 'role'],
    onDone: (result) => setCreated({ email: result.email, link: `${window.location.origin}${result.path}`, mailed: result.mailed }),
  });

  return (
    <>
      <Card title={t('org.invite')}>
        <form onSubmit={onSubmit} className="grid items-start gap-4 sm:grid-cols-[1fr_12rem_auto]" noValidate>
          <Field label={t('field.email')} error={errors.fields.email}>
            <input name="email" type="email" required autoComplete="off" />
          </Field>
          <Field label={t('field.role')} error={errors.fields.role}>
            <select name="role" defaultValue="member">
              {roles.map((r) => (
                <option key={r} value={r}>
                  {t(`role.${r}`)}
                </option>
              ))}
            </select>
          </Field>
          <Button type="submit" disabled={invite.isPending} className="sm:mt-6">
            {invite.isPending ? t('common.working') : t('org.inviteSubmit')}
          </Button>
        </form>
        <div className="mt-4 space-y-3">
          {errors.message && <Alert tone="error">{errors.message}</Alert>}
          {created && (
            <Alert tone="success">
              <p>{t(created.mailed ? 'org.inviteMailed' : 'org.inviteCreated', { email: created.email })}</p>
              <div className="mt-2 flex items-center gap-2">
                <input readOnly value={created.link} aria-label="Invitation link" data-testid="invitation-link" className="w-full rounded border border-emerald-300 bg-white px-2 py-1 font-mono text-xs" onFocus={(e) => e.currentTarget.select()} />
                <Button
                  variant="secondary"
                  onClick={() => {
                    void navigator.clipboard?.writeText(created.link).then(() => setCopied(true));
                  }}
                >
                  {copied ? t('common.copied') : t('common.copy')}
                </Button>
              </div>
            </Alert>
          )}
        </div>
      </Card>
      <Card title={t('org.invitations')}>
        {invitations.length === 0 ? (
          <p className="text-sm text-slate-600">{t('org.noInvitations')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('field.email')}</Th>
                <Th>{t('field.role')}</Th>
                <Th>{t('org.expiresColumn')}</Th>
                <Th>{t('common.actions')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {invitations.map((inv) => (
                <tr key={inv.id}>
                  <Td>{inv.email}</Td>
                  <Td>{t(`role.${inv.role}`)}</Td>
                  <Td className="text-slate-600">{formatDate(locale, inv.expiresAt)}</Td>
                  <Td>
                    <Button variant="danger" disabled={revoke.isPending} onClick={() => revoke.mutate({ invitationId: inv.id })}>
                      {t('org.revoke')}
                    </Button>
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
}
