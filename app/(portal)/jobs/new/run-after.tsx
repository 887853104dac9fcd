'use client';
// "Start after": the job waits until another job of its project has ended as asked (Slurm's
// --dependency): completed, ended at all, or failed. The list holds the project's recent jobs.
import { useQuery } from '@tanstack/react-query';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { useTRPC } from '~/app/_lib/trpc';

export type Dependency = { type: 'afterok' | 'afterany' | 'afternotok'; jobIds: string[] } | null;

const TYPES = ['afterok', 'afterany', 'afternotok'] as const;

export function RunAfter({ projectId, value, onChange, error }: { projectId: string; value: Dependency; onChange: (value: Dependency) => void; error?: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  // Read afresh each time the form opens: the job just submitted must be there to pick.
  const jobs = useQuery({ ...trpc.job.list.queryOptions({ status: 'all', projectId, limit: 50 }), refetchOnMount: 'always' });
  const chosen = value?.jobIds[0] ?? '';
  return (
    <div className="space-y-3">
      <Field label={t('jobs.after.job')} hint={t('jobs.after.hint')} error={error}>
        <select value={chosen} onChange={(e) => onChange(e.target.value ? { type: value?.type ?? 'afterok', jobIds: [e.target.value] } : null)} data-testid="run-after-job">
          <option value="">{t('jobs.after.none')}</option>
          {(jobs.data ?? []).map((j) => (
            <option key={j.id} value={j.id}>
              {j.name} · {t(`jobState.${j.state}`)}
            </option>
          ))}
        </select>
      </Field>
      {value && (
        <Field label={t('jobs.after.when')}>
          <select value={value.type} onChange={(e) => onChange({ ...value, type: e.target.value as (typeof TYPES)[number] })} data-testid="run-after-type">
            {TYPES.map((type) => (
              <option key={type} value={type}>
                {t(`jobs.after.${type}`)}
              </option>
            ))}
          </select>
        </Field>
      )}
    </div>
  );
}
