'use client';
// "Sweep": run the job once per task of a job array (Slurm's --array). Either task indexes as Slurm
// writes them ("0-99%8"; each task reads its index in $SLURM_ARRAY_TASK_ID), or a list of values of one
// parameter: task i runs with the variable set to the i-th value, by a line put before the command.
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { cx } from '~/app/_components/ui';

export type SweepMode = 'one' | 'indexes' | 'values';

export interface Sweep {
  mode: SweepMode;
  indexes: string;
  name: string;
  values: string;
  atOnce: string;
}

export const NO_SWEEP: Sweep = { mode: 'one', indexes: '0-9', name: 'LR', values: '0.1\n0.01\n0.001', atOnce: '' };

/** The values of a list sweep: one per non-empty line, trimmed. */
function valuesOf(sweep: Sweep): string[] {
  return sweep.values
    .split('\n')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/**
 * sweepRequest turns the form's sweep into the job's array text and its command: a list sweep prefixes
 * the command with a bash array of the values and the line that picks the task's own.
 */
export function sweepRequest(sweep: Sweep, command: string): { array?: string; command: string } {
  if (sweep.mode === 'one') return { command };
  const atOnce = sweep.atOnce.trim() === '' ? '' : `%${sweep.atOnce.trim()}`;
  if (sweep.mode === 'indexes') return { array: `${sweep.indexes.trim()}${atOnce}`, command };
  const values = valuesOf(sweep);
  if (values.length === 0) return { array: `${atOnce}`, command };
  const prelude = `SWEEP_VALUES=(${values.map(quote).join(' ')})\nexport ${sweep.name}="\${SWEEP_VALUES[$SLURM_ARRAY_TASK_ID]}"\n`;
  return { array: `0-${values.length - 1}${atOnce}`, command: `${prelude}${command}` };
}

export function SweepFields({ value, onChange, error }: { value: Sweep; onChange: (value: Sweep) => void; error?: string }) {
  const { t } = useT();
  const set = (change: Partial<Sweep>) => onChange({ ...value, ...change });
  const values = valuesOf(value);
  return (
    <div className="space-y-3" data-testid="sweep">
      <div className="flex flex-wrap gap-2" role="radiogroup" aria-label={t('jobs.sweep.title')}>
        {(['one', 'indexes', 'values'] as const).map((mode) => (
          <label key={mode} className={cx('cursor-pointer rounded-md px-3 py-1.5 text-sm ring-1', value.mode === mode ? 'bg-indigo-50 ring-2 ring-indigo-600' : 'ring-slate-300')}>
            <input type="radio" name="sweep-mode" className="mr-2" checked={value.mode === mode} onChange={() => set({ mode })} data-testid={`sweep-mode-${mode}`} />
            {t(`jobs.sweep.mode.${mode}`)}
          </label>
        ))}
      </div>
      {value.mode === 'indexes' && (
        <Field label={t('jobs.sweep.indexes')} hint={t('jobs.sweep.indexesHint')} error={error}>
          <input value={value.indexes} onChange={(e) => set({ indexes: e.target.value })} className="font-mono" data-testid="sweep-indexes" />
        </Field>
      )}
      {value.mode === 'values' && (
        <div className="grid gap-3 md:grid-cols-2">
          <Field label={t('jobs.sweep.name')} hint={t('jobs.sweep.nameHint')}>
            <input value={value.name} onChange={(e) => set({ name: e.target.value.replace(/[^A-Za-z0-9_]/g, '') })} className="font-mono" data-testid="sweep-name" />
          </Field>
          <Field label={t('jobs.sweep.values')} hint={t('jobs.sweep.valuesHint', { tasks: values.length, name: value.name || '…' })} error={error}>
            <textarea rows={4} value={value.values} onChange={(e) => set({ values: e.target.value })} className="font-mono" data-testid="sweep-values" />
          </Field>
        </div>
      )}
      {value.mode !== 'one' && (
        <Field label={t('jobs.sweep.atOnce')} hint={t('jobs.sweep.atOnceHint')}>
          <input type="number" min={1} step={1} value={value.atOnce} onChange={(e) => set({ atOnce: e.target.value })} className="w-32" data-testid="sweep-at-once" />
        </Field>
      )}
    </div>
  );
}
