import { describe, expect, it } from 'vitest';
import { checkReport, doiLink, normaliseDatasetRef, normaliseDoi, parseList, reportOwed } from './reports';

describe('end-of-allocation reports', () => {
  it('reads a DOI as people paste it and refuses what is none', () => {
    expect(normaliseDoi('10.1038/s41586-021-03819-2')).toBe('10.1038/s41586-021-03819-2');
    expect(normaliseDoi('doi: 10.1145/3458817.3476209')).toBe('10.1145/3458817.3476209');
    expect(normaliseDoi('https://doi.org/10.5281/ZENODO.1234567')).toBe('10.5281/zenodo.1234567');
    expect(normaliseDoi('http://dx.doi.org/10.1000/xyz%2F123')).toBe('10.1000/xyz/123');
    expect(normaliseDoi('10.1000/abc.')).toBe('10.1000/abc');
    for (const bad of ['', '10.12/abc', '11.1234/abc', '10.1234', '10.1234/', 'doi.org/abc', 'https://example.org/paper', '10.1234/a b']) expect(normaliseDoi(bad)).toBeNull();
  });

  it('names a data set by a DOI or an https address', () => {
    expect(normaliseDatasetRef('10.5281/zenodo.42')).toBe('doi:10.5281/zenodo.42');
    expect(normaliseDatasetRef('https://huggingface.co/datasets/lab/corpus')).toBe('https://huggingface.co/datasets/lab/corpus');
    expect(normaliseDatasetRef('http://insecure.example.org/x')).toBeNull();
    expect(normaliseDatasetRef('ftp://x.org/y')).toBeNull();
    expect(normaliseDatasetRef('https://localhost/x')).toBeNull();
  });

  it('splits a pasted list on lines and spaces, keeping order and dropping repeats', () => {
    expect(parseList(' 10.1/a \n\n10.1234/b 10.1234/b\r\nhttps://x.org/y ')).toEqual(['10.1/a', '10.1234/b', 'https://x.org/y']);
    expect(parseList('   ')).toEqual([]);
  });

  it('checks a report field by field, normalising and deduplicating its entries', () => {
    const ok = checkReport({ summary: 'We trained a 7B model for protein folding.', publications: ['https://doi.org/10.1234/ABC', '10.1234/abc'], datasets: ['10.5281/zenodo.1', 'https://data.example.org/set'] });
    expect(ok).toEqual({ problem: null, publications: ['10.1234/abc'], datasets: ['doi:10.5281/zenodo.1', 'https://data.example.org/set'] });
    expect(checkReport({ summary: 'too short', publications: [], datasets: [] }).problem).toMatchObject({ field: 'summary', key: 'report.summaryShort' });
    expect(checkReport({ summary: 'A long enough summary of results.', publications: ['not-a-doi'], datasets: [] }).problem).toMatchObject({ field: 'publications', key: 'report.badDoi', params: { value: 'not-a-doi' } });
    expect(checkReport({ summary: 'A long enough summary of results.', publications: [], datasets: ['ftp://x.org/y'] }).problem).toMatchObject({ field: 'datasets', key: 'report.badDataset' });
    expect(checkReport({ summary: 'A long enough summary of results.', publications: Array.from({ length: 101 }, (_, i) => `10.1234/${i}`), datasets: [] }).problem).toMatchObject({ field: 'publications', key: 'report.tooMany' });
  });

  it('is owed by an approved new or renewed request from the day its period ends (exclusive end), never by a top-up', () => {
    const app = { status: 'approved', kind: 'new', periodEnd: '2026-12-01' };
    expect(reportOwed(app, '2026-11-30')).toBe(false);
    expect(reportOwed(app, '2026-12-01')).toBe(true);
    expect(reportOwed({ ...app, kind: 'renewal' }, '2027-01-01')).toBe(true);
    expect(reportOwed({ ...app, kind: 'top_up' }, '2027-01-01')).toBe(false);
    expect(reportOwed({ ...app, status: 'rejected' }, '2027-01-01')).toBe(false);
  });

  it('links a DOI to its resolver, the suffix escaped', () => {
    expect(doiLink('10.1234/a<b>/c')).toBe('https://doi.org/10.1234/a%3Cb%3E/c');
  });
});
