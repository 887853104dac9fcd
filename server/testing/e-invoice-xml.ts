// Reading e-invoices back in tests: UBL and CII parsed with xmlbuilder2's DOM, elements found by exact
// paths of direct children (a party's name is not a line's), amounts read as integer cents, and the
// Factur-X XML taken out of its PDF with pdf.js (unpdf).
import { getDocumentProxy } from 'unpdf';
import { create } from 'xmlbuilder2';

export const CBC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2';
export const CAC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2';
export const RAM = 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100';
const PREFIXES: Record<string, string> = { cbc: CBC, cac: CAC, ram: RAM };

/** parseXml is the document element of an XML text. */
export function parseXml(xml: string): Element {
  return (create(xml).node as unknown as Document).documentElement;
}

/** children are an element's direct children of one namespace and local name. */
export function children(parent: Element, ns: string, name: string): Element[] {
  return Array.from(parent.childNodes).filter((n): n is Element => n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === name);
}

/** child is the one element at a path of prefixed steps below `from` (cbc:, cac:, ram:); none or several throw. */
export function child(from: Element, ...path: string[]): Element {
  let at = from;
  for (const step of path) {
    const [prefix, name] = step.split(':') as [string, string];
    const found = children(at, PREFIXES[prefix] ?? '', name);
    if (found.length !== 1) throw new Error(`${step}: ${found.length} elements below ${at.localName}`);
    at = found[0]!;
  }
  return at;
}

/** text is the text of the one element at a path. */
export function text(from: Element, ...path: string[]): string {
  return child(from, ...path).textContent;
}

/** cents reads an amount of at most two decimals ("1234.5", "-0.05") as integer cents. */
export function cents(element: Element): number {
  const value = element.textContent.trim();
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(value);
  if (!match) throw new Error(`not an amount with at most two decimals: ${value}`);
  const abs = Number(match[2]) * 100 + Number((match[3] ?? '').padEnd(2, '0'));
  return match[1] ? -abs : abs;
}

/** embeddedFiles are the files attached to a PDF, by file name. */
export async function embeddedFiles(pdf: Uint8Array): Promise<Map<string, Uint8Array>> {
  const document = await getDocumentProxy(pdf);
  const attachments = ((await document.getAttachments()) ?? {}) as Record<string, { filename: string; content: Uint8Array }>;
  return new Map(Object.values(attachments).map((a) => [a.filename, a.content]));
}

/** partyVatId is a UBL party's VAT ID (its PartyTaxScheme of scheme VAT; a second one may hold the tax number). */
export function partyVatId(party: Element): string | undefined {
  const scheme = children(party, CAC, 'PartyTaxScheme').find((s) => text(s, 'cac:TaxScheme', 'cbc:ID') === 'VAT');
  return scheme && text(scheme, 'cbc:CompanyID');
}
