'use client';
// The job's inputs: files and folders picked from its project's workspace at the job's site. The job
// gets their paths on the cluster in PORTAL_INPUTS (joined by `:`); PORTAL_WORKSPACE and PORTAL_JOB_DIR
// name its workspace and its own folder.
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useT } from '~/app/_components/i18n';
import { joinPath } from '~/app/_lib/files';
import { useTRPC } from '~/app/_lib/trpc';
import { formatBytes } from '~/server/i18n/format';

export function InputsPicker({ projectId, site, value, onChange, error }: { projectId: string; site: string; value: string[]; onChange: (value: string[]) => void; error?: string }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const [path, setPath] = useState('');
  const listing = useQuery({ ...trpc.files.list.queryOptions({ projectId, site, path, limit: 200 }), retry: false });
  const names = path ? path.split('/') : [];
  const toggle = (p: string) => onChange(value.includes(p) ? value.filter((v) => v !== p) : [...value, p]);
  return (
    <div className="space-y-3">
      <p className="text-xs text-slate-600">{t('jobs.inputs.hint')}</p>
      <nav aria-label={t('files.breadcrumb')} className="flex flex-wrap items-center gap-1 text-sm">
        <button type="button" className="text-indigo-700 hover:underline" onClick={() => setPath('')}>
          {t('files.workspace')}
        </button>
        {names.map((name, i) => (
          <span key={`${i}-${name}`} className="flex items-center gap-1">
            <span className="text-slate-400">/</span>
            <button type="button" className="font-mono text-indigo-700 hover:underline" onClick={() => setPath(names.slice(0, i + 1).join('/'))}>
              {name}
            </button>
          </span>
        ))}
        <Link href={`/projects/${projectId}/files?site=${encodeURIComponent(site)}`} className="ml-auto text-xs text-indigo-700 hover:underline" target="_blank">
          {t('jobs.inputs.manage')}
        </Link>
      </nav>
      {listing.isError ? (
        <p className="text-sm text-red-700">{listing.error.message}</p>
      ) : !listing.data ? (
        <p className="text-sm text-slate-500">{t('common.working')}</p>
      ) : listing.data.entries.length === 0 ? (
        <p className="text-sm text-slate-500">{t('files.folderEmpty')}</p>
      ) : (
        <ul className="max-h-56 divide-y divide-slate-100 overflow-auto rounded-md ring-1 ring-slate-200" data-testid="inputs-list">
          {listing.data.entries
            .filter((e) => e.type === 'file' || e.type === 'folder')
            .map((e) => {
              const p = joinPath(path, e.name);
              return (
                <li key={e.name} className="flex items-center gap-3 px-3 py-1.5 text-sm">
                  <input type="checkbox" id={`input-${p}`} checked={value.includes(p)} onChange={() => toggle(p)} aria-label={t('jobs.inputs.pick', { name: e.name })} />
                  {e.type === 'folder' ? (
                    <button type="button" className="min-w-0 flex-1 truncate text-left font-mono text-xs text-indigo-700 hover:underline" onClick={() => setPath(p)}>
                      {e.name}/
                    </button>
                  ) : (
                    <label htmlFor={`input-${p}`} className="min-w-0 flex-1 truncate font-mono text-xs">
                      {e.name}
                    </label>
                  )}
                  <span className="text-xs text-slate-500 tabular-nums">{e.type === 'file' ? formatBytes(locale, e.size) : ''}</span>
                </li>
              );
            })}
        </ul>
      )}
      {value.length > 0 && (
        <div>
          <p className="text-sm font-medium text-slate-800">{t('jobs.inputs.chosen', { n: value.length })}</p>
          <ul className="mt-1 flex flex-wrap gap-2" data-testid="inputs-chosen">
            {value.map((p) => (
              <li key={p} className="inline-flex items-center gap-1 rounded bg-slate-100 px-2 py-0.5 font-mono text-xs">
                {p}
                <button type="button" className="text-slate-500 hover:text-red-700" onClick={() => toggle(p)} aria-label={t('jobs.inputs.remove', { name: p })}>
                  ×
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      {error && (
        <p className="text-sm text-red-700" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
