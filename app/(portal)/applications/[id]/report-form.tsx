'use client';
// The PI's form for the end-of-allocation report (issue #32): results, publications by DOI and data sets,
// one per line; the server reads and checks each and names the one it refuses.
import { useMutation } from '@tanstack/react-query';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';
import { parseList } from '~/server/core/reports';

export function ReportForm({ applicationId, initial }: { applicationId: string; initial: { summary: string; publications: string[]; datasets: string[] } | null }) {
  const { t } = useT();
  const trpc = useTRPC();
  const file = useMutation(trpc.allocationReports.file.mutationOptions());
  const { errors, done, onSubmit } = useFormMutation(file.mutateAsync, {
    read: (form) => ({ applicationId, summary: formValue(form, 'summary'), publications: parseList(formValue(form, 'publications')), datasets: parseList(formValue(form, 'datasets')) }),
    fields: ['summary', 'publications', 'datasets'],
  });
  return (
    <form onSubmit={onSubmit} className="space-y-4" noValidate aria-label={t('report.title')} data-testid="report-form">
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
      <Field label={t('report.summary')} hint={t('report.summaryHint')} error={errors.fields.summary}>
        <textarea name="summary" rows={6} maxLength={20_000} defaultValue={initial?.summary ?? ''} required />
      </Field>
      <div className="grid gap-4 md:grid-cols-2">
        <Field label={t('report.publications')} hint={t('report.publicationsHint')} error={errors.fields.publications}>
          <textarea name="publications" rows={4} defaultValue={initial?.publications.join('\n') ?? ''} spellCheck={false} />
        </Field>
        <Field label={t('report.datasets')} hint={t('report.datasetsHint')} error={errors.fields.datasets}>
          <textarea name="datasets" rows={4} defaultValue={initial?.datasets.join('\n') ?? ''} spellCheck={false} />
        </Field>
      </div>
      <div className="flex items-center gap-3">
        <Button type="submit" disabled={file.isPending}>
          {initial ? t('report.refile') : t('report.file')}
        </Button>
        {done && (
          <span className="text-sm text-green-700" role="status">
            {t('report.filedNow')}
          </span>
        )}
      </div>
    </form>
  );
}
