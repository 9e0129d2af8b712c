/**
 * LDIF (RFC 2849): the writer of GET /ldap/export and the parser of POST /ldap/import.
 *
 * Writing: `dn:` and every `attr: value` line as SAFE-STRING when the value is one (RFC 2849
 * §2: no NUL, LF, CR; not starting with space, `:` or `<`; ASCII only; no trailing space),
 * else `attr:: <base64>`; lines longer than 76 characters are folded (a continuation starts
 * with one space). Parsing: `version: 1`, comments, folded lines, `::` base64 values, content
 * records and change records (`changetype: add | delete | modify` with `add:`/`replace:`/
 * `delete:` groups ended by `-`). `:<` URL values are refused (the service fetches no files).
 */
export type LdifValue = string | Buffer;

export interface LdifEntry {
  readonly dn: string;
  readonly attributes: Readonly<Record<string, readonly LdifValue[]>>;
}

export type LdifRecord =
  | { readonly line: number; readonly dn: string; readonly changetype: 'add'; readonly attributes: Record<string, LdifValue[]> }
  | { readonly line: number; readonly dn: string; readonly changetype: 'delete' }
  | {
      readonly line: number;
      readonly dn: string;
      readonly changetype: 'modify';
      readonly changes: { operation: 'add' | 'replace' | 'delete'; attribute: string; values: LdifValue[] }[];
    };

export class LdifError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`LDIF line ${line}: ${message}`);
  }
}

const SAFE = /^(?:[\x01-\x09\x0B\x0C\x0E-\x1F\x21-\x39\x3B\x3D-\x7F][\x01-\x09\x0B\x0C\x0E-\x7F]*)?$/;

/** Whether a value may be written as a SAFE-STRING (otherwise base64). */
function isSafeString(value: LdifValue): boolean {
  if (Buffer.isBuffer(value)) return false;
  return SAFE.test(value) && !value.endsWith(' ');
}

function fold(line: string): string {
  if (line.length <= 76) return line;
  const parts = [line.slice(0, 76)];
  for (let i = 76; i < line.length; i += 75) parts.push(` ${line.slice(i, i + 75)}`);
  return parts.join('\n');
}

const attrLine = (name: string, value: LdifValue) =>
  fold(
    isSafeString(value)
      ? `${name}: ${value as string}`
      : `${name}:: ${(Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8')).toString('base64')}`,
  );

export function writeLdif(entries: readonly LdifEntry[]): string {
  const out = ['version: 1', ''];
  for (const e of entries) {
    out.push(attrLine('dn', e.dn));
    for (const [name, values] of Object.entries(e.attributes)) for (const v of values) out.push(attrLine(name, v));
    out.push('');
  }
  return out.join('\n');
}

const ATTR = /^([A-Za-z][A-Za-z0-9-]*(?:;[A-Za-z0-9-]+)*|\d+(?:\.\d+)+)$/;

interface Line {
  readonly n: number;
  readonly name: string;
  readonly value: LdifValue;
}

/** Unfolds the text into records of attribute lines (comments dropped). */
function records(text: string): Line[][] {
  const raw = text.replace(/\r\n/g, '\n').split('\n');
  const logical: { n: number; text: string }[] = [];
  raw.forEach((l, i) => {
    if (l.startsWith(' ') && logical.length > 0 && logical[logical.length - 1]!.text !== '') {
      logical[logical.length - 1]!.text += l.slice(1);
    } else logical.push({ n: i + 1, text: l });
  });
  const out: Line[][] = [];
  let current: Line[] = [];
  for (const { n, text: l } of logical) {
    if (l === '') {
      if (current.length > 0) out.push(current);
      current = [];
      continue;
    }
    if (l.startsWith('#')) continue;
    if (l === '-') {
      current.push({ n, name: '-', value: '' });
      continue;
    }
    const m = /^([^:]+):(:|<)?\s*(.*)$/.exec(l);
    if (!m) throw new LdifError(n, 'expected "attribute: value"');
    const name = m[1]!;
    if (!ATTR.test(name)) throw new LdifError(n, `"${name}" is not an attribute description`);
    if (m[2] === '<') throw new LdifError(n, 'URL values (":<") are not accepted: inline the value (base64 with "::")');
    let value: LdifValue = m[3]!;
    if (m[2] === ':') {
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw new LdifError(n, 'invalid base64 value');
      const bytes = Buffer.from(value, 'base64');
      const utf8 = bytes.toString('utf8');
      value = Buffer.from(utf8, 'utf8').equals(bytes) ? utf8 : bytes;
    }
    current.push({ n, name, value });
  }
  if (current.length > 0) out.push(current);
  return out;
}

const text = (v: LdifValue) => (Buffer.isBuffer(v) ? v.toString('utf8') : v);

export function parseLdif(input: string, maxRecords: number): LdifRecord[] {
  const recs = records(input);
  if (recs[0]?.[0]?.name.toLowerCase() === 'version') {
    if (text(recs[0][0].value) !== '1') throw new LdifError(recs[0][0].n, 'only "version: 1" is supported');
    recs[0] = recs[0].slice(1);
    if (recs[0].length === 0) recs.shift();
  }
  if (recs.length > maxRecords) throw new LdifError(recs[maxRecords]![0]!.n, `more than ${maxRecords} records: split the import`);
  return recs.map((lines): LdifRecord => {
    const [first, ...rest] = lines;
    if (!first || first.name.toLowerCase() !== 'dn') throw new LdifError(first?.n ?? 0, 'a record starts with "dn:"');
    const dn = text(first.value);
    let body = rest;
    let changetype = 'add';
    if (body[0]?.name.toLowerCase() === 'changetype') {
      changetype = text(body[0].value).toLowerCase();
      body = body.slice(1);
    }
    if (changetype === 'add') {
      const attributes: Record<string, LdifValue[]> = {};
      for (const l of body) {
        if (l.name === '-') throw new LdifError(l.n, '"-" belongs to modify records');
        (attributes[l.name] ??= []).push(l.value);
      }
      if (Object.keys(attributes).length === 0) throw new LdifError(first.n, `entry ${dn} has no attributes`);
      return { line: first.n, dn, changetype: 'add', attributes };
    }
    if (changetype === 'delete') {
      if (body.length > 0) throw new LdifError(body[0]!.n, 'a delete record has no attributes');
      return { line: first.n, dn, changetype: 'delete' };
    }
    if (changetype === 'modify') {
      const changes: { operation: 'add' | 'replace' | 'delete'; attribute: string; values: LdifValue[] }[] = [];
      let open: (typeof changes)[number] | undefined;
      for (const l of body) {
        if (l.name === '-') {
          if (!open) throw new LdifError(l.n, '"-" without a modification');
          open = undefined;
        } else if (!open) {
          const op = l.name.toLowerCase();
          if (op !== 'add' && op !== 'replace' && op !== 'delete') throw new LdifError(l.n, 'expected "add:", "replace:" or "delete:"');
          open = { operation: op, attribute: text(l.value), values: [] };
          changes.push(open);
        } else {
          if (l.name.toLowerCase() !== open.attribute.toLowerCase()) throw new LdifError(l.n, `expected a value of ${open.attribute} or "-"`);
          open.values.push(l.value);
        }
      }
      if (open) throw new LdifError(rest[rest.length - 1]!.n, 'a modification ends with "-"');
      if (changes.length === 0) throw new LdifError(first.n, 'a modify record needs at least one modification');
      return { line: first.n, dn, changetype: 'modify', changes };
    }
    throw new LdifError(first.n, `changetype "${changetype}" is not supported (add, delete, modify)`);
  });
}
