import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUDIT_KINDS, isAuditKind } from '~/server/core/audit';
import { auditKindText } from './audit';
import { de } from './de';
import { en } from './en';

/** Every .ts file under a folder, tests left out. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.includes('.test.') ? [path] : [];
  });
}

describe('audit kinds in words', () => {
  it.each(AUDIT_KINDS)('%s has its own text in English and German', (kind) => {
    const key = auditKindText(kind);
    expect(en[key]).toBeTruthy();
    expect(de[key]).toBeTruthy();
    expect(en[key]).not.toContain(kind);
    expect(de[key]).not.toBe(en[key]);
  });

  // The typecheck holds recordAudit to AUDIT_KINDS; this reads the sources as a second net, so
  // a kind written as a plain string somewhere (an `as` cast, a map typed string) is caught too.
  it('every audit kind written in the services is a known kind', () => {
    const written = new Set<string>();
    for (const file of sources(join(process.cwd(), 'server'))) {
      for (const match of readFileSync(file, 'utf8').matchAll(/\baction: '([a-z_]+\.[a-z_]+)'/g)) written.add(match[1]!);
    }
    expect(written.size).toBeGreaterThan(30);
    expect([...written].filter((kind) => !isAuditKind(kind))).toEqual([]);
  });
});
