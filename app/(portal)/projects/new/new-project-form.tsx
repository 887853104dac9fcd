'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field, inputClass } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';

type Role = 'none' | 'manager' | 'member';

type Residency = 'any' | 'EU' | 'DE';
const WORKLOADS = ['training', 'fine_tuning', 'inference'] as const;
const RESIDENCIES: Residency[] = ['any', 'EU', 'DE'];

/**
 * A new project. Research tenants give an abstract and their field of science; companies say what they
 * want to run (kind of workload) and where their data may be processed (no looser than the tenant's rule).
 */
export function NewProjectForm({
  colleagues,
  tenantKind,
  tenantResidency,
}: {
  colleagues: { userId: string; name: string; email: string }[];
  tenantKind: 'academic' | 'company';
  tenantResidency: Residency;
}) {
  const company = tenantKind === 'company';
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [roles, setRoles] = useState<Record<string, Role>>({});
  const create = useMutation(trpc.project.create.mutationOptions());

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setErrors({ fields: {} });
    try {
      const project = await create.mutateAsync({
        title: formValue(form, 'title'),
        abstract: formValue(form, 'abstract'),
        ...(company
          ? { workloadKind: (formValue(form, 'workloadKind') || undefined) as (typeof WORKLOADS)[number] | undefined, dataResidency: formValue(form, 'dataResidency') as Residency }
          : { fieldOfScience: formValue(form, 'fieldOfScience') }),
        members: Object.entries(roles)
          .filter(([, role]) => role !== 'none')
          .map(([userId, role]) => ({ userId, role: role as 'manager' | 'member' })),
      });
      router.push(`/projects/${project.id}`);
    } catch (error) {
      setErrors(formErrors(error, ['title', 'abstract', 'fieldOfScience', 'workloadKind', 'dataResidency', 'members']));
    }
  }

  return (
    <Card>
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        <Field label={t('project.title')} error={errors.fields.title}>
          <input name="title" required maxLength={200} />
        </Field>
        {company ? (
          <>
            <fieldset>
              <legend className="text-sm font-medium text-slate-800">{t('project.workload')}</legend>
              <p className="mb-2 text-xs text-slate-500">{t('project.workloadHint')}</p>
              <div className="flex flex-wrap gap-4">
                {WORKLOADS.map((w) => (
                  <label key={w} className="flex items-center gap-2 text-sm">
                    <input type="radio" name="workloadKind" value={w} required aria-describedby={errors.fields.workloadKind ? 'workload-error' : undefined} />
                    {t(`workload.${w}`)}
                  </label>
                ))}
              </div>
              {errors.fields.workloadKind && (
                <p id="workload-error" className="mt-1 text-sm text-red-700">
                  {errors.fields.workloadKind}
                </p>
              )}
            </fieldset>
            <Field label={t('project.dataResidency')} error={errors.fields.dataResidency}>
              <select name="dataResidency" defaultValue={tenantResidency}>
                {RESIDENCIES.slice(RESIDENCIES.indexOf(tenantResidency)).map((r) => (
                  <option key={r} value={r}>
                    {t(`residency.${r}`)}
                  </option>
                ))}
              </select>
            </Field>
            <Field label={t('project.descriptionCompany')} error={errors.fields.abstract} hint={t('project.descriptionCompanyHint')}>
              <textarea name="abstract" rows={5} required maxLength={5000} />
            </Field>
          </>
        ) : (
          <>
            <Field label={t('project.abstract')} error={errors.fields.abstract} hint={t('project.abstractHint')}>
              <textarea name="abstract" rows={5} required maxLength={5000} />
            </Field>
            <Field label={t('project.field')} error={errors.fields.fieldOfScience}>
              <input name="fieldOfScience" required maxLength={120} list="fields-of-science" />
            </Field>
            <datalist id="fields-of-science">
              {['Computer science', 'Life sciences', 'Physics', 'Chemistry', 'Earth and climate sciences', 'Engineering', 'Medicine', 'Linguistics', 'Robotics'].map((f) => (
                <option key={f} value={f} />
              ))}
            </datalist>
          </>
        )}
        {colleagues.length > 0 && (
          <fieldset>
            <legend className="text-sm font-medium text-slate-800">{t('project.members')}</legend>
            <p className="mb-2 text-xs text-slate-500">{t('project.membersHint')}</p>
            <ul className="divide-y divide-slate-100 rounded-md ring-1 ring-slate-200">
              {colleagues.map((c) => (
                <li key={c.userId} className="flex items-center justify-between gap-3 px-3 py-2 text-sm">
                  <span>
                    {c.name} <span className="text-slate-500">{c.email}</span>
                  </span>
                  <select
                    aria-label={t('project.roleOf', { name: c.name })}
                    className={`${inputClass} w-40 py-1`}
                    value={roles[c.userId] ?? 'none'}
                    onChange={(e) => setRoles({ ...roles, [c.userId]: e.target.value as Role })}
                  >
                    <option value="none">{t('project.notInProject')}</option>
                    <option value="member">{t('projectRole.member')}</option>
                    <option value="manager">{t('projectRole.manager')}</option>
                  </select>
                </li>
              ))}
            </ul>
            {errors.fields.members && <p className="mt-1 text-sm text-red-700">{errors.fields.members}</p>}
          </fieldset>
        )}
        <Button type="submit" disabled={create.isPending}>
          {create.isPending ? t('common.working') : t('projects.create')}
        </Button>
      </form>
    </Card>
  );
}
