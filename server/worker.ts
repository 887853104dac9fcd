// Background work of the portal, started once per server process (and by `npm run worker`):
// reconciling jobs with the scheduler and settling the ledger (every few seconds), sampling the
// cluster (every minute), snapshotting the simulated cluster's engine, closing calls' rounds at their
// cut-off, expiring allocations at the end of their period, handing the budgets to a scheduler that enforces them too, and issuing last
// month's invoices, reminding people of allocations that end soon (once a day), and sending the
// e-mail outbox, replaying staff's what-if runs, and scanning the project workspaces for the storage
// they hold (every STORAGE_SCAN_MINUTES). With several processes on one real
// Postgres, an advisory lock lets only one of them act; the leader checks every round that its
// connection is alive and still holds the lock, and steps down at once when it does not (a dropped
// connection frees the lock for another process).
import type { AdvisoryLease, DbHandle } from '~/db/client';
import { createSmtpTransport } from './adapters/mail/smtp';
import type { MailTransport } from './core/mail/delivery';
import { clustersOf, isBudgetEnforcing, isCheckpointing, isSchedulerUnavailable, type SchedulerPort } from './core/scheduler/port';
import { env } from './env.js';
import { logger } from './observability/log';
import { metrics } from './observability/metrics';
import { issueMonthlyInvoices } from './services/billing/invoices';
import { expireDueAllocations } from './services/ledger/ledger';
import { releaseLostModelCalls } from './services/inference/metering';
import { deliverDueMails } from './services/mail/mail';
import { attachmentRenderer } from './mail-attachments';
import { closeDueRounds } from './services/ledger/calls';
import { requestDueReports } from './services/ledger/reports';
import { sendReviewReminders } from './services/mail/review-reminders';
import { sendInvoiceReminders } from './services/billing/payments';
import { sendExpiryReminders } from './services/mail/reminders';
import { reconcileOnce, recordClusterSample } from './services/jobs/reconciler';
import { noteSchedulerOutcome } from './services/cluster/scheduler-status';
import { checkSchedulerUsage, importOutsideUsage } from './services/cluster/outside-usage';
import type { UsageCheck } from './core/scheduler/usage-check';
import { budgetSyncDue, syncSchedulerBudgets } from './services/cluster/scheduler-budgets';
import { runDueWhatIf } from './services/planning/what-if';
import { scanStorage } from './services/files/storage';
import { sweepUploads } from './services/files/uploads';
import { configuredCatalogue } from './catalogue';
import { configuredSiteRoots } from './services/files/roots';
import type { SiteRoots } from './services/files/workspace';

/** How often the worker looks whether the budgets' full sync is due (it also is when a sync failed). */
const BUDGET_CHECK_MS = 30_000;
/** How often the worker looks for calls' rounds past their cut-off. */
const ROUND_CLOSE_MS = 5_000;

export const WORKER_LOCK_KEY = 7_260_001;

export interface Worker {
  stop: () => void;
  /** tick runs one round now (tests and the CLI). */
  tick: () => Promise<void>;
}

export interface WorkerOptions {
  reconcileMs?: number;
  now?: () => Date;
  log?: (line: string) => void;
  /** Seconds between full syncs of the scheduler's budgets (default SLURM_BUDGET_SYNC_SECONDS). */
  budgetSyncSeconds?: number;
  /** Where mail goes (default: SMTP_URL's server from MAIL_FROM; null = keep the outbox, send nothing). */
  mail?: { transport: MailTransport; from: string } | null;
  /** Minutes between scans of the workspaces' storage (default STORAGE_SCAN_MINUTES), and where they lie (default the catalogue's). */
  storageScanMinutes?: number;
  files?: SiteRoots;
}

/** mailFromEnv is the SMTP transport the configuration names, or null without SMTP_URL. */
function mailFromEnv(): { transport: MailTransport; from: string } | null {
  const { SMTP_URL, MAIL_FROM } = env();
  return SMTP_URL ? { transport: createSmtpTransport(SMTP_URL), from: MAIL_FROM } : null;
}

const state: { worker?: Worker } = ((globalThis as { __portalWorker?: { worker?: Worker } }).__portalWorker ??= {});

/** startWorker starts the background rounds once per process; it waits for the advisory lock if another process holds it. */
export function startWorker(handle: DbHandle, scheduler: SchedulerPort, options: WorkerOptions = {}): Worker {
  if (state.worker) return state.worker;
  const now = options.now ?? (() => new Date());
  // JSON lines on stdout (server/observability/log.ts); tests pass their own `log` to read what it says.
  const log = options.log ?? ((line: string) => logger().info({ component: 'worker' }, line.replace(/^\[worker\] /, '')));
  const fail = (message: string, error: unknown) => logger().error({ component: 'worker', err: error }, message);
  const everySeconds = options.budgetSyncSeconds ?? env().SLURM_BUDGET_SYNC_SECONDS;
  let inFlight: Promise<void> | null = null;
  let lease: AdvisoryLease | null = null;
  let lastSample = 0;
  let lastExpiry = 0;
  let lastInvoicing = 0;
  let lastBudgetCheck = 0;
  /** The UTC day whose expiry reminders this process has seen done: a round asks the database once a day. */
  let remindedDay = '';
  let lastReminderTry = 0;
  let lastRoundClose = 0;
  let reviewRemindedDay = '';
  let lastReviewReminderTry = 0;
  /** The same for the payment reminders of overdue invoices. */
  let invoiceRemindedDay = '';
  let lastInvoiceReminderTry = 0;
  const mail = options.mail === undefined ? mailFromEnv() : options.mail;
  let mailInFlight: Promise<void> | null = null;
  /** Sends what is due in the outbox, beside the rounds: a slow SMTP server must not hold up the reconciler. */
  const sendMail = () => {
    if (!mail) return;
    mailInFlight ??= deliverDueMails(handle.db, mail.transport, { from: mail.from, now, renderAttachment: attachmentRenderer(handle.db) })
      .then((sent) => {
        if (sent.sent || sent.failed) log(`[worker] mail: ${sent.sent} sent, ${sent.failed} given up, ${sent.retrying} to retry`);
      })
      .catch((error: unknown) => fail('sending mail failed', error))
      .finally(() => {
        mailInFlight = null;
      });
  };
  let whatIfInFlight: Promise<void> | null = null;
  let lastWhatIfCheck = 0;
  /** Staff's what-if runs, beside the rounds: a replay yields between slices, so the reconciler goes on meanwhile. */
  const runWhatIf = (at: Date) => {
    if (whatIfInFlight || at.getTime() - lastWhatIfCheck < 2000) return;
    lastWhatIfCheck = at.getTime();
    whatIfInFlight = (async () => {
      for (let id = await runDueWhatIf(handle.db, now); id; id = await runDueWhatIf(handle.db, now)) log(`[worker] what-if run ${id} finished`);
    })()
      .catch((error: unknown) => fail('what-if run failed', error))
      .finally(() => {
        whatIfInFlight = null;
      });
  };
  let scanInFlight: Promise<void> | null = null;
  let lastScan = 0;
  const scanEveryMs = (options.storageScanMinutes ?? env().STORAGE_SCAN_MINUTES) * 60_000;
  /** The workspaces' storage, beside the rounds: a scan walks every file, which may take a while on a big filesystem. */
  const scanWorkspaces = (at: Date) => {
    if (scanInFlight || at.getTime() - lastScan < scanEveryMs) return;
    lastScan = at.getTime();
    const roots = options.files ?? configuredSiteRoots();
    scanInFlight = scanStorage(handle.db, roots, now)
      .then(async (scan) => {
        // Uploads given up (or placed) a week ago: their staged bytes and records go.
        const swept = await sweepUploads(roots, configuredCatalogue().sites.map((site) => site.id), at);
        if (swept) log(`[worker] uploads: ${swept} expired or placed upload(s) cleared from the staging folders`);
        if (scan.changed || scan.failed || scan.alerts) log(`[worker] storage: ${scan.scanned} workspace(s) scanned, ${scan.changed} changed, ${scan.alerts} alert(s), ${scan.failed} failed`);
      })
      .catch((error: unknown) => fail('scanning the workspaces failed', error))
      .finally(() => {
        scanInFlight = null;
      });
  };
  const clusters = clustersOf(scheduler);
  /** One cluster's part of a round: its jobs reconciled, its load sampled, its health noted, its engine snapshotted. */
  const followCluster = async (cluster: (typeof clusters)[number], at: Date, sampleDue: boolean) => {
    const round = await reconcileOnce(handle.db, cluster.port, at, { sites: cluster.sites });
    const name = clusters.length > 1 ? ` on ${cluster.name}` : '';
    if (round.settled) log(`[worker] settled ${round.settled} finished job(s)${name}`);
    let schedulerError = round.schedulerError;
    if (sampleDue || schedulerError) {
      // Once a minute, and every round while the scheduler is away (the sample is the probe that sees it back).
      try {
        await recordClusterSample(handle.db, cluster.port, at);
        schedulerError = null;
      } catch (error) {
        if (!isSchedulerUnavailable(error)) throw error;
        schedulerError = error;
      }
    }
    if (schedulerError !== undefined) await noteSchedulerOutcome(handle.db, at, schedulerError, cluster.name);
    // The simulated cluster snapshots its engine here, off the request path, when one is due.
    if (isCheckpointing(cluster.port)) await cluster.port.checkpoint();
  };
  const round = async () => {
    try {
      if (lease && !(await lease.stillHeld())) {
        log('[worker] lost the worker lock (connection dropped?): this process stops acting');
        await lease.release();
        lease = null;
        metrics().workerLeader.set(0);
      }
      if (!lease) {
        lease = await handle.tryAdvisoryLock(WORKER_LOCK_KEY);
        if (!lease) return;
        metrics().workerLeader.set(1);
        log('[worker] this process runs the reconciler');
      }
      const at = now();
      sendMail();
      runWhatIf(at);
      scanWorkspaces(at);
      const sampleDue = at.getTime() - lastSample >= 60_000;
      if (sampleDue) lastSample = at.getTime();
      // Each cluster on its own (one per group of sites, or the one scheduler): a cluster that is down or
      // failing holds up only its own jobs.
      for (const cluster of clusters) {
        try {
          await followCluster(cluster, at, sampleDue);
        } catch (error) {
          fail(`following cluster ${cluster.name} failed`, error);
        }
      }
      // Calls' rounds past their cut-off close within seconds of it, and their applications go to review
      // together (issue #32): an indexed read of the open rounds due, nothing more when none is.
      if (at.getTime() - lastRoundClose >= ROUND_CLOSE_MS) {
        lastRoundClose = at.getTime();
        const closedRounds = await closeDueRounds(handle.db, at);
        if (closedRounds.length) log(`[worker] closed ${closedRounds.length} round(s) of calls at their cut-off`);
      }
      if (at.getTime() - lastExpiry >= 60_000) {
        lastExpiry = at.getTime();
        const expired = await expireDueAllocations(handle.db, at.toISOString().slice(0, 10), { step: scheduler, now: at });
        if (expired.length) log(`[worker] expired ${expired.length} allocation(s) at the end of their period`);
        // Model calls whose gateway process ended before their answer: their reservations go back.
        const lost = await releaseLostModelCalls(handle.db, at);
        if (lost) log(`[worker] released ${lost} model call(s) left open by a gateway that stopped`);
        // Requests whose period ended: their PI is asked for the end-of-allocation report, once.
        const asked = await requestDueReports(handle.db, at);
        if (asked) log(`[worker] asked for ${asked} end-of-allocation report(s)`);
      }
      // Every project's budget, when the full sync is due or a sync failed since: what heals a missed trigger.
      if (isBudgetEnforcing(scheduler) && at.getTime() - lastBudgetCheck >= Math.min(BUDGET_CHECK_MS, everySeconds * 1000)) {
        lastBudgetCheck = at.getTime();
        if (await budgetSyncDue(handle.db, at, everySeconds)) {
          // First what ran around the portal (sbatch from a shell), so the budgets handed over count it; then
          // the ledger beside the scheduler's accounting, recorded with the sync for staff.
          let usage: UsageCheck | null = null;
          try {
            const outside = await importOutsideUsage(handle.db, scheduler, at);
            if (outside?.imported) log(`[worker] imported ${outside.imported} job(s) run outside the portal (${outside.charged} charged)`);
            usage = await checkSchedulerUsage(handle.db, scheduler, at);
          } catch (error) {
            if (!isSchedulerUnavailable(error)) throw error;
            log(`[worker] reading the scheduler's accounting failed: ${error instanceof Error ? error.message : String(error)}`);
          }
          const sync = await syncSchedulerBudgets(handle.db, scheduler, { now: at, usage });
          if (sync && !sync.ok) log(`[worker] syncing the scheduler's budgets failed: ${sync.error}`);
          else if (sync?.mismatches.length) log(`[worker] the scheduler holds ${sync.mismatches.length} budget(s) other than asked`);
        }
      }
      // Once per UTC day (the claim row makes it once across processes too); a failure is tried again a
      // minute later and does not hold up the rest of the round.
      const today = at.toISOString().slice(0, 10);
      if (remindedDay !== today && at.getTime() - lastReminderTry >= 60_000) {
        lastReminderTry = at.getTime();
        try {
          const reminded = await sendExpiryReminders(handle.db, at);
          remindedDay = today;
          if (reminded.people) log(`[worker] reminded ${reminded.people} person(s) of ${reminded.allocations} allocation(s) ending soon`);
        } catch (error) {
          fail('expiry reminders failed (tried again in a minute)', error);
        }
      }
      if (reviewRemindedDay !== today && at.getTime() - lastReviewReminderTry >= 60_000) {
        lastReviewReminderTry = at.getTime();
        try {
          const reminded = await sendReviewReminders(handle.db, at);
          reviewRemindedDay = today;
          if (reminded.reviewers) log(`[worker] reminded ${reminded.reviewers} reviewer(s) of ${reminded.reviews} review(s) due`);
        } catch (error) {
          fail('review reminders failed (tried again in a minute)', error);
        }
      }
      if (invoiceRemindedDay !== today && at.getTime() - lastInvoiceReminderTry >= 60_000) {
        lastInvoiceReminderTry = at.getTime();
        try {
          const reminded = await sendInvoiceReminders(handle.db, at, env().INVOICE_REMINDER_DAYS);
          invoiceRemindedDay = today;
          if (reminded.sent.length) log(`[worker] sent ${reminded.sent.length} payment reminder(s) for overdue invoices`);
        } catch (error) {
          fail('payment reminders failed (tried again in a minute)', error);
        }
      }
      // After settling, so last month's finished jobs are in: issue last month's invoices once they are due.
      if (at.getTime() - lastInvoicing >= 60_000) {
        lastInvoicing = at.getTime();
        const run = await issueMonthlyInvoices(handle.db, at, { vatPermille: env().VAT_PERMILLE });
        if (run.issued.length) log(`[worker] issued ${run.issued.length} invoice(s) for ${run.month}`);
      }
    } catch (error) {
      fail('round failed', error);
    }
  };
  // One round at a time: a tick during a round waits for that round instead of starting another.
  const tick = (): Promise<void> => {
    inFlight ??= round().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
  const timer = setInterval(() => void tick(), options.reconcileMs ?? 1000);
  timer.unref();
  void tick();
  state.worker = {
    tick,
    stop: () => {
      clearInterval(timer);
      state.worker = undefined;
      void lease?.release();
      lease = null;
      metrics().workerLeader.set(0);
    },
  };
  return state.worker;
}
