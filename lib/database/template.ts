/**
 * Statement templates of database roles (Vault's database secrets engine is the model):
 * `{{name}}`, `{{password}}` and `{{expiration}}` are replaced by values the service
 * generates, each escaped with the driver's own escaping (pg: escapeIdentifier /
 * escapeLiteral; mysql2: escapeId / escape) — never by string pasting.
 *
 * How a placeholder is quoted:
 * - bare: `{{name}}` becomes an identifier (`"v_x"` / `` `v_x` ``), `{{password}}` and
 *   `{{expiration}}` become string literals (`'…'`);
 * - quoted Vault-style, the quotes are replaced along with the placeholder:
 *   PostgreSQL `"{{name}}"` → identifier, `'{{x}}'` → literal;
 *   MySQL/MariaDB `` `{{name}}` `` → identifier, `'{{x}}'` or `"{{x}}"` → literal
 *   (so `'{{name}}'@'%'` is the account `'v_x'@'%'`).
 * A placeholder anywhere else inside a string, quoted identifier, dollar-quoted body or
 * comment (`'%{{name}}%'`, `-- {{password}}`) is refused, as is an unknown placeholder:
 * the template is then misconfigured and nothing runs.
 */
export type Dialect = 'postgresql' | 'mysql';

const PLACEHOLDERS = ['name', 'password', 'expiration'] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];
/** The values a kind of statement may use; a placeholder without a value is refused. */
export type TemplateValues = Readonly<Partial<Record<Placeholder, string>>>;

export interface Escaper {
  identifier(value: string): string;
  literal(value: string): string;
}

export class TemplateError extends Error {
  override name = 'TemplateError';
}

type Kind = 'identifier' | 'literal';
interface Slot {
  readonly placeholder: Placeholder;
  readonly kind: Kind;
}

const TOKEN = /(["'`]?)\{\{\s*([^{}]*?)\s*\}\}(["'`]?)/g;
const MARK = '\u0000';

function quotedKind(dialect: Dialect | undefined, quote: string, placeholder: string): Kind {
  if (dialect === 'postgresql') {
    if (quote === '"') return 'identifier';
    if (quote === "'") return 'literal';
    throw new TemplateError(`backticks do not quote in PostgreSQL: write {{${placeholder}}} bare`);
  }
  if (quote === '`') return 'identifier';
  return 'literal';
}

/** Replaces each placeholder (with its quotes) by a marker; returns the marked text and the slots. */
function mark(template: string, dialect: Dialect | undefined): { text: string; slots: Slot[] } {
  if (template.includes(MARK)) throw new TemplateError('statements may not contain NUL characters');
  const slots: Slot[] = [];
  const text = template.replace(TOKEN, (_m, open: string, name: string, close: string) => {
    if (!(PLACEHOLDERS as readonly string[]).includes(name)) {
      throw new TemplateError(`unknown placeholder {{${name.slice(0, 40)}}}: use {{name}}, {{password}} or {{expiration}}`);
    }
    const placeholder = name as Placeholder;
    let kind: Kind;
    if (open === '' && close === '') kind = placeholder === 'name' ? 'identifier' : 'literal';
    else if (open !== '' && open === close) kind = quotedKind(dialect, open, placeholder);
    else throw new TemplateError(`unbalanced quotes around {{${placeholder}}}: quote the whole placeholder or none of it`);
    slots.push({ placeholder, kind });
    return `${MARK}${slots.length - 1}${MARK}`;
  });
  if (/\{\{|\}\}/.test(text)) throw new TemplateError('malformed placeholder: use {{name}}, {{password}} or {{expiration}}');
  return { text, slots };
}

const inside = (what: string) =>
  new TemplateError(`a placeholder inside ${what}: placeholders are quoted by the service, write them bare or wholly quoted`);

/**
 * Walks the marked statement the way the server's lexer would (strings, quoted identifiers,
 * dollar quotes, comments) and refuses a marker anywhere but in plain SQL.
 */
function checkContexts(text: string, dialect: Dialect): void {
  const n = text.length;
  let i = 0;
  const scanQuoted = (quote: string, backslash: boolean, what: string) => {
    i++;
    while (i < n) {
      const c = text[i]!;
      if (c === MARK) throw inside(what);
      if (backslash && c === '\\') {
        i += 2;
        continue;
      }
      if (c === quote) {
        if (text[i + 1] === quote) {
          i += 2;
          continue;
        }
        i++;
        return;
      }
      i++;
    }
    throw new TemplateError(`unterminated ${what}`);
  };
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === MARK) {
      const end = text.indexOf(MARK, i + 1);
      i = end + 1;
      continue;
    }
    if (c === "'") {
      const eString = dialect === 'postgresql' && /[eE]/.test(text[i - 1] ?? '') && !/[\w$]/.test(text[i - 2] ?? '');
      scanQuoted("'", dialect === 'mysql' || eString, 'a string literal');
      continue;
    }
    if (c === '"') {
      scanQuoted('"', dialect === 'mysql', dialect === 'mysql' ? 'a string literal' : 'a quoted identifier');
      continue;
    }
    if (c === '`' && dialect === 'mysql') {
      scanQuoted('`', false, 'a quoted identifier');
      continue;
    }
    if ((c === '-' && next === '-') || (c === '#' && dialect === 'mysql')) {
      const end = text.indexOf('\n', i);
      const body = text.slice(i, end < 0 ? n : end);
      if (body.includes(MARK)) throw inside('a comment');
      i = end < 0 ? n : end + 1;
      continue;
    }
    if (c === '/' && next === '*') {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (text[i] === MARK) throw inside('a comment');
        if (dialect === 'postgresql' && text[i] === '/' && text[i + 1] === '*') {
          depth++;
          i += 2;
        } else if (text[i] === '*' && text[i + 1] === '/') {
          depth--;
          i += 2;
        } else i++;
      }
      if (depth > 0) throw new TemplateError('unterminated comment');
      continue;
    }
    if (c === '$' && dialect === 'postgresql' && !/[\w$]/.test(text[i - 1] ?? '')) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i));
      if (tag) {
        const end = text.indexOf(tag[0], i + tag[0].length);
        if (end < 0) throw new TemplateError('unterminated dollar-quoted string');
        if (text.slice(i, end).includes(MARK)) throw inside('a dollar-quoted string');
        i = end + tag[0].length;
        continue;
      }
    }
    i++;
  }
}

/**
 * Validates a template. Without a dialect (the role record does not know its engine),
 * only the placeholders and their quoting are checked; with one, the quoting contexts too.
 */
export function checkTemplate(template: string, dialect?: Dialect): void {
  const { text } = mark(template, dialect);
  if (dialect) checkContexts(text, dialect);
}

/** One statement with its placeholders replaced by escaped values. Throws TemplateError. */
export function renderStatement(template: string, dialect: Dialect, values: TemplateValues, esc: Escaper): string {
  const { text, slots } = mark(template, dialect);
  checkContexts(text, dialect);
  return text.replace(/\u0000(\d+)\u0000/g, (_m, index: string) => {
    const slot = slots[Number(index)]!;
    const value = values[slot.placeholder];
    if (value === undefined) throw new TemplateError(`{{${slot.placeholder}}} has no value in these statements`);
    return slot.kind === 'identifier' ? esc.identifier(value) : esc.literal(value);
  });
}
