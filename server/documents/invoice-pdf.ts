// The invoice as a PDF (A4, pdfkit's built-in Helvetica), laid out from the same content as the page.
import PDFDocument from 'pdfkit';
import type { InvoiceContent, PartyBlock } from './invoice-content';

const MARGIN = 50;
const SLATE = '#334155';
const MUTED = '#64748b';

/** pdfText keeps to what the built-in fonts can show (WinAnsi): the minus sign and narrow spaces become their plain forms. */
function pdfText(text: string): string {
  return text.replace(/\u2212/g, '-').replace(/[\u202f\u2009]/g, ' ');
}

/** renderInvoicePdf lays out an invoice's content on A4 pages and returns the PDF's bytes. */
export function renderInvoicePdf(doc: InvoiceContent, meta: { author: string; pageLabel: (page: number, pages: number) => string }): Promise<Buffer> {
  const pdf = new PDFDocument({ size: 'A4', margin: MARGIN, bufferPages: true, info: { Title: `${doc.title} ${doc.number}`, Author: meta.author } });
  const chunks: Buffer[] = [];
  pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });

  const width = pdf.page.width - 2 * MARGIN;
  const left = MARGIN;

  // Issuer and title.
  const top = pdf.y;
  party(pdf, doc.issuer, left, top, width / 2, 13);
  const issuerBottom = pdf.y;
  pdf.font('Helvetica-Bold').fontSize(20).fillColor('#0f172a').text(pdfText(doc.title), left + width / 2, top, { width: width / 2, align: 'right' });
  pdf.font('Helvetica').fontSize(11).text(pdfText(doc.number), { width: width / 2, align: 'right' });
  pdf.y = Math.max(pdf.y, issuerBottom) + 24;

  // Recipient and facts.
  const blockTop = pdf.y;
  party(pdf, doc.recipient, left, blockTop, width / 2, 11);
  const recipientBottom = pdf.y;
  let y = blockTop;
  for (const [label, value] of doc.facts) {
    pdf.font('Helvetica').fontSize(9).fillColor(MUTED).text(pdfText(label), left + width / 2, y, { width: width / 4 });
    pdf.font('Helvetica-Bold').fillColor(SLATE).text(pdfText(value), left + (3 * width) / 4, y, { width: width / 4, align: 'right' });
    y = pdf.y + 3;
  }
  pdf.y = Math.max(recipientBottom, y) + 20;

  // Lines.
  const widths = [0.05, 0.19, 0.05, 0.15, 0.13, 0.11, 0.07, 0.11, 0.14].map((share) => share * width);
  row(pdf, doc.columns.map((c) => c.label), doc.columns.map((c) => c.numeric), widths, { bold: true, color: MUTED });
  rule(pdf, left, width);
  for (const cells of doc.rows) row(pdf, cells, doc.columns.map((c) => c.numeric), widths, {});
  rule(pdf, left, width);

  // Totals.
  pdf.moveDown(0.5);
  for (const total of doc.totals) {
    const at = pdf.y;
    const bold = total.id === 'gross';
    pdf.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(10).fillColor(SLATE).text(pdfText(total.label), left + width / 2, at, { width: width / 4 });
    pdf.text(pdfText(total.value), left + (3 * width) / 4, at, { width: width / 4, align: 'right' });
    pdf.moveDown(0.2);
  }
  pdf.moveDown(1);

  // Notes.
  for (const note of doc.notes) {
    pdf.font(note.prominent ? 'Helvetica-Bold' : 'Helvetica').fontSize(note.prominent ? 10 : 8).fillColor(note.prominent ? SLATE : MUTED).text(pdfText(note.text), left, pdf.y, { width });
    pdf.moveDown(0.5);
  }

  // Credit notes.
  if (doc.creditNotes) {
    pdf.moveDown(0.5);
    pdf.font('Helvetica-Bold').fontSize(12).fillColor(SLATE).text(pdfText(doc.creditNotes.heading), left, pdf.y, { width });
    pdf.font('Helvetica').fontSize(9).fillColor(MUTED).text(pdfText(doc.creditNotes.note), { width });
    pdf.moveDown(0.5);
    const cw = [0.18, 0.17, 0.26, 0.13, 0.13, 0.13].map((share) => share * width);
    row(pdf, doc.creditNotes.columns.map((c) => c.label), doc.creditNotes.columns.map((c) => c.numeric), cw, { bold: true, color: MUTED });
    rule(pdf, left, width);
    for (const cells of doc.creditNotes.rows) row(pdf, cells, doc.creditNotes.columns.map((c) => c.numeric), cw, {});
    pdf.moveDown(0.5);
    pdf.font('Helvetica').fontSize(10).fillColor(SLATE).text(pdfText(doc.creditNotes.remaining), left, pdf.y, { width });
  }

  // Footer: the issuer's registration and bank, on every page, and page numbers.
  const range = pdf.bufferedPageRange();
  for (let i = 0; i < range.count; i++) {
    pdf.switchToPage(range.start + i);
    const footerTop = pdf.page.height - MARGIN - 52;
    // Writing below the bottom margin would add a page: lift the margin while the footer is drawn.
    const bottom = pdf.page.margins.bottom;
    pdf.page.margins.bottom = 0;
    pdf.moveTo(left, footerTop - 6).lineTo(left + width, footerTop - 6).lineWidth(0.5).strokeColor('#cbd5e1').stroke();
    const columnWidth = width / Math.max(doc.footer.length, 1);
    doc.footer.forEach((lines, c) => {
      pdf.font('Helvetica').fontSize(7).fillColor(MUTED).text(lines.map(pdfText).join('\n'), left + c * columnWidth, footerTop, { width: columnWidth - 8 });
    });
    pdf.font('Helvetica').fontSize(7).fillColor(MUTED).text(pdfText(meta.pageLabel(i + 1, range.count)), left, pdf.page.height - MARGIN + 4, { width, align: 'right' });
    pdf.page.margins.bottom = bottom;
  }
  pdf.end();
  return done;
}

function party(pdf: PDFKit.PDFDocument, block: PartyBlock, x: number, y: number, width: number, nameSize: number): void {
  pdf.font('Helvetica-Bold').fontSize(8).fillColor(MUTED).text(pdfText(block.heading.toUpperCase()), x, y, { width });
  pdf.font('Helvetica-Bold').fontSize(nameSize).fillColor('#0f172a').text(pdfText(block.name), { width });
  pdf.font('Helvetica').fontSize(9).fillColor(SLATE);
  for (const line of block.lines) pdf.text(pdfText(line), { width });
}

function row(pdf: PDFKit.PDFDocument, cells: string[], numeric: boolean[], widths: number[], style: { bold?: boolean; color?: string }): void {
  const top = pdf.y;
  let x = MARGIN;
  let bottom = top;
  pdf.font(style.bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(8.5).fillColor(style.color ?? SLATE);
  cells.forEach((cell, i) => {
    const w = widths[i] ?? 60;
    pdf.text(pdfText(cell), x, top, { width: w - 4, align: numeric[i] ? 'right' : 'left' });
    bottom = Math.max(bottom, pdf.y);
    x += w;
  });
  pdf.y = bottom + 4;
}

function rule(pdf: PDFKit.PDFDocument, x: number, width: number): void {
  pdf.moveTo(x, pdf.y).lineTo(x + width, pdf.y).lineWidth(0.5).strokeColor('#cbd5e1').stroke();
  pdf.y += 4;
}
