'use client';
// A job's folder in its project's workspace (jobs/<id>): its files to download (resumable, Range), its
// folders to open or download as one archive. Refreshed while the job runs.
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useEffect, useState } from 'react';
import { useT } from '~/app/_components/i18n';
import { Table, Td, Th } from '~/app/_components/ui';
import { useTRPC } from '~/app/_lib/trpc';
import { formatBytes, formatDateTime } from '~/server/i18n/format';
import { downloadHref } from '~/app/_lib/files';

export function JobFiles({ jobId, active }: { jobId: string; active: boolean }) {
  const { t, locale, timeZone } = useT();
  const trpc = useTRPC();
  const [path, setPath] = useState<string[]>([]);
  const query = useQuery({ ...trpc.files.jobFolder.queryOptions({ jobId, path: path.join('/') }), refetchInterval: active ? 3000 : false });
  // Once the job has ended, once more: what it wrote last (a model, metrics) is there now.
  const { refetch } = query;
  useEffect(() => {
    if (!active) void refetch();
  }, [active, refetch]);
  const data = query.data;
  if (!data) return <p className="text-sm text-slate-500">{query.isError ? query.error.message : t('common.working')}</p>;
  const base = [data.folder, ...path].join('/');
  return (
    <div className="space-y-3">
      <nav aria-label={t('files.breadcrumb')} className="flex flex-wrap items-center gap-1 text-sm">
        <button type="button" className="font-mono text-indigo-700 hover:underline" onClick={() => setPath([])}>
          {data.folder}
        </button>
        {path.map((name, i) => (
          <span key={`${i}-${name}`} className="flex items-center gap-1">
            <span className="text-slate-400">/</span>
            <button type="button" className="font-mono text-indigo-700 hover:underline" onClick={() => setPath(path.slice(0, i + 1))}>
              {name}
            </button>
          </span>
        ))}
        <span className="ml-auto flex gap-3">
          <a className="text-indigo-700 hover:underline" href={downloadHref(data.projectId, data.site, base)} download data-testid="job-files-archive">
            {t('files.downloadFolder')}
          </a>
          <Link className="text-indigo-700 hover:underline" href={`/projects/${data.projectId}/files?site=${encodeURIComponent(data.site)}&path=${encodeURIComponent(base)}`}>
            {t('files.openInWorkspace')}
          </Link>
        </span>
      </nav>
      {data.listing.entries.length === 0 ? (
        <p className="text-sm text-slate-500" data-testid="job-files-none">
          {active ? t('files.jobFolderEmptyYet') : t('files.folderEmpty')}
        </p>
      ) : (
        <Table>
          <thead>
            <tr>
              <Th>{t('files.name')}</Th>
              <Th className="text-right">{t('files.size')}</Th>
              <Th className="hidden sm:table-cell">{t('files.modified')}</Th>
            </tr>
          </thead>
          <tbody data-testid="job-files">
            {data.listing.entries.map((e) => (
              <tr key={e.name}>
                <Td className="max-w-0 truncate font-mono text-xs sm:max-w-none">
                  {e.type === 'folder' ? (
                    <button type="button" className="text-indigo-700 hover:underline" onClick={() => setPath([...path, e.name])}>
                      {e.name}/
                    </button>
                  ) : e.type === 'file' ? (
                    <a className="text-indigo-700 hover:underline" href={downloadHref(data.projectId, data.site, `${base}/${e.name}`)} download={e.name}>
                      {e.name}
                    </a>
                  ) : (
                    <span className="text-slate-500" title={t('files.linkNotFollowed')}>
                      {e.name} ↗
                    </span>
                  )}
                </Td>
                <Td className="text-right whitespace-nowrap tabular-nums">{e.type === 'file' ? formatBytes(locale, e.size) : '—'}</Td>
                <Td className="hidden whitespace-nowrap text-slate-500 sm:table-cell">{formatDateTime(locale, new Date(e.modifiedAt), timeZone)}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </div>
  );
}
