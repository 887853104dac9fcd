'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useT } from '~/app/_components/i18n';
import { inputClass } from '~/app/_components/field';
import { Alert, Button, Table, Td, Th } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';
import type { MemberRole } from '~/server/core/roles';
import { formatDate } from '~/server/i18n/format';

interface Member {
  userId: string;
  name: string;
  email: string;
  role: MemberRole;
  since: string;
}

export function MembersTable({
  orgName,
  members,
  myUserId,
  myRole,
  canManage,
}: {
  orgName: string;
  members: Member[];
  myUserId: string;
  myRole: MemberRole;
  canManage: boolean;
}) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [error, setError] = useState<string>();
  const onDone = {
    onSuccess: () => {
      setError(undefined);
      router.refresh();
    },
    onError: (e: unknown) => setError(formErrors(e, []).message ?? Object.values(formErrors(e, []).fields)[0]),
  };
  const changeRole = useMutation(trpc.organisation.changeRole.mutationOptions(onDone));
  const remove = useMutation(trpc.organisation.removeMember.mutationOptions(onDone));
  const roles: MemberRole[] = myRole === 'owner' ? ['owner', 'manager', 'member'] : ['manager', 'member'];

  return (
    <div className="space-y-3">
      {error && <Alert tone="error">{error}</Alert>}
      <Table>
        <thead>
          <tr>
            <Th>{t('staff.tenants.name')}</Th>
            <Th>{t('field.email')}</Th>
            <Th>{t('field.role')}</Th>
            <Th>{t('org.createdAt')}</Th>
            {canManage && <Th>{t('common.actions')}</Th>}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {members.map((m) => {
            const editable = canManage && (myRole === 'owner' || m.role !== 'owner');
            return (
              <tr key={m.userId}>
                <Td>
                  {m.name}
                  {m.userId === myUserId && <span className="ml-1 text-xs text-slate-500">({t('org.you')})</span>}
                </Td>
                <Td className="text-slate-600">{m.email}</Td>
                <Td>
                  {editable ? (
                    <select
                      aria-label={t('org.changeRole', { name: m.name })}
                      className={`${inputClass} w-36 py-1`}
                      value={m.role}
                      disabled={changeRole.isPending}
                      onChange={(e) => changeRole.mutate({ userId: m.userId, role: e.target.value as MemberRole })}
                    >
                      {(roles.includes(m.role) ? roles : [m.role, ...roles]).map((r) => (
                        <option key={r} value={r}>
                          {t(`role.${r}`)}
                        </option>
                      ))}
                    </select>
                  ) : (
                    t(`role.${m.role}`)
                  )}
                </Td>
                <Td className="text-slate-600">{formatDate(locale, m.since)}</Td>
                {canManage && (
                  <Td>
                    {editable && m.userId !== myUserId && (
                      <Button
                        variant="danger"
                        disabled={remove.isPending}
                        onClick={() => {
                          if (window.confirm(t('org.removeConfirm', { name: m.name, org: orgName }))) remove.mutate({ userId: m.userId });
                        }}
                      >
                        {t('org.remove')}
                      </Button>
                    )}
                  </Td>
                )}
              </tr>
            );
          })}
        </tbody>
      </Table>
    </div>
  );
}
