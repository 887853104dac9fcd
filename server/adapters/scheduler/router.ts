// Several clusters, one per group of sites (a centre with a Slurm cluster per site): the router is the
// SchedulerPort the request path uses. It sends each job to the cluster of its site (the job's site is
// read from the portal's records, `siteOf`), so a cluster that is down stops only its own jobs. The
// worker follows each cluster on its own (clustersOf): its own reconciliation, health and samples.
import {
  isBudgetEnforcing,
  isUsageReporting,
  SchedulerRefusedError,
  type BudgetEnforcing,
  type BudgetHold,
  type ClusterDescription,
  type OutsideJob,
  type RoutedCluster,
  type SchedulerBudget,
  type SchedulerBudgetState,
  type SchedulerJobSpec,
  type SchedulerJobStatus,
  type SchedulerPort,
  type UsageReporting,
  type ClusterSet,
} from '~/server/core/scheduler/port';

export interface ClusterRouterOptions {
  clusters: RoutedCluster[];
  /** The site of each portal job (from the portal's job records); jobs it does not know are left out. */
  siteOf: (portalJobIds: string[]) => Promise<Map<string, string>>;
}

export type ClusterRouter = SchedulerPort & BudgetEnforcing & UsageReporting & ClusterSet;

/** createClusterRouter routes each call to the cluster of the job's site (or of the budget's class). */
export function createClusterRouter({ clusters: given, siteOf }: ClusterRouterOptions): ClusterRouter {
  if (given.length === 0) throw new Error('a cluster router needs at least one cluster');
  // Each cluster's port tells its name (clusterNameOf), so what the worker or a hand-over notes of it is filed under it.
  const clusters = given.map((c) => ({ ...c, port: new Proxy(c.port, { get: (target, property, receiver): unknown => (property === 'clusterName' ? c.name : Reflect.get(target, property, receiver)) }) }));
  const bySite = new Map<string, RoutedCluster>();
  const byClass = new Map<string, RoutedCluster>();
  for (const c of clusters) {
    for (const site of c.sites) {
      if (bySite.has(site)) throw new Error(`site ${site} is given to two clusters (${bySite.get(site)!.name}, ${c.name})`);
      bySite.set(site, c);
    }
    for (const rc of c.classes) byClass.set(rc, c);
  }
  const clusterOfSite = (site: string | undefined): RoutedCluster => {
    const c = site === undefined ? undefined : bySite.get(site);
    if (!c) throw new SchedulerRefusedError(`no cluster runs jobs for site ${site ?? '(unknown)'}`, 'partition');
    return c;
  };
  /** The portal jobs by the cluster of their site (jobs of unknown sites are left out). */
  const grouped = async (ids: string[]): Promise<Map<RoutedCluster, string[]>> => {
    const sites = await siteOf(ids);
    const groups = new Map<RoutedCluster, string[]>();
    for (const id of ids) {
      const c = bySite.get(sites.get(id) ?? '');
      if (c) groups.set(c, [...(groups.get(c) ?? []), id]);
    }
    return groups;
  };
  /** Every cluster's answer; a cluster that fails fails the call, after the others have answered. */
  const all = async <T>(call: (c: RoutedCluster) => Promise<T>, of: readonly RoutedCluster[] = clusters): Promise<T[]> => {
    const settled = await Promise.allSettled(of.map(call));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
  };

  const located = clusters.find((c) => typeof c.port.outputLocation === 'function')?.port;
  const reaching = clusters.find((c) => typeof c.port.sessionAddress === 'function')?.port;
  const extending = clusters.some((c) => typeof c.port.extendTimeLimit === 'function');
  return {
    clusters,
    async submit(spec: SchedulerJobSpec) {
      const sites = await siteOf([spec.portalJobId]);
      return clusterOfSite(sites.get(spec.portalJobId)).port.submit(spec);
    },
    async cancel(portalJobId, options) {
      const sites = await siteOf([portalJobId]);
      const site = sites.get(portalJobId);
      if (site !== undefined && bySite.has(site)) await bySite.get(site)!.port.cancel(portalJobId, options);
    },
    async jobs(portalJobIds): Promise<SchedulerJobStatus[]> {
      const groups = await grouped(portalJobIds);
      return (await all((c) => c.port.jobs(groups.get(c)!), [...groups.keys()])).flat();
    },
    async describeCluster(): Promise<ClusterDescription> {
      const parts = await all((c) => c.port.describeCluster());
      return {
        at: parts.reduce((latest, p) => (p.at > latest ? p.at : latest), parts[0]!.at),
        partitions: parts.flatMap((p) => p.partitions),
        nodes: parts.flatMap((p) => p.nodes),
        pendingJobs: parts.reduce((s, p) => s + p.pendingJobs, 0),
        runningJobs: parts.reduce((s, p) => s + p.runningJobs, 0),
        powerW: parts.reduce((s, p) => s + p.powerW, 0),
      };
    },
    // Where a job's output lies is the same rule on every cluster of a centre (the shared SLURM_JOB_DIR).
    // A node name is one cluster's; the first that knows how to reach sessions answers (every real cluster by the name).
    ...(reaching ? { sessionAddress: (node: string) => reaching.sessionAddress!(node) } : {}),
    // A time limit is raised on the cluster of the job's site, if that cluster can.
    ...(extending
      ? {
          async extendTimeLimit(portalJobId: string, walltimeSeconds: number): Promise<boolean> {
            const port = clusterOfSite((await siteOf([portalJobId])).get(portalJobId)).port;
            if (!port.extendTimeLimit) throw new SchedulerRefusedError('this cluster does not extend time limits', 'other');
            return port.extendTimeLimit(portalJobId, walltimeSeconds);
          },
        }
      : {}),
    ...(located ? { outputLocation: (portalJobId: string, schedulerJobId: string, group?: string | null, arrayTask?: number | '%a') => located.outputLocation!(portalJobId, schedulerJobId, group, arrayTask) } : {}),
    async syncBudgets(budgets: SchedulerBudget[]): Promise<SchedulerBudgetState[]> {
      // Each cluster gets the budgets of its classes; a class no cluster runs is enforced nowhere.
      const enforcing = clusters.filter((c) => isBudgetEnforcing(c.port));
      const states = await all((c) => (c.port as SchedulerPort & BudgetEnforcing).syncBudgets(budgets.filter((b) => byClass.get(b.partition) === c)), enforcing);
      const unrouted = budgets.filter((b) => !enforcing.includes(byClass.get(b.partition)!)).map((b) => ({ account: b.account, partition: b.partition, gpuMinutes: null, usedGpuMinutes: null, notEnforced: true }));
      return [...states.flat(), ...unrouted];
    },
    async budgetHolds(): Promise<BudgetHold[]> {
      return (await all((c) => (c.port as SchedulerPort & BudgetEnforcing).budgetHolds(), clusters.filter((c) => isBudgetEnforcing(c.port)))).flat();
    },
    async outsideJobs(accounts: string[], since: Date): Promise<OutsideJob[]> {
      return (await all((c) => (c.port as SchedulerPort & UsageReporting).outsideJobs(accounts, since), clusters.filter((c) => isUsageReporting(c.port)))).flat();
    },
  };
}
