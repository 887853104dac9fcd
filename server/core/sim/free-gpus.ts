/**
 * The free GPUs of every node, kept across scheduling cycles and indexed for best-fit placement, so a
 * cycle never scans a partition's nodes: per partition and per free count (0 … GPUs per node) a bitset
 * of its nodes in index order, and how many nodes each holds. A down node is in no set (free −1).
 *
 * `place` gives exactly `placeJob` (placement.ts) over the same free GPUs: the nodes with the fewest
 * free GPUs that still fit, lowest index first (`incremental.test.ts` checks it on random states).
 */

/** Free GPUs per node, indexed by partition and free count. */
export class FreeGpus {
  private readonly allocated: Int32Array;
  private readonly down: Uint8Array;
  /** Each node's place in its partition's node list. */
  private readonly slot: Int32Array;
  /** Per partition: its nodes in index order. */
  private readonly members: number[][];
  /** Per partition, per free count: a bitset over the partition's node list. */
  private readonly sets: Uint32Array[][];
  /** Per partition, per free count: how many nodes have it. */
  private readonly counts: Int32Array[];

  /** `partitionOf[i]` is node i's partition; `gpusPerNode[p]` partition p's node size. Every node starts up and idle. */
  constructor(
    private readonly partitionOf: ArrayLike<number>,
    private readonly gpusPerNode: readonly number[],
  ) {
    const nodes = partitionOf.length;
    this.allocated = new Int32Array(nodes);
    this.down = new Uint8Array(nodes);
    this.slot = new Int32Array(nodes);
    this.members = gpusPerNode.map(() => []);
    for (let i = 0; i < nodes; i++) {
      const list = this.members[partitionOf[i]!]!;
      this.slot[i] = list.length;
      list.push(i);
    }
    this.sets = gpusPerNode.map((size, p) => Array.from({ length: size + 1 }, () => new Uint32Array(Math.ceil(this.members[p]!.length / 32))));
    this.counts = gpusPerNode.map((size) => new Int32Array(size + 1));
    for (let i = 0; i < nodes; i++) this.enter(i);
  }

  /** free is node i's free GPUs, −1 when it is down. */
  free(node: number): number {
    return this.down[node] ? -1 : this.gpusPerNode[this.partitionOf[node]!]! - this.allocated[node]!;
  }

  /** nodesOf lists a partition's nodes in index order. */
  nodesOf(partition: number): readonly number[] {
    return this.members[partition] ?? [];
  }

  /** allocate takes (positive) or gives back (negative) GPUs of a node. */
  allocate(node: number, gpus: number): void {
    this.leave(node);
    this.allocated[node] = this.allocated[node]! + gpus;
    this.enter(node);
  }

  /** setDown marks a node down (it leaves the index) or up again. */
  setDown(node: number, down: boolean): void {
    this.leave(node);
    this.down[node] = down ? 1 : 0;
    this.enter(node);
  }

  /** fitting counts a partition's nodes with at least `gpus` free. */
  fitting(partition: number, gpus: number): number {
    const counts = this.counts[partition];
    if (!counts) return 0;
    let n = 0;
    for (let f = Math.max(0, gpus); f < counts.length; f++) n += counts[f]!;
    return n;
  }

  /** place picks `nodeCount` nodes with `gpusPerNode` free best-fit (fewest free first, then lowest index), or null. */
  place(partition: number, nodeCount: number, gpusPerNode: number): number[] | null {
    if (this.fitting(partition, gpusPerNode) < nodeCount) return null;
    const counts = this.counts[partition]!;
    const sets = this.sets[partition]!;
    const members = this.members[partition]!;
    const out: number[] = [];
    for (let f = Math.max(0, gpusPerNode); out.length < nodeCount; f++) {
      if (counts[f] === 0) continue;
      const set = sets[f]!;
      for (let w = 0; w < set.length && out.length < nodeCount; w++) {
        for (let bits = set[w]!; bits !== 0 && out.length < nodeCount; bits &= bits - 1) {
          out.push(members[w * 32 + (31 - Math.clz32(bits & -bits))]!);
        }
      }
    }
    return out;
  }

  private enter(node: number): void {
    this.mark(node, true);
  }

  private leave(node: number): void {
    this.mark(node, false);
  }

  /** mark adds a node to (or takes it from) the set of its free count; a down node is in none. */
  private mark(node: number, add: boolean): void {
    const free = this.free(node);
    if (free < 0) return;
    const p = this.partitionOf[node]!;
    const s = this.slot[node]!;
    const word = s >> 5;
    const bit = 1 << (s & 31);
    const set = this.sets[p]![free]!;
    set[word] = add ? set[word]! | bit : set[word]! & ~bit;
    this.counts[p]![free]! += add ? 1 : -1;
  }
}
