// The REST API's page cursors (issue #13): opaque to clients, a position in a list ordered newest
// first. Pure.

/** Where the previous page ended: its last row's time and id (the list's order, ties by id). */
export interface PagePosition {
  at: Date;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** encodeCursor turns a page's last position into the opaque `nextCursor`. */
export function encodeCursor(position: PagePosition): string {
  return Buffer.from(`${position.at.toISOString()}|${position.id}`, 'utf8').toString('base64url');
}

/** decodeCursor reads a cursor back; null for anything this API did not hand out. */
export function decodeCursor(cursor: string): PagePosition | null {
  const [iso, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || !iso || !id || !UUID.test(id)) return null;
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) || at.toISOString() !== iso ? null : { at, id };
}

/** pageOf cuts one row more than a page was asked for into the page and the cursor of the next (null: the last page). */
export function pageOf<T>(rows: T[], limit: number, position: (row: T) => PagePosition): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(position(last)) : null };
}
