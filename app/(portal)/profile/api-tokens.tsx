'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { API_TOKEN_DEFAULT_DAYS, API_TOKEN_MAX_DAYS } from '~/server/core/rest/tokens';
import { STAFF_SCOPES, TENANT_SCOPES, type TokenScope } from '~/server/core/rest/scopes';

/**
 * Makes a personal API token: a name, the tenant it acts for, its scopes and lifetime. The token is
 * shown once, here, with a copy button; the list below (a server component) never shows it again.
 */
export function CreateApiToken({ organisations, projects, isStaff }: { organisations: { id: string; name: string }[]; projects: { id: string; title: string; orgId: string }[]; isStaff: boolean }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const create = useMutation(trpc.account.createApiToken.mutationOptions());
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [made, setMade] = useState<{ name: string; token: string }>();
  const [copied, setCopied] = useState(false);
  // A token that calls models names the project that pays: chosen among the chosen tenant's.
  const [orgChoice, setOrgChoice] = useState(organisations[0]?.id ?? '');
  const [inference, setInference] = useState(false);
  const orgProjects = projects.filter((p) => p.orgId === orgChoice);
  const scopes: readonly TokenScope[] = isStaff ? [...TENANT_SCOPES, ...STAFF_SCOPES] : TENANT_SCOPES;

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const target = event.currentTarget;
    const form = new FormData(target);
    setErrors({ fields: {} });
    setMade(undefined);
    setCopied(false);
    try {
      const orgId = formValue(form, 'orgId');
      const result = await create.mutateAsync({
        name: formValue(form, 'name'),
        orgId: orgId === '' ? null : orgId,
        scopes: scopes.filter((s) => form.get(`scope-${s}`) === 'on'),
        expiresInDays: Number(formValue(form, 'expiresInDays')),
        projectId: inference ? formValue(form, 'projectId') || null : null,
      });
      target.reset();
      setInference(false);
      setMade({ name: result.view.name, token: result.token });
      router.refresh();
    } catch (e) {
      setErrors(formErrors(e, ['name', 'orgId', 'scopes', 'expiresInDays', 'projectId']));
    }
  }

  return (
    <div className="space-y-4">
      {made && (
        <div role="status" className="space-y-2 rounded-md border border-emerald-200 bg-emerald-50 p-3 text-sm text-emerald-900" data-testid="new-token">
          <p>{t('profile.tokenCreated', { name: made.name })}</p>
          <div className="flex flex-wrap items-center gap-2">
            <code className="break-all rounded bg-white px-2 py-1 font-mono text-xs text-slate-900" data-testid="new-token-value">
              {made.token}
            </code>
            <Button
              variant="secondary"
              onClick={() =>
                void navigator.clipboard?.writeText(made.token).then(
                  () => setCopied(true),
                  () => setCopied(false),
                )
              }
            >
              {copied ? t('profile.tokenCopied') : t('profile.tokenCopy')}
            </Button>
          </div>
        </div>
      )}
      <form onSubmit={onSubmit} className="grid gap-3 sm:grid-cols-2" noValidate data-testid="create-token">
        {errors.message && (
          <div className="sm:col-span-2">
            <Alert tone="error">{errors.message}</Alert>
          </div>
        )}
        <Field label={t('profile.tokenName')} error={errors.fields.name} hint={t('profile.tokenNameHint')}>
          <input name="name" required maxLength={80} autoComplete="off" />
        </Field>
        <Field label={t('profile.tokenOrg')} error={errors.fields.orgId}>
          <select name="orgId" defaultValue={organisations[0]?.id ?? ''} onChange={(e) => setOrgChoice(e.target.value)}>
            {organisations.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
            {isStaff && <option value="">{t('profile.tokenOrgNone')}</option>}
          </select>
        </Field>
        <fieldset className="sm:col-span-2" aria-describedby={errors.fields.scopes ? 'token-scopes-error' : undefined}>
          <legend className="mb-1 text-sm font-medium text-slate-800">{t('profile.tokenScopes')}</legend>
          <ul className="grid gap-1 sm:grid-cols-2">
            {scopes.map((s) => (
              <li key={s}>
                <label className="flex items-start gap-2 text-sm">
                  <input
                    type="checkbox"
                    name={`scope-${s}`}
                    defaultChecked={s === 'read'}
                    onChange={s === 'inference' ? (e) => setInference(e.target.checked) : undefined}
                    className="mt-0.5 h-4 w-4 rounded border-slate-300 text-indigo-600 focus-visible:ring-2 focus-visible:ring-indigo-500" />
                  <span>{t(`tokenScope.${s}`)}</span>
                </label>
              </li>
            ))}
          </ul>
          {errors.fields.scopes && (
            <p id="token-scopes-error" className="mt-1 text-sm text-red-700">
              {errors.fields.scopes}
            </p>
          )}
        </fieldset>
        {inference && (
          <Field label={t('profile.tokenProject')} error={errors.fields.projectId} hint={t('profile.tokenProjectHint')}>
            <select name="projectId" defaultValue={orgProjects[0]?.id ?? ''} key={orgChoice}>
              {orgProjects.length === 0 && <option value="">{t('profile.tokenProjectNone')}</option>}
              {orgProjects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.title}
                </option>
              ))}
            </select>
          </Field>
        )}
        <Field label={t('profile.tokenDays')} error={errors.fields.expiresInDays} hint={t('profile.tokenDaysHint')}>
          <input name="expiresInDays" type="number" inputMode="numeric" min={1} max={API_TOKEN_MAX_DAYS} defaultValue={API_TOKEN_DEFAULT_DAYS} required />
        </Field>
        <div className="self-end">
          <Button type="submit" disabled={create.isPending}>
            {create.isPending ? t('common.working') : t('profile.tokenCreate')}
          </Button>
        </div>
      </form>
    </div>
  );
}

/** Revokes one of the person's tokens, after a confirmation. */
export function RevokeApiToken({ tokenId, name }: { tokenId: string; name: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const revoke = useMutation(trpc.account.revokeApiToken.mutationOptions({ onSuccess: () => router.refresh() }));
  return (
    <div className="flex flex-col items-end gap-2">
      <Button
        variant="secondary"
        disabled={revoke.isPending}
        aria-label={t('profile.tokenRevokeLabel', { name })}
        onClick={() => {
          if (window.confirm(t('profile.tokenRevokeConfirm', { name }))) revoke.mutate({ tokenId });
        }}
      >
        {t('profile.tokenRevoke')}
      </Button>
      {revoke.error && <Alert tone="error">{formErrors(revoke.error, []).message}</Alert>}
    </div>
  );
}
