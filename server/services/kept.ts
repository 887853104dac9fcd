// A value a process reuses for a short while: read once per key and period, not once per call (the
// gateway's hot path). Kept on globalThis, so a module loaded twice (Next.js's bundles) shares it;
// at most `max` keys, all dropped when full.

/** keptFor returns `(key, load)`: `load()`'s answer for the key, read again once it is `ttlMs` old. */
export function keptFor<T>(name: string, ttlMs: number, max = 10_000): (key: string, load: () => Promise<T>) => Promise<T> {
  type Kept = Map<string, { value: unknown; at: number }>;
  const registry = ((globalThis as { __portalKept?: Map<string, Kept> }).__portalKept ??= new Map<string, Kept>());
  let kept = registry.get(name);
  if (!kept) registry.set(name, (kept = new Map<string, { value: unknown; at: number }>()));
  const values = kept;
  return async (key, load) => {
    const hit = values.get(key);
    if (hit && performance.now() - hit.at < ttlMs) return hit.value as T;
    const value = await load();
    if (values.size >= max) values.clear();
    values.set(key, { value, at: performance.now() });
    return value;
  };
}

/** forgetKept drops every value kept under `name` (a change this process made that they no longer show). */
export function forgetKept(name: string): void {
  (globalThis as { __portalKept?: Map<string, Map<string, unknown>> }).__portalKept?.get(name)?.clear();
}
