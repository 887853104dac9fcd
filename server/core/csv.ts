// The one CSV writer of the portal (usage, centre exports). Pure. RFC 4180 with CRLF line ends,
// UTF-8 with a byte-order mark so spreadsheet programs open umlauts right, and text that a
// spreadsheet would run as a formula defused.

/** The byte-order mark every CSV download starts with. */
export const CSV_BOM = '\uFEFF';

export type CsvValue = string | number | boolean | null | undefined;

const PLAIN_NUMBER = /^[-+]?\d+(\.\d+)?$/;

/**
 * csvCell renders one value: empty for null, numbers and booleans as they are, text quoted when it
 * holds a comma, quote or line break, and text starting with = + - @ or a tab or carriage return
 * (a formula to a spreadsheet: `=HYPERLINK(…)`) prefixed with an apostrophe, unless it is a plain number.
 */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** csvDocument renders a header (column names with their units, e.g. `cost_cents`) and rows. */
export function csvDocument(header: readonly string[], rows: Iterable<readonly CsvValue[]>): string {
  const lines = [header.map(csvCell).join(',')];
  for (const row of rows) lines.push(row.map(csvCell).join(','));
  return `${CSV_BOM}${lines.join('\r\n')}\r\n`;
}

/** parseCsv reads a document written by csvDocument back into rows (for tests and round trips). */
export function parseCsv(text: string): string[][] {
  const body = text.startsWith(CSV_BOM) ? text.slice(1) : text;
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && body[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}
