// The audit log's kinds in words: every kind of server/core/audit.ts has `audit.action.<kind>` in
// the catalogues, or this file does not compile.
import type { AuditKind } from '~/server/core/audit';
import type { MessageKey } from './en';

/** auditKindText is the message key naming an audit kind. */
export function auditKindText(kind: AuditKind): MessageKey {
  const key: `audit.action.${AuditKind}` & MessageKey = `audit.action.${kind}`;
  return key;
}
