'use client';
// A job's stdout and stderr, live: the last 64 KB first, then what the job writes, read every second
// from its folder in the project's workspace (files.output with `from`), until the job has ended; a
// pause button stops following, older lines load on demand. The log scrolls with the new lines unless
// the reader scrolled up to read.
import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useT } from '~/app/_components/i18n';
import { Button } from '~/app/_components/ui';
import { useTRPC } from '~/app/_lib/trpc';
import { formatBytes } from '~/server/i18n/format';

type Stream = 'stdout' | 'stderr';

/** What the page keeps of a log: the text from byte `start` to `end` of the file. */
interface LogState {
  text: string;
  start: number;
  end: number;
  size: number;
  exists: boolean;
  done: boolean;
}

const TAIL_BYTES = 64 * 1024;
/** The most of a log the page holds; beyond it the oldest lines are let go (they can be loaded again). */
const KEEP_CHARS = 2 * 1024 * 1024;
const EMPTY: LogState = { text: '', start: 0, end: 0, size: 0, exists: false, done: false };

export function JobLog({ jobId, queued, tasks }: { jobId: string; queued: boolean; tasks: number[] | null }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [stream, setStream] = useState<Stream>('stdout');
  const [task, setTask] = useState<number | undefined>(tasks?.[0]);
  const [log, setLog] = useState<LogState>(EMPTY);
  const [paused, setPaused] = useState(false);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [failed, setFailed] = useState(false);
  const pre = useRef<HTMLPreElement>(null);
  const stick = useRef(true);

  const read = useCallback(
    (input: { from?: number; before?: number; limit?: number }) =>
      queryClient.fetchQuery({ ...trpc.files.output.queryOptions({ jobId, stream, ...(task !== undefined ? { task } : {}), ...input }), staleTime: 0 }),
    [queryClient, trpc, jobId, stream, task],
  );

  // The tail when the stream (or task) is chosen.
  useEffect(() => {
    let gone = false;
    setLog(EMPTY);
    stick.current = true;
    read({ limit: TAIL_BYTES })
      .then((r) => !gone && (setLog(r), setFailed(false)))
      .catch(() => !gone && setFailed(true));
    return () => {
      gone = true;
    };
  }, [read]);

  // Following: what was written since, every second, until the portal says the job has ended and
  // settled (its last lines are written before that).
  const following = !paused && !log.done;
  useEffect(() => {
    if (!following) return;
    let gone = false;
    let timer: ReturnType<typeof setTimeout>;
    const tick = async () => {
      try {
        const next = await read({ from: log.end });
        if (gone) return;
        setFailed(false);
        if (next.end !== log.end || next.done !== log.done || next.exists !== log.exists) {
          setLog((prev) => {
            if (next.start !== prev.end) return prev; // a stale answer
            let text = prev.text + next.text;
            let start = prev.start;
            if (text.length > KEEP_CHARS) {
              const cut = text.indexOf('\n', text.length - KEEP_CHARS);
              start += new TextEncoder().encode(text.slice(0, cut + 1)).length;
              text = text.slice(cut + 1);
            }
            return { text, start: prev.exists ? start : next.start, end: next.end, size: next.size, exists: next.exists, done: next.done };
          });
          return; // the state change schedules the next read
        }
      } catch {
        if (!gone) setFailed(true);
      }
      if (!gone) timer = setTimeout(() => void tick(), 1000);
    };
    timer = setTimeout(() => void tick(), 1000);
    return () => {
      gone = true;
      clearTimeout(timer);
    };
  }, [following, read, log.end, log.done, log.exists]);

  // Keep the newest line in view unless the reader scrolled up.
  useEffect(() => {
    const el = pre.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [log.text]);

  const older = async () => {
    setLoadingOlder(true);
    try {
      const r = await read({ before: log.start, limit: TAIL_BYTES });
      setLog((prev) => (r.end === prev.start ? { ...prev, text: r.text + prev.text, start: r.start } : prev));
      stick.current = false;
    } finally {
      setLoadingOlder(false);
    }
  };

  const status = log.done ? t('jobs.log.ended') : paused ? t('jobs.log.pausedAt', { size: formatBytes(locale, log.end) }) : following ? t('jobs.log.following') : '';
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-center gap-2">
        <div role="tablist" aria-label={t('jobs.output')} className="inline-flex rounded-md border border-slate-300 p-0.5">
          {(['stdout', 'stderr'] as const).map((s) => (
            <button
              key={s}
              role="tab"
              type="button"
              aria-selected={stream === s}
              onClick={() => setStream(s)}
              className={`rounded px-3 py-1 font-mono text-xs ${stream === s ? 'bg-indigo-600 text-white' : 'text-slate-700 hover:bg-slate-100'} focus:ring-2 focus:ring-indigo-500 focus:outline-none`}
              data-testid={`job-log-${s}`}
            >
              {s}
            </button>
          ))}
        </div>
        {tasks && tasks.length > 0 && (
          <label className="flex items-center gap-2 text-sm text-slate-700">
            {t('jobs.log.task')}
            <select className="rounded-md border border-slate-300 px-2 py-1 text-sm" value={task} onChange={(e) => setTask(Number(e.target.value))} data-testid="job-log-task">
              {tasks.map((i) => (
                <option key={i} value={i}>
                  {i}
                </option>
              ))}
            </select>
          </label>
        )}
        {!log.done && (
          <Button variant="secondary" onClick={() => setPaused((p) => !p)} aria-pressed={paused} data-testid="job-log-pause">
            {paused ? t('jobs.log.resume') : t('jobs.log.pause')}
          </Button>
        )}
        <span className="text-xs text-slate-500" aria-live="polite" data-testid="job-log-status">
          {status}
          {log.exists ? ` · ${formatBytes(locale, log.size)}` : ''}
        </span>
      </div>
      {log.start > 0 && (
        <Button variant="secondary" onClick={() => void older()} disabled={loadingOlder} data-testid="job-log-older">
          {t('jobs.log.older', { size: formatBytes(locale, log.start) })}
        </Button>
      )}
      {log.exists ? (
        // Focusable, so the log scrolls from the keyboard too; text only — never rendered as HTML.
        <pre
          ref={pre}
          tabIndex={0}
          aria-label={`${t('jobs.output')} (${stream})`}
          onScroll={(e) => {
            const el = e.currentTarget;
            stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
          }}
          className="max-h-[32rem] overflow-auto rounded-md bg-slate-900 p-4 font-mono text-xs whitespace-pre-wrap break-all text-slate-100 focus:ring-2 focus:ring-indigo-500 focus:outline-none"
          data-testid="job-output"
        >
          {log.text}
        </pre>
      ) : (
        <p className="text-sm text-slate-500" data-testid="job-output-none">
          {failed ? t('jobs.log.unreadable') : queued ? t('jobs.outputWaiting') : log.done ? t('jobs.log.none', { stream }) : t('jobs.log.nothingYet', { stream })}
        </p>
      )}
    </div>
  );
}
