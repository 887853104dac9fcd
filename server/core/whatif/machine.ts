/**
 * What-if planning (pure): the machine a history is replayed on, the changes staff may propose to
 * it, and the jobs of that history. `applyChanges` turns the current machine and its history into
 * the proposed ones; `changeProblems` says what is wrong with a proposal, naming the field.
 *
 * A new class takes a share of an existing class's jobs (every k-th job in submit order, spread
 * evenly), each only if it fits the new class's nodes; it copies the template class's GPU model
 * and power model, and a moved job's run time scales by the ratio of peak TFLOP/s (the fine-tuning
 * estimate's model: the same work at the new class's speed). Moved jobs keep their price per
 * GPU-hour.
 */
import { capItCentiW, jobPowerCentiW, siteIdleCentiW as idleOf, type Partition, type PolicyName } from '../sim';

/** A site as the what-if sees it: its power figures and, optionally, a facility cap. */
export interface WhatIfSite {
  id: string;
  country: string;
  eu: boolean;
  /** PUE × 1000. */
  pueMilli: number;
  gridGco2PerKwh: number;
  heatReusePermille: number;
  /** Facility power cap in W, or null. */
  powerCapW: number | null;
}

/** The whole machine: sites, partitions (one per resource class) and the scheduling policy. */
export interface WhatIfMachine {
  sites: WhatIfSite[];
  partitions: Partition[];
  /** Dense peak TFLOP/s per GPU, by partition (resource class id). */
  peakTflops: Record<string, number>;
  policy: PolicyName;
}

/** One job of the history, as it is replayed: what it asked for and how long it really ran. */
export interface WhatIfJob {
  id: string;
  submitSeconds: number;
  beginSeconds: number | null;
  partition: string;
  gpus: number;
  nodes: number;
  walltimeSeconds: number;
  runtimeSeconds: number;
  gpuUtilPercent: number;
  /** The fair-share account (the project). */
  account: string;
  user: string;
  centsPerGpuHour: number;
}

/** A proposed change to the machine. */
export type WhatIfChange =
  | { kind: 'nodes'; classId: string; delta: number }
  | { kind: 'newClass'; id: string; siteId: string; templateClassId: string; nodes: number; gpusPerNode: number; fromClassId: string; sharePercent: number }
  | { kind: 'powerCap'; siteId: string; capKw: number | null }
  | { kind: 'pue'; siteId: string; pueMilli: number }
  | { kind: 'grid'; siteId: string; gco2PerKwh: number }
  | { kind: 'policy'; policy: PolicyName };

/** A problem with a proposal: the field (`changes.0.classId`) and a message key with its values. */
export interface ChangeProblem {
  field: string;
  key: string;
  params?: Record<string, string | number>;
}

/** changeProblems lists what is wrong with the changes on this machine (empty: they apply). */
export function changeProblems(machine: WhatIfMachine, changes: readonly WhatIfChange[]): ChangeProblem[] {
  const problems: ChangeProblem[] = [];
  let partitions = machine.partitions;
  const siteIds = new Set(machine.sites.map((s) => s.id));
  changes.forEach((change, i) => {
    const at = (name: string) => `changes.${i}.${name}`;
    const classOf = (id: string) => partitions.find((p) => p.name === id);
    switch (change.kind) {
      case 'nodes': {
        const p = classOf(change.classId);
        if (!p) problems.push({ field: at('classId'), key: 'whatIf.problem.unknownClass', params: { id: change.classId } });
        else if (change.delta === 0) problems.push({ field: at('delta'), key: 'whatIf.problem.noChange' });
        else if (p.nodes + change.delta < 1) problems.push({ field: at('delta'), key: 'whatIf.problem.tooFewNodes', params: { nodes: p.nodes, most: p.nodes - 1 } });
        else partitions = partitions.map((q) => (q === p ? { ...q, nodes: q.nodes + change.delta } : q));
        break;
      }
      case 'newClass': {
        if (classOf(change.id)) problems.push({ field: at('id'), key: 'whatIf.problem.classExists', params: { id: change.id } });
        if (!siteIds.has(change.siteId)) problems.push({ field: at('siteId'), key: 'whatIf.problem.unknownSite', params: { id: change.siteId } });
        if (!classOf(change.templateClassId)) problems.push({ field: at('templateClassId'), key: 'whatIf.problem.unknownClass', params: { id: change.templateClassId } });
        if (!classOf(change.fromClassId)) problems.push({ field: at('fromClassId'), key: 'whatIf.problem.unknownClass', params: { id: change.fromClassId } });
        const template = classOf(change.templateClassId);
        if (template && classOf(change.fromClassId) && !classOf(change.id) && siteIds.has(change.siteId)) partitions = [...partitions, newPartition(template, change)];
        break;
      }
      case 'powerCap':
      case 'pue':
      case 'grid':
        if (!siteIds.has(change.siteId)) problems.push({ field: at('siteId'), key: 'whatIf.problem.unknownSite', params: { id: change.siteId } });
        break;
      case 'policy':
        break;
    }
  });
  return problems;
}

function newPartition(template: Partition, change: Extract<WhatIfChange, { kind: 'newClass' }>): Partition {
  return { ...template, name: change.id, siteId: change.siteId, nodes: change.nodes, gpusPerNode: change.gpusPerNode };
}

/** Whether the k-th job (from 0) of a class goes to the new class when it takes `percent` of them: spread evenly. */
export function takesShare(k: number, percent: number): boolean {
  return Math.floor(((k + 1) * percent) / 100) > Math.floor((k * percent) / 100);
}

/** applyChanges returns the proposed machine and the history as it would be submitted to it (the changes must have no problems). */
export function applyChanges(machine: WhatIfMachine, jobs: readonly WhatIfJob[], changes: readonly WhatIfChange[]): { machine: WhatIfMachine; jobs: WhatIfJob[] } {
  let m: WhatIfMachine = { ...machine, sites: machine.sites.map((s) => ({ ...s })), partitions: machine.partitions.map((p) => ({ ...p })), peakTflops: { ...machine.peakTflops } };
  let js = jobs.map((j) => ({ ...j }));
  const site = (id: string) => m.sites.find((s) => s.id === id)!;
  for (const change of changes) {
    switch (change.kind) {
      case 'nodes':
        m.partitions = m.partitions.map((p) => (p.name === change.classId ? { ...p, nodes: p.nodes + change.delta } : p));
        break;
      case 'newClass': {
        const template = m.partitions.find((p) => p.name === change.templateClassId)!;
        const from = m.partitions.find((p) => p.name === change.fromClassId)!;
        const target = newPartition(template, change);
        m.partitions = [...m.partitions, target];
        const speed = (m.peakTflops[from.name] ?? 0) > 0 && (m.peakTflops[template.name] ?? 0) > 0 ? m.peakTflops[from.name]! / m.peakTflops[template.name]! : 1;
        m.peakTflops = { ...m.peakTflops, [target.name]: m.peakTflops[template.name] ?? 0 };
        let k = 0;
        js = js.map((j) => {
          if (j.partition !== from.name) return j;
          if (!takesShare(k++, change.sharePercent)) return j;
          const nodes = Math.ceil(j.gpus / target.gpusPerNode);
          if (j.gpus % nodes !== 0 || nodes > target.nodes) return j;
          const scale = (s: number) => Math.max(1, Math.ceil(s * speed));
          const walltime = Math.min(scale(j.walltimeSeconds), target.maxWalltimeSeconds);
          return { ...j, partition: target.name, nodes, runtimeSeconds: Math.min(scale(j.runtimeSeconds), walltime), walltimeSeconds: walltime };
        });
        break;
      }
      case 'powerCap':
        site(change.siteId).powerCapW = change.capKw === null ? null : Math.round(change.capKw * 1000);
        break;
      case 'pue':
        site(change.siteId).pueMilli = change.pueMilli;
        break;
      case 'grid':
        site(change.siteId).gridGco2PerKwh = change.gco2PerKwh;
        break;
      case 'policy':
        m = { ...m, policy: change.policy };
        break;
    }
  }
  return { machine: m, jobs: js };
}

/** siteIdleCentiW is a site's IT draw with every node up and idle, in centiW. */
export function siteIdleCentiW(machine: WhatIfMachine, siteId: string): number {
  return idleOf(machine.partitions.filter((p) => p.siteId === siteId));
}

/** Why a job can never run on a machine, or null when it can (alone, on the idle machine). */
export function neverRuns(machine: WhatIfMachine, job: WhatIfJob): 'partition' | 'nodes' | 'walltime' | 'power' | null {
  const p = machine.partitions.find((q) => q.name === job.partition);
  if (!p) return 'partition';
  if (job.nodes > p.nodes || job.gpus / job.nodes > p.gpusPerNode) return 'nodes';
  if (job.walltimeSeconds > p.maxWalltimeSeconds) return 'walltime';
  const site = machine.sites.find((s) => s.id === p.siteId)!;
  if (site.powerCapW !== null) {
    const cap = capItCentiW({ powerCapW: site.powerCapW, pueMilli: site.pueMilli })!;
    if (siteIdleCentiW(machine, site.id) + jobPowerCentiW(p, job.gpus, job.gpuUtilPercent) > cap) return 'power';
  }
  return null;
}
