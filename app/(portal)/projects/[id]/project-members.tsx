'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { inputClass } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Table, Td, Th } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';

interface Member {
  userId: string;
  name: string;
  email: string;
  role: 'pi' | 'manager' | 'member';
}

export function ProjectMembers({ projectId, members, canManage, candidates }: { projectId: string; members: Member[]; canManage: boolean; candidates: { userId: string; name: string }[] }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [error, setError] = useState<string>();
  const [newMember, setNewMember] = useState('');
  const handlers = {
    onSuccess: () => {
      setError(undefined);
      setNewMember('');
      router.refresh();
    },
    onError: (e: unknown) => {
      const f = formErrors(e, []);
      setError(f.message ?? Object.values(f.fields)[0]);
    },
  };
  const setMember = useMutation(trpc.project.setMember.mutationOptions(handlers));
  const remove = useMutation(trpc.project.removeMember.mutationOptions(handlers));
  return (
    <div className="space-y-4">
      {error && <Alert tone="error">{error}</Alert>}
      <Table>
        <thead>
          <tr>
            <Th>{t('staff.tenants.name')}</Th>
            <Th>{t('field.email')}</Th>
            <Th>{t('field.role')}</Th>
            {canManage && <Th>{t('common.actions')}</Th>}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {members.map((m) => (
            <tr key={m.userId}>
              <Td>{m.name}</Td>
              <Td className="text-slate-600">{m.email}</Td>
              <Td>
                {canManage && m.role !== 'pi' ? (
                  <select
                    aria-label={t('project.roleOf', { name: m.name })}
                    className={`${inputClass} w-36 py-1`}
                    value={m.role}
                    onChange={(e) => setMember.mutate({ projectId, userId: m.userId, role: e.target.value as 'manager' | 'member' })}
                  >
                    <option value="member">{t('projectRole.member')}</option>
                    <option value="manager">{t('projectRole.manager')}</option>
                  </select>
                ) : (
                  t(`projectRole.${m.role}`)
                )}
              </Td>
              {canManage && (
                <Td>
                  {m.role !== 'pi' && (
                    <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate({ projectId, userId: m.userId })}>
                      {t('org.remove')}
                    </Button>
                  )}
                </Td>
              )}
            </tr>
          ))}
        </tbody>
      </Table>
      {canManage && candidates.length > 0 && (
        <form
          className="flex flex-wrap items-end gap-3"
          onSubmit={(e) => {
            e.preventDefault();
            if (newMember) setMember.mutate({ projectId, userId: newMember, role: 'member' });
          }}
        >
          <label className="space-y-1 text-sm">
            <span className="block font-medium text-slate-800">{t('project.addMember')}</span>
            <select className={`${inputClass} w-64`} value={newMember} onChange={(e) => setNewMember(e.target.value)}>
              <option value="">—</option>
              {candidates.map((c) => (
                <option key={c.userId} value={c.userId}>
                  {c.name}
                </option>
              ))}
            </select>
          </label>
          <Button type="submit" variant="secondary" disabled={!newMember || setMember.isPending}>
            {t('project.addMemberSubmit')}
          </Button>
        </form>
      )}
    </div>
  );
}
