import { randomInt } from 'node:crypto';
import { wordlist } from '@scure/bip39/wordlists/english.js';

/**
 * Password and passphrase generation with node:crypto's CSPRNG (randomInt draws without
 * modulo bias). Character mode draws every position uniformly from the allowed alphabet and
 * redraws the whole password until it contains each required class, so the result is uniform
 * over the passwords that satisfy the policy; its entropy is log2 of their number, counted
 * exactly by inclusion–exclusion over the classes. Word mode draws words uniformly from the
 * BIP-39 English list (2048 words, 11 bits each).
 */
export const CLASSES = {
  lowercase: 'abcdefghijklmnopqrstuvwxyz',
  uppercase: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  digits: '0123456789',
  symbols: '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
} as const;
export type ClassName = keyof typeof CLASSES;
export const AMBIGUOUS = 'Il1O0o|`\'"';

interface CharPolicy {
  readonly length: number;
  readonly classes: readonly ClassName[];
  readonly exclude: string;
  readonly excludeAmbiguous: boolean;
  readonly requireEachClass: boolean;
}

interface WordPolicy {
  readonly words: number;
  readonly separator: string;
  readonly capitalize: boolean;
  readonly addNumber: boolean;
}

export interface Generated {
  readonly password: string;
  readonly entropy_bits: number;
  readonly strength: 'weak' | 'fair' | 'strong' | 'very-strong';
}

const strengthOf = (bits: number): Generated['strength'] => (bits < 40 ? 'weak' : bits < 64 ? 'fair' : bits < 100 ? 'strong' : 'very-strong');

/** The alphabet of each requested class after exclusions; a class left empty is an error for the caller. */
export function alphabets(policy: CharPolicy): Record<ClassName, string> {
  const drop = new Set([...policy.exclude, ...(policy.excludeAmbiguous ? AMBIGUOUS : '')]);
  const out = {} as Record<ClassName, string>;
  for (const c of policy.classes) out[c] = [...CLASSES[c]].filter((ch) => !drop.has(ch)).join('');
  return out;
}

/** log2 of the number of length-n strings over the union that use every required class. */
export function charEntropy(sizes: readonly number[], length: number, requireEach: boolean): number {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (!requireEach) return length * Math.log2(total);
  let count = 0n;
  const n = sizes.length;
  for (let mask = 0; mask < 1 << n; mask++) {
    let missing = 0;
    let bits = 0;
    for (let i = 0; i < n; i++) if (mask & (1 << i)) (missing += sizes[i]!), bits++;
    const term = BigInt(total - missing) ** BigInt(length);
    count += bits % 2 ? -term : term;
  }
  if (count <= 0n) return 0;
  // log2 of a big integer: its bit length plus the fraction of its top 52 bits
  const bitLength = count.toString(2).length;
  const shift = Math.max(0, bitLength - 52);
  return shift + Math.log2(Number(count >> BigInt(shift)));
}

export function generateChars(policy: CharPolicy): Generated {
  const sets = Object.values(alphabets(policy));
  const all = sets.join('');
  for (;;) {
    const password = Array.from({ length: policy.length }, () => all[randomInt(all.length)]).join('');
    if (policy.requireEachClass && !sets.every((s) => [...password].some((ch) => s.includes(ch)))) continue;
    const bits = charEntropy(
      sets.map((s) => s.length),
      policy.length,
      policy.requireEachClass,
    );
    return { password, entropy_bits: Math.round(bits * 10) / 10, strength: strengthOf(bits) };
  }
}

export function generateWords(policy: WordPolicy): Generated {
  const words = Array.from({ length: policy.words }, () => {
    const w = wordlist[randomInt(wordlist.length)]!;
    return policy.capitalize ? w[0]!.toUpperCase() + w.slice(1) : w;
  });
  if (policy.addNumber) words.push(String(randomInt(100)));
  const bits = policy.words * Math.log2(wordlist.length) + (policy.addNumber ? Math.log2(100) : 0);
  return { password: words.join(policy.separator), entropy_bits: Math.round(bits * 10) / 10, strength: strengthOf(bits) };
}
