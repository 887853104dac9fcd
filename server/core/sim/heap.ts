/** A binary min-heap of (time, job index) pairs in preallocated typed arrays: no allocation per push or pop. */

/** TimeHeap holds up to `capacity` entries ordered by time (ties in no particular order). */
export class TimeHeap {
  private readonly keys: Float64Array;
  private readonly values: Int32Array;
  size = 0;

  /** constructor preallocates room for `capacity` entries. */
  constructor(capacity: number) {
    this.keys = new Float64Array(Math.max(1, capacity));
    this.values = new Int32Array(Math.max(1, capacity));
  }

  /** topTime is the smallest time (only meaningful when size > 0). */
  topTime(): number {
    return this.keys[0]!;
  }

  /** topValue is the job index with the smallest time (only meaningful when size > 0). */
  topValue(): number {
    return this.values[0]!;
  }

  /** push adds an entry. */
  push(time: number, value: number): void {
    const keys = this.keys;
    const values = this.values;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pk = keys[parent]!;
      if (pk <= time) break;
      keys[i] = pk;
      values[i] = values[parent]!;
      i = parent;
    }
    keys[i] = time;
    values[i] = value;
  }

  /** pop removes the entry with the smallest time. */
  pop(): void {
    const keys = this.keys;
    const values = this.values;
    const n = --this.size;
    if (n <= 0) return;
    const time = keys[n]!;
    const value = values[n]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && keys[child + 1]! < keys[child]!) child++;
      if (keys[child]! >= time) break;
      keys[i] = keys[child]!;
      values[i] = values[child]!;
      i = child;
    }
    keys[i] = time;
    values[i] = value;
  }
}
