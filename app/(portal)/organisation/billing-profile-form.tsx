'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { CountryOptions } from '~/app/_components/country-options';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';

const SHOWN = ['legalName', 'street', 'postcode', 'city', 'country', 'vatId', 'billingEmail', 'purchaseOrder'];

export interface BillingProfileValues {
  legalName: string;
  street: string;
  postcode: string;
  city: string;
  country: string;
  vatId: string | null;
  billingEmail: string;
  purchaseOrder: string | null;
  updatedAt: string;
}

/** Who the company's invoices are made out to; managers and owners fill it in, everyone sees it. */
export function BillingProfileForm({ profile, countries, defaultCountry, canEdit }: { profile: BillingProfileValues | null; countries: readonly string[]; defaultCountry: string; canEdit: boolean }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [done, setDone] = useState(false);
  const save = useMutation(trpc.organisation.setBillingProfile.mutationOptions());
  const fe = errors.fields;

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const value = (name: string) => formValue(form, name);
    setErrors({ fields: {} });
    setDone(false);
    try {
      await save.mutateAsync({
        legalName: value('legalName'),
        street: value('street'),
        postcode: value('postcode'),
        city: value('city'),
        country: value('country'),
        vatId: value('vatId') || null,
        billingEmail: value('billingEmail'),
        purchaseOrder: value('purchaseOrder') || null,
      });
      setDone(true);
      router.refresh();
    } catch (error) {
      setErrors(formErrors(error, SHOWN));
    }
  }

  return (
    <Card title={t('billing.title')}>
      <p className="mb-4 text-sm text-slate-600">{profile ? t('billing.intro') : t('billing.missing')}</p>
      {/* Keyed by the saved version, so the fields show what was stored (a VAT ID normalised) after saving. */}
      <form key={profile?.updatedAt ?? 'new'} onSubmit={onSubmit} className="grid gap-4 sm:grid-cols-2" noValidate aria-label={t('billing.title')}>
        <fieldset disabled={!canEdit || save.isPending} className="contents">
          <Field label={t('billing.legalName')} error={fe.legalName} className="sm:col-span-2">
            <input name="legalName" autoComplete="organization" required maxLength={200} defaultValue={profile?.legalName} />
          </Field>
          <Field label={t('billing.street')} error={fe.street} className="sm:col-span-2">
            <input name="street" autoComplete="street-address" required maxLength={200} defaultValue={profile?.street} />
          </Field>
          <Field label={t('billing.postcode')} error={fe.postcode}>
            <input name="postcode" autoComplete="postal-code" required maxLength={16} defaultValue={profile?.postcode} />
          </Field>
          <Field label={t('billing.city')} error={fe.city}>
            <input name="city" autoComplete="address-level2" required maxLength={100} defaultValue={profile?.city} />
          </Field>
          <Field label={t('field.country')} error={fe.country}>
            <select name="country" defaultValue={profile?.country ?? defaultCountry}>
              <CountryOptions countries={countries} />
            </select>
          </Field>
          <Field label={t('billing.vatId')} error={fe.vatId} hint={t('billing.vatIdHint')}>
            <input name="vatId" autoComplete="off" maxLength={32} defaultValue={profile?.vatId ?? ''} />
          </Field>
          <Field label={t('billing.email')} error={fe.billingEmail}>
            <input name="billingEmail" type="email" autoComplete="email" required defaultValue={profile?.billingEmail} />
          </Field>
          <Field label={t('billing.purchaseOrder')} error={fe.purchaseOrder} hint={t('billing.purchaseOrderHint')}>
            <input name="purchaseOrder" autoComplete="off" maxLength={64} defaultValue={profile?.purchaseOrder ?? ''} />
          </Field>
          {canEdit && (
            <div className="sm:col-span-2">
              <Button type="submit" disabled={save.isPending}>
                {save.isPending ? t('common.working') : t('billing.save')}
              </Button>
            </div>
          )}
        </fieldset>
      </form>
      <div className="mt-3 space-y-2">
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {done && <Alert tone="success">{t('billing.saved')}</Alert>}
        {!canEdit && <p className="text-xs text-slate-500">{t('org.readOnly')}</p>}
      </div>
    </Card>
  );
}
