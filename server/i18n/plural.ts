// Counted words in messages: "{count, plural, one {# session} other {# sessions}}", the ICU
// MessageFormat shape (a subset: `plural` with `=N` and the CLDR categories; `#` is the count).
// The category comes from Intl.PluralRules of the locale, so German and English each get theirs.
// Client-safe: it runs in the browser through interpolate().

const rulesByLocale = new Map<string, Intl.PluralRules>();

function pluralRules(locale: string): Intl.PluralRules {
  let rules = rulesByLocale.get(locale);
  if (!rules) rulesByLocale.set(locale, (rules = new Intl.PluralRules(locale)));
  return rules;
}

/** The index of the brace closing the one at `open`, or -1. */
function closingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

/** The branches of a plural block's body: `one {…} other {…}` → { one: '…', other: '…' }; null if malformed. */
export function pluralBranches(body: string): Record<string, string> | null {
  const branches: Record<string, string> = {};
  let rest = body.trim();
  while (rest) {
    const selector = /^(=\d+|zero|one|two|few|many|other)\s*\{/.exec(rest);
    if (!selector) return null;
    const open = selector[0].length - 1;
    const close = closingBrace(rest, open);
    if (close < 0) return null;
    branches[selector[1]!] = rest.slice(open + 1, close);
    rest = rest.slice(close + 1).trim();
  }
  return 'other' in branches ? branches : null;
}

const PLURAL_START = /\{(\w+),\s*plural,/g;

/**
 * expandPlurals replaces each plural block by the branch its count selects (`=N` first, then the
 * locale's category, else `other`), with `#` as the formatted count; a block whose count is not given
 * is left as it is.
 */
export function expandPlurals(message: string, params: Record<string, string | number>, locale: string, formatCount: (n: number) => string): string {
  if (!message.includes(', plural,')) return message;
  let out = '';
  let from = 0;
  PLURAL_START.lastIndex = 0;
  for (let match = PLURAL_START.exec(message); match; match = PLURAL_START.exec(message)) {
    const close = closingBrace(message, match.index);
    const branches = close < 0 ? null : pluralBranches(message.slice(match.index + match[0].length, close));
    const value = params[match[1]!];
    const count = typeof value === 'number' ? value : Number(value);
    if (!branches || value === undefined) continue;
    // A count given as text that is no number (already formatted) takes the general form.
    const branch = Number.isNaN(count) ? branches.other! : (branches[`=${count}`] ?? branches[pluralRules(locale).select(count)] ?? branches.other!);
    out += message.slice(from, match.index) + branch.replace(/#/g, typeof value === 'number' ? formatCount(count) : value);
    from = close + 1;
    PLURAL_START.lastIndex = from;
  }
  return out + message.slice(from);
}
