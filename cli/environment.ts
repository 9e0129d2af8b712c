import { parse as parseDotenv } from 'dotenv';
import { parse as parseYaml } from 'yaml';
import { CliError } from './api.js';
import { envName } from './output.js';

/**
 * What `run` and `export` put in an environment, and what `secrets import` reads: pure
 * functions over values already fetched or read (the commands in cli/main.ts do the I/O).
 */
export interface Injected {
  /** The secret's name (what collisions are reported by). */
  readonly name: string;
  readonly data: Readonly<Record<string, string>>;
  /** `-s NAME=ENV`: the variable name chosen by the user. */
  readonly as?: string;
}

/**
 * The environment of the secrets: a one-field `value` secret as `NAME`, other secrets as
 * `NAME_FIELD` each; variables under their own names. Two sources giving the same variable
 * (`db-password` and `db.password` are both `DB_PASSWORD`) are refused by name, never
 * settled by order (the last one silently winning).
 */
export function buildEnvironment(secrets: readonly Injected[], variables: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  const from = new Map<string, string>();
  const add = (key: string, value: string, source: string) => {
    const before = from.get(key);
    if (before !== undefined && before !== source)
      throw new CliError(`${key} would come from both ${before} and ${source}: choose a name for one of them with -s NAME=OTHER_VAR`);
    from.set(key, source);
    env[key] = value;
  };
  for (const s of secrets) {
    const base = s.as ?? envName(s.name);
    const fields = Object.keys(s.data);
    if (fields.length === 1 && fields[0] === 'value') add(base, s.data.value!, `secret "${s.name}"`);
    else for (const f of fields) add(`${base}_${envName(f)}`, s.data[f]!, `secret "${s.name}" (field ${f})`);
  }
  for (const [k, v] of Object.entries(variables)) add(k, v, `variable "${k}"`);
  return env;
}

export const IMPORT_FORMATS = ['dotenv', 'json', 'yaml'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export const importFormatOf = (file: string): ImportFormat => (/\.json$/i.test(file) ? 'json' : /\.ya?ml$/i.test(file) ? 'yaml' : 'dotenv');

const SECRET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * The secrets of an import file, by name: dotenv `KEY=value` lines are one-field secrets
 * (`{value}`); a JSON or YAML object maps each name to a string (one field) or an object of
 * strings (its fields). Every problem is found before anything is written, each by name.
 */
export function parseImport(text: string, format: ImportFormat): Record<string, Record<string, string>> {
  let doc: unknown;
  if (format === 'dotenv') doc = parseDotenv(text);
  else {
    try {
      doc = format === 'json' ? JSON.parse(text) : parseYaml(text);
    } catch (e) {
      throw new CliError(`the file is not valid ${format.toUpperCase()}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new CliError(`the ${format} file must hold an object of NAME: value (or NAME: {field: value}) entries`);
  const out: Record<string, Record<string, string>> = {};
  const problems: string[] = [];
  const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  for (const [name, v] of Object.entries(doc)) {
    if (!SECRET_NAME.test(name)) problems.push(`"${name}" is not a secret name (letters, digits, ".", "_", "-", starting with a letter or digit)`);
    else if (scalar(v)) out[name] = { value: String(v) };
    else if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0 && Object.values(v).every(scalar))
      out[name] = Object.fromEntries(Object.entries(v).map(([f, fv]) => [f, String(fv)]));
    else problems.push(`"${name}" must be a string or an object of strings`);
  }
  if (problems.length > 0) throw new CliError(`nothing imported: ${problems.join('; ')}`);
  if (Object.keys(out).length === 0) throw new CliError('nothing to import: the file has no entries');
  return out;
}
