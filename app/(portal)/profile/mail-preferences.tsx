'use client';
import { useMutation } from '@tanstack/react-query';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';
import type { MailKind } from '~/server/core/mail/kinds';

export interface MailPreferenceView {
  kind: MailKind;
  email: boolean;
  adjustable: boolean;
}

/** The person's choice, per kind of notice, whether it also comes by e-mail: native checkboxes in one form, saved together. */
export function MailPreferences({ preferences }: { preferences: MailPreferenceView[] }) {
  const { t } = useT();
  const trpc = useTRPC();
  const save = useMutation(trpc.notification.setPreferences.mutationOptions());
  const adjustable = preferences.filter((p) => p.adjustable);
  const { errors, done, onSubmit } = useFormMutation(save.mutateAsync, {
    read: (form) => ({ choices: adjustable.map((p) => ({ kind: p.kind, email: form.get(`mail-${p.kind}`) === 'on' })) }),
    fields: [],
  });
  return (
    <Card title={t('profile.mailTitle')}>
      {/* Keyed by the saved choices, so the boxes show what was stored once the page refreshes. */}
      <form key={preferences.map((p) => `${p.kind}:${p.email}`).join()} onSubmit={onSubmit} data-testid="mail-preferences">
        <fieldset>
          <legend className="mb-3 text-sm text-slate-600">{t('profile.mailIntro')}</legend>
          <ul className="space-y-2">
            {preferences.map((p) => (
              <li key={p.kind}>
                <label className="flex items-start gap-3 text-sm">
                  <input type="checkbox" name={`mail-${p.kind}`} defaultChecked={p.email} disabled={!p.adjustable} className="mt-0.5 h-4 w-4 rounded border-slate-300 text-indigo-600 focus-visible:ring-2 focus-visible:ring-indigo-500" />
                  <span>
                    {t(`mailKind.${p.kind}`)}
                    {!p.adjustable && <span className="ml-2 text-xs text-slate-500">({t('profile.mailAlways')})</span>}
                  </span>
                </label>
              </li>
            ))}
          </ul>
        </fieldset>
        <div className="mt-4 flex flex-wrap items-center gap-3">
          <Button type="submit" disabled={save.isPending}>
            {save.isPending ? t('common.working') : t('profile.mailSave')}
          </Button>
          <div role="status" aria-live="polite">
            {done && <Alert tone="success">{t('profile.mailSaved')}</Alert>}
          </div>
        </div>
        {errors.message && (
          <div className="mt-3">
            <Alert tone="error">{errors.message}</Alert>
          </div>
        )}
      </form>
    </Card>
  );
}
