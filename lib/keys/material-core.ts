import { randomBytes, randomInt } from 'node:crypto';

/** Random strings over an alphabet without modulo bias (node:crypto randomInt is uniform). */
export function randomString(length: number, alphabet: string): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
export const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';
const SYMBOLS = '!#$%&()*+,-./:;<=>?@[]^_{|}~';
const AMBIGUOUS = new Set('Il1O0o|');
/** Letters and digits a reader cannot confuse. */
export const UNAMBIGUOUS = [...(UPPER + LOWER + DIGITS)].filter((c) => !AMBIGUOUS.has(c)).join('');

interface PasswordRules {
  readonly length: number;
  readonly lowercase: boolean;
  readonly uppercase: boolean;
  readonly digits: boolean;
  readonly symbols: boolean;
  readonly exclude_ambiguous: boolean;
}

/** A password with at least one character of every enabled class, in random positions. */
export function generatePassword(rules: PasswordRules): string {
  const strip = (s: string) => (rules.exclude_ambiguous ? [...s].filter((c) => !AMBIGUOUS.has(c)).join('') : s);
  const classes = [rules.lowercase && LOWER, rules.uppercase && UPPER, rules.digits && DIGITS, rules.symbols && SYMBOLS]
    .filter((c): c is string => Boolean(c))
    .map(strip);
  const all = classes.join('');
  const chars = [...classes.map((c) => randomString(1, c)), ...[...randomString(rules.length - classes.length, all)]];
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.join('');
}

export const randomBytesOf = (n: number) => randomBytes(n);
