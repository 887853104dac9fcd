// No import circles in server/ and db/, type-only imports included. ESLint's import-x/no-cycle (eslint.config.js)
// guards the imports that run; it cannot follow `import type`, so a circle of types (which still ties two
// modules to each other: neither is the lower one) is caught here, on the import graph read from the sources.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(rel);
    return /\.(ts|js)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [rel] : [];
  });
}

/** resolve turns an import specifier of `from` into a source file of the repo, or undefined (a package). */
function resolve(from: string, specifier: string, files: Set<string>): string | undefined {
  let base: string;
  if (specifier.startsWith('~/')) base = specifier.slice(2);
  else if (specifier.startsWith('.')) base = path.join(path.dirname(from), specifier);
  else return undefined;
  for (const candidate of [base, `${base}.ts`, `${base}.js`, path.join(base, 'index.ts')]) if (files.has(candidate)) return candidate;
  return base.endsWith('.js') && files.has(base.replace(/\.js$/, '.ts')) ? base.replace(/\.js$/, '.ts') : undefined;
}

/** importGraph maps each file to the files it imports or re-exports, types included. */
export function importGraph(dirs: string[]): Map<string, string[]> {
  const list = dirs.flatMap(sources);
  const files = new Set(list);
  const graph = new Map<string, string[]>();
  for (const file of list) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const specifiers = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+['"]([^'"]+)['"]/gms)].map((m) => m[1]!);
    graph.set(file, [...new Set(specifiers.map((s) => resolve(file, s, files)).filter((f): f is string => f !== undefined))]);
  }
  return graph;
}

/** cycles lists the import circles of a graph, each as the files along it (depth-first, each circle once). */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

describe('import circles', () => {
  it('finds a circle, also through a type-only import, and none in a tree', () => {
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]]))).toEqual([['a', 'b', 'c', 'a']]);
    expect(cycles(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]]))).toEqual([]);
  });

  it('reads imports, re-exports and `import type` from the sources', () => {
    const graph = importGraph(['server/services']);
    // jobs.ts imports its neighbours in the room and the transaction helpers above it.
    expect(graph.get('server/services/jobs/jobs.ts')).toEqual(expect.arrayContaining(['server/services/transaction.ts', 'server/services/jobs/co2e-saved.ts']));
  });

  it('server/ and db/ have none, type-only imports included', () => {
    expect(cycles(importGraph(['server', 'db'])).map((c) => c.join(' → '))).toEqual([]);
  });
});
