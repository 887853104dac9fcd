'use client';
// A project's workspace at a site: folders to open, files to download (resumable), upload (resumable,
// tus: a cut connection is retried and resumed; a reload resumes the same file where it stopped), new
// folder, rename, delete. The path lives in the address, so Back goes up a folder and a link can name one.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { usePathname } from 'next/navigation';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ConfirmDialog } from '~/app/_components/confirm-dialog';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card, Table, Td, Th } from '~/app/_components/ui';
import { downloadHref, joinPath } from '~/app/_lib/files';
import { useTRPC } from '~/app/_lib/trpc';
import { formatBytes, formatDateTime } from '~/server/i18n/format';
import { UploadList, useUploads } from './uploads';

type Entry = { name: string; type: 'folder' | 'file' | 'link' | 'other'; size: number; modifiedAt: Date | string };

export function FilesBrowser({ projectId, sites, initialSite, initialPath }: { projectId: string; sites: { id: string; name: string }[]; initialSite: string; initialPath: string }) {
  const { t, locale, timeZone } = useT();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const pathname = usePathname();
  const [site, setSite] = useState(initialSite);
  const [path, setPath] = useState(initialPath.replace(/^\/+|\/+$/g, ''));
  const [pages, setPages] = useState<string[]>([]);
  const [newFolder, setNewFolder] = useState('');
  const [renaming, setRenaming] = useState<{ from: string; to: string } | null>(null);
  const [deleting, setDeleting] = useState<Entry | null>(null);
  const [error, setError] = useState<string | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);

  // The address follows the folder (Back goes up); the browser's Back brings the folder back.
  useEffect(() => {
    const q = new URLSearchParams({ site, ...(path ? { path } : {}) });
    const target = `${pathname}?${q.toString()}`;
    // The history API directly: the folder is the browser's state, the server has nothing new to render.
    if (`${window.location.pathname}${window.location.search}` !== target) window.history.pushState(null, '', target);
  }, [site, path, pathname]);
  useEffect(() => {
    const onPop = () => {
      const q = new URLSearchParams(window.location.search);
      setPath(q.get('path') ?? '');
      setSite(q.get('site') ?? initialSite);
      setPages([]);
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, [initialSite]);

  const first = useQuery(trpc.files.list.queryOptions({ projectId, site, path }));
  const more = useQuery({ ...trpc.files.list.queryOptions({ projectId, site, path, cursor: pages[pages.length - 1] ?? null }), enabled: pages.length > 0 });
  const [extra, setExtra] = useState<Entry[]>([]);
  useEffect(() => setExtra([]), [site, path]);
  useEffect(() => {
    if (more.data && pages.length > 0) setExtra((prev) => [...prev, ...more.data.entries.filter((e) => !prev.some((p) => p.name === e.name))]);
  }, [more.data, pages.length]);
  const entries: Entry[] = [...(first.data?.entries ?? []), ...extra];
  const nextCursor = pages.length > 0 ? (more.data?.nextCursor ?? null) : (first.data?.nextCursor ?? null);

  const refresh = () => {
    setPages([]);
    setExtra([]);
    void queryClient.invalidateQueries({ queryKey: trpc.files.list.pathKey() });
  };
  const onError = (e: { message: string }) => setError(e.message);
  const makeFolder = useMutation(trpc.files.makeFolder.mutationOptions({ onSuccess: () => (setNewFolder(''), setError(null), refresh()), onError }));
  const move = useMutation(trpc.files.move.mutationOptions({ onSuccess: () => (setRenaming(null), setError(null), refresh()), onError }));
  const remove = useMutation(trpc.files.remove.mutationOptions({ onSuccess: () => (setDeleting(null), setError(null), refresh()), onError }));
  const uploads = useUploads({ projectId, site, onLanded: refresh });

  const open = (next: string) => {
    setPath(next);
    setPages([]);
    setError(null);
  };
  const names = path ? path.split('/') : [];

  const submitFolder = (e: FormEvent) => {
    e.preventDefault();
    if (newFolder.trim()) makeFolder.mutate({ projectId, site, path: joinPath(path, newFolder.trim()) });
  };
  const submitRename = (e: FormEvent) => {
    e.preventDefault();
    if (renaming && renaming.to.trim() && renaming.to !== renaming.from) move.mutate({ projectId, site, from: joinPath(path, renaming.from), to: joinPath(path, renaming.to.trim()) });
  };

  return (
    <div className="space-y-6">
      <Card>
        <div className="flex flex-wrap items-end gap-4">
          {sites.length > 1 && (
            <label className="flex flex-col gap-1 text-sm text-slate-700">
              {t('files.site')}
              <select className="rounded-md border border-slate-300 px-2 py-1.5" value={site} onChange={(e) => (setSite(e.target.value), open(''))} data-testid="files-site">
                {sites.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          <div className="flex flex-wrap gap-2">
            <input
              ref={fileInput}
              type="file"
              multiple
              className="sr-only"
              id="files-upload-input"
              data-testid="files-upload-input"
              onChange={(e) => {
                const chosen = Array.from(e.target.files ?? []);
                e.target.value = '';
                for (const file of chosen) void uploads.start(file, joinPath(path, file.name));
              }}
            />
            <Button onClick={() => fileInput.current?.click()} data-testid="files-upload">
              {t('files.upload')}
            </Button>
            <a className="inline-flex items-center rounded-md px-3 py-2 text-sm font-medium text-indigo-700 ring-1 ring-slate-300 hover:bg-slate-50" href={downloadHref(projectId, site, path)} download>
              {t('files.downloadFolder')}
            </a>
          </div>
          <form onSubmit={submitFolder} className="flex flex-wrap items-end gap-2">
            <label className="flex flex-col gap-1 text-sm text-slate-700">
              {t('files.newFolder')}
              <input className="rounded-md border border-slate-300 px-2 py-1.5" value={newFolder} onChange={(e) => setNewFolder(e.target.value)} maxLength={255} data-testid="files-new-folder" />
            </label>
            <Button type="submit" variant="secondary" disabled={!newFolder.trim() || makeFolder.isPending}>
              {t('files.makeFolder')}
            </Button>
          </form>
        </div>
        <p className="mt-3 text-xs text-slate-500">{t('files.uploadNote')}</p>
      </Card>

      <UploadList uploads={uploads} />
      {error && (
        <Alert tone="error">
          <span data-testid="files-error">{error}</span>
        </Alert>
      )}

      <Card>
        <nav aria-label={t('files.breadcrumb')} className="mb-3 flex flex-wrap items-center gap-1 text-sm" data-testid="files-breadcrumb">
          <button type="button" className="text-indigo-700 hover:underline" onClick={() => open('')}>
            {t('files.workspace')}
          </button>
          {names.map((name, i) => (
            <span key={`${i}-${name}`} className="flex items-center gap-1">
              <span className="text-slate-400">/</span>
              <button type="button" className="font-mono text-indigo-700 hover:underline" onClick={() => open(names.slice(0, i + 1).join('/'))}>
                {name}
              </button>
            </span>
          ))}
          {first.data && <span className="ml-auto text-xs text-slate-500">{t('files.count', { n: first.data.total })}</span>}
        </nav>
        {first.isError ? (
          <Alert tone="error">{first.error.message}</Alert>
        ) : !first.data ? (
          <p className="text-sm text-slate-500">{t('common.working')}</p>
        ) : entries.length === 0 ? (
          <p className="text-sm text-slate-500" data-testid="files-empty">
            {t('files.folderEmpty')}
          </p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('files.name')}</Th>
                <Th className="text-right">{t('files.size')}</Th>
                <Th className="hidden md:table-cell">{t('files.modified')}</Th>
                <Th>
                  <span className="sr-only">{t('files.actions')}</span>
                </Th>
              </tr>
            </thead>
            <tbody data-testid="files-list">
              {entries.map((e) => (
                <tr key={e.name} data-testid="files-row">
                  <Td className="max-w-[12rem] font-mono text-xs break-all sm:max-w-none">
                    {renaming?.from === e.name ? (
                      <form onSubmit={submitRename} className="flex gap-2">
                        <input aria-label={t('files.newName')} className="min-w-0 flex-1 rounded-md border border-slate-300 px-2 py-1" value={renaming.to} autoFocus onChange={(ev) => setRenaming({ from: e.name, to: ev.target.value })} onKeyDown={(ev) => ev.key === 'Escape' && setRenaming(null)} maxLength={255} />
                        <Button type="submit" variant="secondary" disabled={move.isPending}>
                          {t('files.rename')}
                        </Button>
                      </form>
                    ) : e.type === 'folder' ? (
                      <button type="button" className="text-left text-indigo-700 hover:underline" onClick={() => open(joinPath(path, e.name))}>
                        {e.name}/
                      </button>
                    ) : e.type === 'file' ? (
                      <a className="text-indigo-700 hover:underline" href={downloadHref(projectId, site, joinPath(path, e.name))} download={e.name}>
                        {e.name}
                      </a>
                    ) : (
                      <span className="text-slate-500" title={t('files.linkNotFollowed')}>
                        {e.name} {e.type === 'link' ? '↗' : ''}
                      </span>
                    )}
                  </Td>
                  <Td className="text-right whitespace-nowrap tabular-nums">{e.type === 'file' ? formatBytes(locale, e.size) : '—'}</Td>
                  <Td className="hidden whitespace-nowrap text-slate-500 md:table-cell">{formatDateTime(locale, new Date(e.modifiedAt), timeZone)}</Td>
                  <Td className="text-right whitespace-nowrap">
                    <span className="inline-flex gap-3 text-sm">
                      {e.type === 'folder' && (
                        <a className="text-indigo-700 hover:underline" href={downloadHref(projectId, site, joinPath(path, e.name))} download>
                          <span aria-hidden>.tar</span>
                          <span className="sr-only">{t('files.downloadFolder')}</span>
                        </a>
                      )}
                      <button type="button" className="text-indigo-700 hover:underline" onClick={() => setRenaming({ from: e.name, to: e.name })} aria-label={`${t('files.rename')}: ${e.name}`}>
                        {t('files.rename')}
                      </button>
                      <button type="button" className="text-red-700 hover:underline" onClick={() => setDeleting(e)} aria-label={`${t('files.delete')}: ${e.name}`}>
                        {t('files.delete')}
                      </button>
                    </span>
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        {nextCursor && (
          <div className="mt-3">
            <Button variant="secondary" onClick={() => setPages((p) => [...p, nextCursor])} disabled={more.isFetching} data-testid="files-more">
              {t('files.more')}
            </Button>
          </div>
        )}
      </Card>
      <ConfirmDialog
        open={deleting !== null}
        title={t('files.deleteTitle', { name: deleting?.name ?? '' })}
        confirmLabel={t('files.delete')}
        cancelLabel={t('common.cancel')}
        onClose={() => setDeleting(null)}
        onConfirm={() => deleting && remove.mutate({ projectId, site, path: joinPath(path, deleting.name) })}
      >
        {deleting?.type === 'folder' ? t('files.deleteFolderText') : t('files.deleteFileText')}
      </ConfirmDialog>
    </div>
  );
}
