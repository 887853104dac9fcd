'use client';
// Resumable uploads from the browser (tus-js-client against /api/uploads): each shows its progress and
// speed, can be paused and resumed, is retried by itself when the connection drops (and resumes from
// the bytes the portal has), and after a reload resumes the same file where it stopped (the upload's
// address is kept in the browser's storage until it finished). When the last byte has landed, the
// portal's SHA-256 of the file is shown, to compare with the original's.
import { useCallback, useRef, useState } from 'react';
import type { DetailedError, Upload } from 'tus-js-client';
import { useT } from '~/app/_components/i18n';
import { Button, Card } from '~/app/_components/ui';
import { formatBytes, formatPercent } from '~/server/i18n/format';

export interface UploadItem {
  key: string;
  name: string;
  path: string;
  size: number;
  sent: number;
  /** Bytes per second over the last seconds. */
  rate: number;
  state: 'uploading' | 'paused' | 'retrying' | 'done' | 'failed';
  sha256?: string;
  landedAt?: string;
  error?: string;
  /** It went on from where an earlier upload of the same file stopped (before a reload). */
  resumed?: boolean;
}

/** The bytes one request sends: a dropped connection loses at most this much, and each request ends in a checkpoint. */
const CHUNK_BYTES = 16 * 1024 * 1024;

/** Waits between retries when the connection drops: then the upload asks where it stands and goes on. */
const RETRY_DELAYS = [0, 1000, 3000, 5000, 10_000, 20_000, 30_000, 60_000];

export function useUploads({ projectId, site, onLanded }: { projectId: string; site: string; onLanded: () => void }) {
  const [items, setItems] = useState<UploadItem[]>([]);
  const uploads = useRef(new Map<string, Upload>());
  const landed = useRef(onLanded);
  landed.current = onLanded;

  const update = useCallback((key: string, change: Partial<UploadItem>) => setItems((prev) => prev.map((i) => (i.key === key ? { ...i, ...change } : i))), []);

  const start = useCallback(
    async (file: File, path: string) => {
      const { Upload } = await import('tus-js-client');
      const key = `${site}:${path}:${Date.now()}`;
      setItems((prev) => [...prev, { key, name: file.name, path, size: file.size, sent: 0, rate: 0, state: 'uploading' }]);
      let last = { at: Date.now(), sent: 0 };
      let sha256: string | undefined;
      let landedPath: string | undefined;
      const upload: Upload = new Upload(file, {
        endpoint: '/api/uploads',
        retryDelays: RETRY_DELAYS,
        chunkSize: CHUNK_BYTES,
        metadata: { projectId, site, path, filename: file.name, filetype: file.type || 'application/octet-stream' },
        // The same file to the same place resumes; another place is another upload.
        fingerprint: (f: File) => Promise.resolve(['portal', projectId, site, path, f.name, f.size, f.lastModified].join(':')),
        removeFingerprintOnSuccess: true,
        onProgress: (sent) => {
          const now = Date.now();
          if (now - last.at >= 500) {
            update(key, { sent, rate: ((sent - last.sent) * 1000) / (now - last.at), state: 'uploading' });
            last = { at: now, sent };
          }
        },
        onShouldRetry: (error: DetailedError) => {
          // Refusals (no room, a name taken, no access) are final; a dropped connection, a busy server or
          // an offset the portal disagrees with (it says where it stands, the upload goes on from there) are not.
          const status = error.originalResponse?.getStatus() ?? 0;
          const retry = status === 0 || status === 423 || status >= 500 || (status === 409 && error.originalRequest?.getMethod() === 'PATCH');
          if (retry) update(key, { state: 'retrying' });
          return retry;
        },
        onAfterResponse: (_req, res) => {
          sha256 = res.getHeader('Upload-Sha256') ?? sha256;
          const where = res.getHeader('Upload-Path');
          if (where) landedPath = decodeURIComponent(where);
        },
        onSuccess: () => {
          update(key, { sent: file.size, state: 'done', sha256, landedAt: landedPath ?? path });
          uploads.current.delete(key);
          landed.current();
        },
        onError: (error) => {
          const body = (error as DetailedError).originalResponse?.getBody()?.trim();
          update(key, { state: 'failed', error: body || error.message });
          uploads.current.delete(key);
        },
      });
      uploads.current.set(key, upload);
      const previous = await upload.findPreviousUploads();
      if (previous[0]) {
        upload.resumeFromPreviousUpload(previous[0]);
        update(key, { resumed: true });
      }
      upload.start();
    },
    [projectId, site, update],
  );

  const pause = useCallback(
    (key: string) => {
      void uploads.current.get(key)?.abort();
      update(key, { state: 'paused', rate: 0 });
    },
    [update],
  );
  const resume = useCallback(
    (key: string) => {
      uploads.current.get(key)?.start();
      update(key, { state: 'uploading' });
    },
    [update],
  );
  const dismiss = useCallback((key: string) => setItems((prev) => prev.filter((i) => i.key !== key)), []);
  return { items, start, pause, resume, dismiss };
}

export function UploadList({ uploads }: { uploads: ReturnType<typeof useUploads> }) {
  const { t, locale } = useT();
  if (uploads.items.length === 0) return null;
  return (
    <Card title={t('files.uploads')}>
      <ul className="space-y-4" data-testid="uploads">
        {uploads.items.map((u) => {
          const fraction = u.size > 0 ? u.sent / u.size : 1;
          return (
            <li key={u.key} className="space-y-1 text-sm" data-testid="upload" data-state={u.state}>
              <div className="flex flex-wrap items-center justify-between gap-2">
                <span className="font-mono text-xs break-all">{u.landedAt ?? u.path}</span>
                <span className="flex items-center gap-3 text-xs text-slate-600 tabular-nums">
                  <span data-testid="upload-progress">
                    {formatBytes(locale, u.sent)} / {formatBytes(locale, u.size)} ({formatPercent(locale, fraction)})
                  </span>
                  {u.state === 'uploading' && u.rate > 0 && <span>{formatBytes(locale, u.rate)}/s</span>}
                  {u.state === 'uploading' || u.state === 'retrying' ? (
                    <Button variant="secondary" onClick={() => uploads.pause(u.key)}>
                      {t('files.pause')}
                    </Button>
                  ) : u.state === 'paused' ? (
                    <Button variant="secondary" onClick={() => uploads.resume(u.key)}>
                      {t('files.resume')}
                    </Button>
                  ) : (
                    <Button variant="secondary" onClick={() => uploads.dismiss(u.key)} aria-label={`${t('files.dismiss')}: ${u.name}`}>
                      {t('files.dismiss')}
                    </Button>
                  )}
                </span>
              </div>
              <div className="h-2 overflow-hidden rounded bg-slate-200" role="progressbar" aria-label={u.name} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(fraction * 100)}>
                <div className={`h-full ${u.state === 'failed' ? 'bg-red-500' : u.state === 'done' ? 'bg-green-600' : 'bg-indigo-500'}`} style={{ width: `${Math.round(fraction * 100)}%` }} />
              </div>
              {u.state === 'retrying' && <p className="text-xs text-amber-700">{t('files.retrying')}</p>}
              {u.resumed && u.state !== 'done' && <p className="text-xs text-slate-500">{t('files.resumedUpload')}</p>}
              {u.state === 'done' && (
                <p className="text-xs text-slate-600">
                  {t('files.landed')} <code className="font-mono break-all" data-testid="upload-sha256">{u.sha256 ?? '—'}</code>
                </p>
              )}
              {u.state === 'failed' && (
                <p className="text-xs text-red-700" data-testid="upload-error">
                  {u.error}
                </p>
              )}
            </li>
          );
        })}
      </ul>
    </Card>
  );
}
