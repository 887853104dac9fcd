// The commands. Each takes the context (parsed flags, the io, a lazily made API client) and returns
// its exit code; human output goes through format.mjs, --json writes what the API answered.
import { ApiError, NetworkError, apiBase } from './api.mjs';
import { FINAL_STATES } from './args.mjs';
import { configPath, readConfig, removeConfig, writeConfig } from './config.mjs';
import { EXIT, UsageError } from './exit-codes.mjs';
import * as f from './format.mjs';
import { parseJobFile } from './job-file.mjs';

const writeJson = (io, value) => io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
const clip = (text, max) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

// ---- login, logout ----------------------------------------------------------------------------

export async function login({ io, options, warn }) {
  const file = configPath(io.env, io.homedir);
  const stored = readConfig(file, warn);
  const url = (options.url ?? (io.env.PORTAL_URL || undefined) ?? stored.url)?.replace(/\/+$/, '');
  if (!url) throw new UsageError('login needs the portal’s address: portal-cli login --url https://portal.example');
  if (!apiBase(url)) throw new UsageError(`the portal’s address must be an http(s) URL, not "${url}"`);
  let token = options.token;
  if (token === undefined) {
    // A terminal is asked without echo; a pipe is read (`pass show portal | portal-cli login`), so the token stays out of the shell's history.
    token = io.stdinIsTTY ? await io.promptSecret(`Personal API token for ${url} (afp_…, not shown): `) : await io.readStdin();
  }
  token = token.trim();
  if (!/^afp_[\x21-\x7E]+$/.test(token)) throw new UsageError('that is not a personal API token: they start with afp_ (create one on your profile page in the portal)');

  // Check the token before storing it: a read every token with the `read` scope may make.
  let note = 'it can read your tenant';
  try {
    await io.client({ url, token }).request('GET', '/allocations');
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 403)) throw error;
    note = 'it is valid but has no `read` scope, so only what its scopes allow will work';
  }
  writeConfig(file, { url, token });
  if (options.json) writeJson(io, { url, configFile: file, readable: note.startsWith('it can') });
  else io.stdout.write(`Signed in to ${url}: the token works (${note}).\nStored in ${file}, readable only by you.\n`);
  return EXIT.OK;
}

export async function logout({ io, options }) {
  const file = configPath(io.env, io.homedir);
  const removed = removeConfig(file);
  if (options.json) writeJson(io, { removed, configFile: file });
  else if (removed) io.stdout.write(`Signed out: removed ${file}.\nThe token itself stays valid until it expires; revoke it on your profile page if it may have leaked.\n`);
  else io.stdout.write(`Not signed in (no ${file}).\n`);
  if (io.env.PORTAL_TOKEN && !options.json) io.stderr.write('Note: PORTAL_TOKEN is set in this environment, and commands keep using it.\n');
  return EXIT.OK;
}

// ---- jobs -------------------------------------------------------------------------------------

const DEPENDENCY_WORDS = { afterok: 'once these completed:', afterany: 'once these ended:', afternotok: 'once these failed:' };
const AFTER_WORDS = { afterok: 'once they completed', afterany: 'once they ended, however', afternotok: 'once they failed' };

function shortfallText(s) {
  if (s.limit === 'gpusAtOnce') return `at most ${s.limitGpus} GPUs at once (${s.inUseGpus} in use now)`;
  const what = s.limit === 'budget' ? 'the allocation’s budget' : 'the monthly cap';
  return `${what}: needs ${f.amount(s.unit, s.needed)}, ${f.amount(s.unit, s.left)} left`;
}

/** estimateText is what `jobs submit` shows before asking: the reservation, the cost at the tenant's tariff, the energy, what is left. */
export function estimateText(job, e) {
  const lines = [
    `Job "${job.name}" (${job.kind}): ${job.array ? `an array of ${e.tasks} tasks (${job.array}), each ` : ''}${job.gpus} GPU${job.gpus === 1 ? '' : 's'} of ${job.resourceClassId} on ${job.nodes} node${job.nodes === 1 ? '' : 's'} for at most ${f.duration(job.walltimeMinutes * 60)}${job.dependency ? `, starting ${DEPENDENCY_WORDS[job.dependency.type]} ${job.dependency.jobIds.join(', ')}` : ''}`,
    f
      .keyValues([
        ['Reservation', e.unit === 'cents' ? `${f.euros(e.reservation)} (${f.gpuHours(e.reservedGpuSeconds)})` : f.gpuHours(e.reservation)],
        ['Cost', `at most ${f.euros(e.maxCostCents)} at ${f.euros(e.centsPerGpuHour)} per GPU-h`],
        ['Energy', `at most ${f.kwh(e.maxEnergyWh)} (expected ${f.kwh(e.expectedEnergyWh)} at ${e.assumedGpuUtilPercent} % GPU utilisation)`],
        ['Left', `${f.amount(e.room.unit, Math.max(0, e.room.available))}${e.room.monthCapLeftCents !== null ? `, ${f.euros(e.room.monthCapLeftCents)} under the monthly cap` : ''}`],
      ])
      .replace(/^/gm, '  ')
      .trimEnd(),
  ];
  for (const s of e.shortfalls) lines.push(`  Does not fit: ${shortfallText(s)}`);
  return `${lines.join('\n')}\n`;
}

export async function jobsSubmit({ io, options, client }) {
  const fromStdin = options.file === '-';
  // Refuse before reading anything when no one could answer the question.
  if (!options.yes && (fromStdin || !io.stdinIsTTY))
    throw new UsageError(`${fromStdin ? 'the job comes from stdin' : 'stdin is not a terminal'}, so no one can confirm the submission: pass --yes to submit without asking`);
  let text;
  try {
    text = fromStdin ? await io.readStdin() : io.readFile(options.file);
  } catch (error) {
    throw new UsageError(`cannot read the job file ${options.file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  }
  const fromFile = parseJobFile(text, fromStdin ? 'stdin' : options.file);
  // --after and --array win over the file's dependency and array.
  const job = { ...fromFile, ...(options.after ? { dependency: options.after } : {}), ...(options.array ? { array: options.array } : {}) };
  const api = client();
  const { allocationId, resourceClassId, gpus, nodes, walltimeMinutes, array } = job;
  const estimate = await api.request('POST', '/jobs/estimate', { body: { allocationId, resourceClassId, gpus, nodes, walltimeMinutes, ...(array ? { array } : {}) } });
  if (!options.json || !options.yes) io.stderr.write(estimateText(job, estimate));
  if (!options.yes && !(await io.confirm(estimate.shortfalls.length > 0 ? 'It will probably be refused. Submit anyway? [y/N] ' : 'Submit this job? [y/N] '))) {
    io.stderr.write('Not submitted.\n');
    return EXIT.FAILED;
  }
  // One key for this invocation: the client's retries after a lost answer find the job made by the first try.
  const created = await api.request('POST', '/jobs', { body: job, headers: { 'idempotency-key': io.randomUUID() } });
  if (options.json) writeJson(io, { job: created, estimate });
  else {
    io.stderr.write(`Submitted: ${created.state}. Follow it with: portal-cli jobs watch ${created.id}\n`);
    io.stdout.write(`${created.id}\n`);
  }
  return EXIT.OK;
}

export async function jobsList({ io, options, client }) {
  const api = client();
  const items = [];
  let cursor;
  do {
    // No limit unless asked: the API's page size (50) is the default.
    const page = await api.request('GET', '/jobs', { query: { limit: options.limit, state: options.state, cursor } });
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (options.all && cursor);
  if (options.json) {
    writeJson(io, { items, nextCursor: cursor ?? null });
    return EXIT.OK;
  }
  if (items.length === 0) io.stdout.write(options.state ? `No ${options.state} jobs.\n` : 'No jobs yet.\n');
  else
    io.stdout.write(
      f.table(
        ['ID', 'NAME', 'STATE', 'KIND', { header: 'GPUS', right: true }, 'CLASS', 'SUBMITTED (UTC)', { header: 'USED', right: true }, { header: 'COST', right: true }, { header: 'ENERGY', right: true }],
        items.map((j) => [j.id, clip(j.name, 32), j.array ? `${j.state} [${arrayCountsText(j.array.counts)}]` : j.state, j.kind, j.gpus, j.resourceClassName ?? j.resourceClassId, f.dateTime(j.submittedAt, { short: true }), f.gpuHours(j.gpuSeconds), f.euros(j.costCents), f.kwh(j.energyWh)]),
      ),
    );
  if (cursor) io.stderr.write(`More jobs than shown: add --all for every page, or --limit N.\n`);
  return EXIT.OK;
}

export async function jobsGet({ io, options, client, id }) {
  const job = await client().request('GET', `/jobs/${id}`);
  if (options.json) {
    writeJson(io, job);
    return EXIT.OK;
  }
  const reserved = job.reservedUnit ? f.amount(job.reservedUnit, job.reservedAmount) : undefined;
  io.stdout.write(
    f.keyValues([
      ['Job', `${job.name} (${job.id})`],
      ['Project', job.projectTitle],
      ['State', job.pendingReason && job.state === 'PENDING' ? `${job.state} (${job.pendingReason})` : job.state],
      ['Kind', job.kind],
      ['Resources', `${job.gpus} × ${job.gpuModel ?? 'GPU'} on ${job.nodes} node${job.nodes === 1 ? '' : 's'} of ${job.resourceClassName ?? job.resourceClassId}${job.siteName ? ` (${job.siteName})` : ''}`],
      ['Walltime', f.duration(job.walltimeSeconds)],
      ['Array', job.array ? `${job.array.text}: ${arrayCountsText(job.array.counts)} of ${job.array.tasks} tasks` : undefined],
      ['Starts after', job.dependency ? `${(job.dependencyJobs ?? []).map((d) => `${d.name} (${d.id}, ${d.state})`).join(', ')}, ${AFTER_WORDS[job.dependency.type]}` : undefined],
      ['Runs as', job.runAsUser ? `${job.runAsUser} (group ${job.runAsGroup})` : undefined],
      ['Image', job.image],
      ['Submitted', f.dateTime(job.submittedAt)],
      ['Started', f.dateTime(job.startedAt)],
      ['Ended', f.dateTime(job.endedAt)],
      ['Exit code', exitShown(job)],
      ['Reserved', reserved],
      ['Used', f.gpuHours(job.gpuSeconds)],
      ['Cost', job.costCents !== null ? f.euros(job.costCents) : job.costSoFarCents !== null && job.costSoFarCents !== undefined ? `${f.euros(job.costSoFarCents)} so far` : null],
      ['Energy', f.kwh(job.energyWh)],
      ['Nodes', job.nodeList?.join(', ') ?? null],
    ]),
  );
  const events = job.events ?? [];
  if (events.length > 0) io.stdout.write(`\nEvents:\n${f.table(['AT (UTC)', 'STATE', 'NOTE'], events.map((e) => [f.dateTime(e.at).replace(' UTC', ''), e.state, e.message ?? '']))}`);
  return EXIT.OK;
}

/** An array's tasks by state, as the job list and page count them: "4 RUNNING, 10 COMPLETED, 6 PENDING". */
function arrayCountsText(counts) {
  return Object.entries(counts)
    .map(([state, n]) => `${n} ${state}`)
    .join(', ');
}

/** The signal that ended a job as the API names it ("signal 15 (SIGTERM)"), or null when it exited by itself. */
function signalText(job) {
  const s = job.exitStatus;
  if (!s || s.signal === null) return null;
  return `signal ${s.signal}${s.signalName ? ` (${s.signalName})` : ''}`;
}

/** The exit code with Slurm's notation: "3 (Slurm 3:0)", "0, signal 15 (SIGTERM) (Slurm 0:15)". */
function exitShown(job) {
  const s = job.exitStatus;
  if (!s) return job.exitCode ?? null;
  const signal = signalText(job);
  return `${s.exitCode}${signal ? `, ${signal}` : ''} (Slurm ${s.slurm})`;
}

/** How a watched job ended, after its state: " with exit code 3", " by signal 15 (SIGTERM)". */
function endedBy(job) {
  const signal = signalText(job);
  if (signal) return ` by ${signal}`;
  return job.exitCode !== null && job.exitCode !== undefined ? ` with exit code ${job.exitCode}` : '';
}

const transient = (error) => error instanceof NetworkError || (error instanceof ApiError && error.status >= 500);

/**
 * jobsWatch polls the job and prints each state change with its time (the portal's event times,
 * so a late first poll still shows when things happened) until a final state. A transient failure
 * (network, 5xx) is retried for a while: a watch is often left running through a portal restart.
 */
export async function jobsWatch({ io, options, client, id }) {
  const api = client();
  const intervalMs = (options.interval ?? 2) * 1000;
  const seen = new Set();
  let last = null;
  let failures = 0;
  const show = (at, state, note) => {
    if (options.json) io.stdout.write(`${JSON.stringify({ at, state, ...(note ? { note } : {}) })}\n`);
    else io.stdout.write(`${f.dateTime(at)}  ${state}${note ? `  ${note}` : ''}\n`);
  };
  for (;;) {
    let job;
    try {
      job = await api.request('GET', `/jobs/${id}`);
      failures = 0;
    } catch (error) {
      if (!transient(error) || ++failures > 30) throw error;
      io.stderr.write(`warning: ${error.message}; trying again\n`);
      await io.sleep(intervalMs);
      continue;
    }
    for (const event of [...(job.events ?? [])].sort((a, b) => a.id - b.id)) {
      if (seen.has(event.id)) continue;
      seen.add(event.id);
      if (event.state !== last) show(event.at, (last = event.state), event.state === 'PENDING' ? job.pendingReason : null);
    }
    if (job.state !== last) show(io.now().toISOString(), (last = job.state), job.state === 'PENDING' ? job.pendingReason : null);
    if (FINAL_STATES.includes(job.state)) {
      if (!options.json) {
        const figures = [job.gpuSeconds !== null ? f.gpuHours(job.gpuSeconds) : null, job.costCents !== null ? f.euros(job.costCents) : null, job.energyWh !== null ? f.kwh(job.energyWh) : null].filter(Boolean);
        io.stdout.write(`Job ${job.state.toLowerCase()}${endedBy(job)}${figures.length ? `: ${figures.join(', ')}` : ''}.\n`);
      }
      return job.state === 'COMPLETED' ? EXIT.OK : EXIT.FAILED;
    }
    await io.sleep(intervalMs);
  }
}

/** How much of a job's output `jobs logs` shows first: the last 64 KB, whole lines. */
export const LOG_TAIL_BYTES = 64 * 1024;
const FOLLOW_MS = 1000;
const FOLLOW_MAX_MS = 5000;

/** What to say when a job has no such output (yet); an array job read without --task is a mistake worth naming. */
async function noOutput(api, id, options, read, signal) {
  const job = await api.request('GET', `/jobs/${id}`, { signal });
  const stream = options.stderr ? 'stderr' : 'stdout';
  if (job.array && options.task === undefined) throw new UsageError(`job ${id} is an array (${job.array.text}): each task writes its own ${stream}; pass --task N`);
  if (read.done) return `The job wrote no ${stream}${options.task !== undefined ? ` in task ${options.task}` : ''}.`;
  return `No ${stream} yet: the job is ${job.state}${job.state === 'PENDING' && job.pendingReason ? ` (${job.pendingReason})` : ''}.`;
}

/**
 * jobsLogs prints the end of a job's stdout (or stderr, or an array task's): the last 64 KB, whole
 * lines. With --follow it then asks for what follows the last byte it printed, every second while
 * lines come and backing off to every 5 s while none do, until the job has ended and been settled
 * and nothing is left; then it exits as `jobs watch` does (0 only for COMPLETED). A transient failure
 * (network, 5xx) is retried for a while; Ctrl-C stops it between two reads (exit 130).
 */
export async function jobsLogs({ io, options, client, id }) {
  const api = client();
  const query = { stream: options.stderr ? 'stderr' : 'stdout', task: options.task };
  const interrupt = new globalThis.AbortController();
  const signal = interrupt.signal;
  const release = options.follow && io.onInterrupt ? io.onInterrupt(() => interrupt.abort()) : () => {};
  const show = (read) => {
    if (options.json) {
      if (read.text || !options.follow) io.stdout.write(options.follow ? `${JSON.stringify(read)}\n` : `${JSON.stringify(read, null, 2)}\n`);
    } else if (read.text) io.stdout.write(read.text);
  };
  try {
    let read = await api.request('GET', `/jobs/${id}/output`, { query: { ...query, limit: LOG_TAIL_BYTES }, signal });
    show(read);
    if (!read.exists) {
      const note = await noOutput(api, id, options, read, signal);
      if (!options.json) io.stderr.write(`${note}${options.follow && !read.done ? ' Waiting for it…' : ''}\n`);
    }
    if (!options.follow) return EXIT.OK;

    let wait = FOLLOW_MS;
    let failures = 0;
    for (;;) {
      if (read.done && read.end >= read.size) break;
      if (signal.aborted) return EXIT.INTERRUPTED;
      const from = read.exists ? read.end : 0;
      // More is waiting beyond what came (a chunk's limit): ask at once. Else wait, longer while nothing comes.
      if (failures > 0 || !(read.exists && read.text && read.end < read.size)) await io.sleep(wait, signal);
      if (signal.aborted) return EXIT.INTERRUPTED;
      let next;
      try {
        next = await api.request('GET', `/jobs/${id}/output`, { query: { ...query, from }, signal });
        failures = 0;
      } catch (error) {
        if (signal.aborted) return EXIT.INTERRUPTED;
        if (!transient(error) || ++failures > 30) throw error;
        if (!options.json) io.stderr.write(`warning: ${error.message}; trying again\n`);
        wait = FOLLOW_MAX_MS;
        continue;
      }
      show(next);
      wait = next.text ? FOLLOW_MS : Math.min(FOLLOW_MAX_MS, wait * 2);
      read = next;
    }
    const job = await api.request('GET', `/jobs/${id}`, { signal });
    if (!options.json) io.stderr.write(`Job ${job.state.toLowerCase()}${endedBy(job)}.\n`);
    return job.state === 'COMPLETED' ? EXIT.OK : EXIT.FAILED;
  } catch (error) {
    if (signal.aborted) return EXIT.INTERRUPTED;
    throw error;
  } finally {
    release();
  }
}

export async function jobsCancel({ io, options, client, id }) {
  const answer = await client().request('POST', `/jobs/${id}/cancel`);
  if (options.json) writeJson(io, answer);
  else if (answer.state === 'CANCELLED') io.stdout.write(`Job ${id} is cancelled.\n`);
  else if (FINAL_STATES.includes(answer.state)) io.stdout.write(`Job ${id} had already ended: ${answer.state}.\n`);
  else io.stdout.write(`Cancel requested for job ${id} (now ${answer.state}); \`portal-cli jobs watch ${id}\` shows when it stops.\n`);
  return EXIT.OK;
}

// ---- sessions ---------------------------------------------------------------------------------

/** The portal's own address of a session: the API's base without /api/v1, then the session's path. */
function sessionUrl(api, path) {
  return `${api.base.replace(/\/api\/v1$/, '')}${path}`;
}

export async function sessionsList({ io, options, client }) {
  const api = client();
  const items = await api.request('GET', '/sessions');
  if (options.json) {
    writeJson(io, { items: items.map((s) => ({ ...s, url: sessionUrl(api, s.url) })) });
    return EXIT.OK;
  }
  if (items.length === 0) {
    io.stdout.write('No sessions: start one on the portal’s Notebooks page.\n');
    return EXIT.OK;
  }
  io.stdout.write(
    f.table(
      ['ID', 'APP', 'STATE', { header: 'GPUS', right: true }, 'CLASS', 'SUBMITTED', 'OPEN AT'],
      items.map((s) => [s.id, s.appName, s.state, String(s.gpus), s.resourceClassId, String(s.submittedAt).slice(0, 16).replace('T', ' '), s.ready ? sessionUrl(api, s.url) : s.state === 'RUNNING' ? '(starting)' : '—']),
    ),
  );
  return EXIT.OK;
}

export async function sessionsUrl({ io, options, client, id }) {
  const api = client();
  const items = await api.request('GET', '/sessions');
  const session = items.find((s) => s.id === id);
  if (!session) throw new ApiError(404, { code: 'NOT_FOUND', message: `No session of yours has the id ${id}.` }, '/sessions');
  const url = sessionUrl(api, session.url);
  if (options.json) writeJson(io, { id, state: session.state, ready: session.ready, url });
  else io.stdout.write(`${url}\n`);
  if (!session.ready) io.stderr.write(session.state === 'RUNNING' ? 'The session’s app is still starting; the address answers once it is ready.\n' : `The session is ${session.state}: it cannot be opened.\n`);
  return EXIT.OK;
}

export async function sessionsExtend({ io, options, client, id }) {
  const minutes = Number(options.minutes);
  if (options.minutes === undefined || !/^\d+$/.test(options.minutes) || !(minutes >= 1)) throw new UsageError('sessions extend needs the minutes to add, a whole number: --minutes 60');
  const api = client();
  const answer = await api.request('POST', `/sessions/${id}/extend`, { body: { minutes } });
  if (options.json) writeJson(io, answer);
  else io.stdout.write(`Session ${id} extended by ${minutes} min: it may now run ${f.duration(answer.walltimeSeconds)} in all.\n`);
  return EXIT.OK;
}

// ---- usage, allocations -----------------------------------------------------------------------

export async function usage({ io, options, client }) {
  const query = options.month ? { month: options.month } : { from: options.from, to: options.to };
  if (options.csv) {
    // The bytes as the API sends them (byte-order mark, CRLF): the same file as the usage page's download.
    io.stdout.write(await client().request('GET', '/usage.csv', { query, accept: 'csv' }));
    return EXIT.OK;
  }
  const report = await client().request('GET', '/usage', { query });
  if (options.json) {
    writeJson(io, report);
    return EXIT.OK;
  }
  const t = report.totals;
  io.stdout.write(`Usage ${report.period.from} to ${report.period.to}\n\n`);
  io.stdout.write(
    f.keyValues([
      ['Jobs', f.count(t.jobs)],
      ['GPU time', f.gpuHours(t.gpuSeconds)],
      ['Cost', f.euros(t.costCents)],
      ['Energy (IT)', f.kwh(t.energyWh)],
      ['Energy (facility)', f.kwh(t.facilityEnergyWh)],
      ['CO2e', `${f.count(Math.round(t.co2eGrams / 1000))} kg`],
    ]),
  );
  if (report.groups.length > 0)
    io.stdout.write(
      `\n${f.table(
        [(report.groupBy ?? 'group').toUpperCase(), { header: 'JOBS', right: true }, { header: 'GPU TIME', right: true }, { header: 'COST', right: true }, { header: 'ENERGY', right: true }],
        report.groups.map((g) => [clip(g.label, 48), f.count(g.jobs), f.gpuHours(g.gpuSeconds), f.euros(g.costCents), f.kwh(g.energyWh)]),
      )}`,
    );
  return EXIT.OK;
}

export async function allocations({ io, options, client }) {
  const { items } = await client().request('GET', '/allocations');
  if (options.json) {
    writeJson(io, { items });
    return EXIT.OK;
  }
  if (items.length === 0) {
    io.stdout.write('No allocations: apply for one in the portal.\n');
    return EXIT.OK;
  }
  io.stdout.write(
    f.table(
      ['ID', 'PROJECT', 'CLASS', 'PERIOD', 'STATUS', { header: 'GRANTED', right: true }, { header: 'USED', right: true }, { header: 'RESERVED', right: true }, { header: 'AVAILABLE', right: true }],
      items.map((a) => [
        a.id,
        clip(a.projectTitle, 36),
        a.resourceClassId ?? 'any',
        `${a.periodStart} – ${a.periodEnd}`,
        a.status,
        f.amount(a.unit, a.balance.granted),
        f.amount(a.unit, a.balance.charged),
        f.amount(a.unit, a.balance.reserved),
        f.amount(a.unit, a.balance.available),
      ]),
    ),
  );
  return EXIT.OK;
}
