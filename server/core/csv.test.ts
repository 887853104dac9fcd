import { describe, expect, it } from 'vitest';
import { CSV_BOM, csvCell, csvDocument, parseCsv } from './csv';

describe('csv', () => {
  it('defuses text a spreadsheet would run as a formula, and leaves numbers alone', () => {
    expect(csvCell('=HYPERLINK("http://evil.example","x")')).toBe(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(csvCell('+49 30 1234')).toBe("'+49 30 1234");
    expect(csvCell('-rf')).toBe("'-rf");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\tcmd')).toBe("'\tcmd");
    expect(csvCell('-3.50')).toBe('-3.50');
    expect(csvCell(-12)).toBe('-12');
    expect(csvCell('Müller, Jörg')).toBe('"Müller, Jörg"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(true)).toBe('true');
  });

  it('writes UTF-8 with a byte-order mark and CRLF, and reads its own output back', () => {
    const names = ['=1+2', '-cmd', '@home', 'Straße "Süd", 3\nHof', 'plain'];
    const doc = csvDocument(['name', 'cost_cents'], names.map((n, i) => [n, i * 100]));
    expect(doc.startsWith(CSV_BOM)).toBe(true);
    expect(doc.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = parseCsv(doc);
    expect(header).toEqual(['name', 'cost_cents']);
    expect(rows.map((r) => r[0])).toEqual(["'=1+2", "'-cmd", "'@home", 'Straße "Süd", 3\nHof', 'plain']);
    expect(rows.map((r) => Number(r[1]))).toEqual([0, 100, 200, 300, 400]);
  });
});
