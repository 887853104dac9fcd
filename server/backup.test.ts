// The pure parts of backups: what a manifest shows of the source, and how a restore is compared with it.
import { describe, expect, it } from 'vitest';
import { compareFacts, stamp, withoutPassword, type BackupFacts } from './backup';

const facts: BackupFacts = {
  migrations: 66,
  tables: { allocations: 7, ledger_entries: 1970, audit_events: 49 },
  ledger: { grant: '36000', reserve: '900' },
  audit: { count: 49, lastId: 49, sha256: 'a'.repeat(64) },
  drifted: 0,
};

describe('backups', () => {
  it('keeps passwords out of the manifest, also of a multi-host URL', () => {
    expect(withoutPassword('postgres://portal:s3cret@db1:5432,db2:5432/portal?target_session_attrs=primary')).toBe('postgres://portal@db1:5432,db2:5432/portal?target_session_attrs=primary');
    expect(withoutPassword('postgresql://portal@db/portal')).toBe('postgresql://portal@db/portal');
    expect(stamp(new Date('2026-12-06T02:00:00.123Z'))).toBe('2026-12-06T02-00-00Z');
  });

  it('names every difference between a restored database and its manifest, and agrees when there is none', () => {
    expect(compareFacts(facts, structuredClone(facts))).toEqual([]);
    const restored = structuredClone(facts);
    restored.tables.ledger_entries = 1969;
    restored.ledger.reserve = '800';
    restored.audit = { count: 48, lastId: 48, sha256: 'b'.repeat(64) };
    restored.drifted = 2;
    expect(compareFacts(facts, restored)).toEqual([
      'ledger_entries: 1969 rows, the backup had 1970',
      'ledger reserve: 800, the backup had 900',
      'audit log: 48 rows to id 48 (digest bbbbbbbbbbbb), the backup had 49 to id 49 (aaaaaaaaaaaa)',
      '2 allocation(s) whose cached balance differs from their ledger',
    ]);
  });
});
