/**
 * The general engine's event queue: a binary min-heap kept in a plain array
 * (so it serialises as is), ordered by time, then kind, then sequence number.
 * The kind order fixes what happens first within one instant: job ends, node
 * repairs, node failures, arrivals, then wake-ups (cancellations).
 */

/** Event kinds, in the order they are handled within one instant. */
export const EventKind = {
  JobEnd: 0,
  NodeRepair: 1,
  NodeFail: 2,
  JobArrival: 3,
  Wake: 4,
} as const;

/** One of the `EventKind` values. */
export type EventKindValue = (typeof EventKind)[keyof typeof EventKind];

/** A scheduled event. `ref` is a job id or a node index; `epoch`/`repairSeconds` only for node failures. */
export interface SimEvent {
  atSeconds: number;
  kind: EventKindValue;
  seq: number;
  ref: string | number;
  /** For random (MTBF) failures: the node's failure epoch when drawn; null for explicit failures. */
  epoch?: number | null;
  repairSeconds?: number;
}

/** compareEvents orders events by time, kind, then sequence. */
export function compareEvents(a: SimEvent, b: SimEvent): number {
  return a.atSeconds - b.atSeconds || a.kind - b.kind || a.seq - b.seq;
}

/** pushEvent adds an event to the heap. */
export function pushEvent(heap: SimEvent[], event: SimEvent): void {
  heap.push(event);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (compareEvents(heap[parent]!, heap[i]!) <= 0) break;
    [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
    i = parent;
  }
}

/** peekEvent returns the earliest event without removing it. */
export function peekEvent(heap: readonly SimEvent[]): SimEvent | undefined {
  return heap[0];
}

/** popEvent removes and returns the earliest event. */
export function popEvent(heap: SimEvent[]): SimEvent | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (top === undefined || last === undefined || heap.length === 0) return top;
  heap[0] = last;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < heap.length && compareEvents(heap[l]!, heap[m]!) < 0) m = l;
    if (r < heap.length && compareEvents(heap[r]!, heap[m]!) < 0) m = r;
    if (m === i) break;
    [heap[m], heap[i]] = [heap[i]!, heap[m]!];
    i = m;
  }
  return top;
}
