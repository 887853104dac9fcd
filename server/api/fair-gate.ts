// Fair sharing of one server process between tenants. A burst from one tenant (a script, a group
// submitting a hundred jobs at once) must not make every other tenant's pages slow: tenant-scoped
// calls take a slot of a bounded pool; each tenant may hold only a few slots at once; when a slot
// frees it goes to the waiting tenant holding the fewest, then the one given fewest lately; and a tenant with
// nothing running may always start one call, even when the pool is full. A tenant that is not
// bursting therefore never queues behind the others, however long their queues are.

interface TenantQueue {
  active: number;
  /** Calls granted since the tenant last had nothing running or waiting (a busy tenant's count grows). */
  grants: number;
  waiting: (() => void)[];
  /** Order in which tenants were last given a slot (lower = longer ago). */
  lastServed: number;
}

export interface FairGateOptions {
  /** Calls running at once in this process (beyond it, only a tenant's first call may start). */
  maxInFlight: number;
  /** Calls of one tenant running at once. */
  perTenant: number;
}

/** before orders waiting tenants: fewest calls running, then fewest granted lately, then served longest ago. */
function before(a: TenantQueue, b: TenantQueue): boolean {
  if (a.active !== b.active) return a.active < b.active;
  if (a.grants !== b.grants) return a.grants < b.grants;
  return a.lastServed < b.lastServed;
}

/** A fair gate: `run(tenant, fn)` runs fn when the tenant's turn comes. */
export class FairGate {
  private inFlight = 0;
  private served = 0;
  private readonly tenants = new Map<string, TenantQueue>();

  constructor(private readonly options: FairGateOptions) {
    if (!(options.maxInFlight >= 1 && options.perTenant >= 1)) throw new Error('FairGate: limits must be ≥ 1');
  }

  /** run waits for a slot for the tenant, runs fn and gives the slot back. */
  async run<T>(tenantId: string, fn: () => Promise<T>): Promise<T> {
    const leave = await this.enter(tenantId);
    try {
      return await fn();
    } finally {
      leave();
    }
  }

  /**
   * enter waits for a slot for the tenant and returns the function that gives it back (once; later
   * calls do nothing). With maxHoldMs the slot is given back by itself after that long, so work that
   * never reports its end (a page whose response was dropped) cannot keep its tenant waiting.
   */
  async enter(tenantId: string, options: { maxHoldMs?: number } = {}): Promise<() => void> {
    await this.acquire(tenantId);
    let held = true;
    const timer = options.maxHoldMs ? setTimeout(() => leave(), options.maxHoldMs) : undefined;
    timer?.unref?.();
    const leave = () => {
      if (!held) return;
      held = false;
      if (timer) clearTimeout(timer);
      this.release(tenantId);
    };
    return leave;
  }

  /** stats reports what is running and waiting (for tests and health). */
  stats(): { inFlight: number; waiting: number } {
    let waiting = 0;
    for (const q of this.tenants.values()) waiting += q.waiting.length;
    return { inFlight: this.inFlight, waiting };
  }

  private queueOf(tenantId: string): TenantQueue {
    let q = this.tenants.get(tenantId);
    if (!q) {
      q = { active: 0, grants: 0, waiting: [], lastServed: -1 };
      this.tenants.set(tenantId, q);
    }
    return q;
  }

  private acquire(tenantId: string): Promise<void> {
    const q = this.queueOf(tenantId);
    // A tenant with nothing running or waiting may always start: a tenant that is not bursting never
    // queues behind others. A call of a tenant whose earlier calls wait joins the back of its queue
    // (letting it start because the tenant's running calls happened to end let new calls overtake
    // the waiting ones for ever: in a burst some pages waited 40 s).
    if (q.waiting.length === 0 && (q.active === 0 || (q.active < this.options.perTenant && this.inFlight < this.options.maxInFlight))) {
      this.grant(q);
      return Promise.resolve();
    }
    return new Promise((resolve) => q.waiting.push(resolve));
  }

  private grant(q: TenantQueue): void {
    q.active++;
    q.grants++;
    this.inFlight++;
    q.lastServed = this.served++;
  }

  private release(tenantId: string): void {
    const q = this.tenants.get(tenantId);
    if (!q) return;
    q.active--;
    this.inFlight--;
    this.dispatch();
    if (q.active === 0 && q.waiting.length === 0) this.tenants.delete(tenantId);
  }

  private dispatch(): void {
    while (this.inFlight < this.options.maxInFlight) {
      let next: TenantQueue | undefined;
      for (const q of this.tenants.values()) {
        if (q.waiting.length === 0 || q.active >= this.options.perTenant) continue;
        if (!next || before(q, next)) next = q;
      }
      if (!next) return;
      this.grant(next);
      next.waiting.shift()!();
    }
  }
}

/**
 * defaultMaxInFlight is PORTAL_MAX_CONCURRENT_CALLS unless set: 2 calls a core (at least 4) for the
 * machine, shared by its web processes (PORTAL_WEB_PROCESSES), but at least 3 a process — about what keeps
 * one process's core busy while its calls wait on Postgres; more only queue inside it and lengthen
 * other tenants' waits (`npm run bench:http --processes 2` on 2 cores: 4 a process gave 74 req/s and
 * another tenant's p99 257 ms, 3 gave 71 and 197 ms, 2 gave 67 and 149 ms).
 */
export function defaultMaxInFlight(cores: number, processes: number): number {
  return Math.max(3, Math.ceil(Math.max(4, 2 * cores) / processes));
}
