import * as z from 'zod/v4';
import { badRequest, defineHandler, ok } from '../../lib/http/index.js';
import { alphabets, CLASSES, generateChars, generateWords, type ClassName } from '../../lib/passwords/generator.js';

const ClassList = z
  .array(z.enum(Object.keys(CLASSES) as [ClassName, ...ClassName[]]))
  .min(1)
  .max(4);

export const GenerateBody = z.discriminatedUnion('mode', [
  z.strictObject({
    mode: z.literal('characters'),
    length: z.number().int().min(4).max(256).default(20),
    classes: ClassList.default(['lowercase', 'uppercase', 'digits', 'symbols']).transform((c) => [...new Set(c)]),
    exclude: z.string().max(128).default(''),
    exclude_ambiguous: z.boolean().default(false),
    require_each_class: z.boolean().default(true),
    count: z.number().int().min(1).max(20).default(1),
  }),
  z.strictObject({
    mode: z.literal('words'),
    words: z.number().int().min(3).max(24).default(6),
    separator: z.string().max(3).default('-'),
    capitalize: z.boolean().default(false),
    add_number: z.boolean().default(false),
    count: z.number().int().min(1).max(20).default(1),
  }),
]);

/** The answer: the generated values (never stored) with their entropy and strength. */
export const Generated = z.strictObject({
  mode: z.enum(['characters', 'words']),
  passwords: z.array(
    z.strictObject({
      password: z.string().describe('The generated password or passphrase: in this answer only.'),
      entropy_bits: z.number().min(0).describe('Its entropy under the policy, in bits (one decimal).'),
      strength: z.enum(['weak', 'fair', 'strong', 'very-strong']).describe('Below 40 bits weak, below 64 fair, below 100 strong.'),
    }),
  ),
});

/**
 * POST /api/v1/passwords/generate: passwords (characters mode, the default) or passphrases
 * (words mode) from a policy, with their entropy in bits and a strength label. Nothing is
 * stored; the values are in this response only.
 */
export const generate = defineHandler({
  summary: 'Generate passwords or passphrases',
  description:
    'Passwords (`mode: characters`, the default) or passphrases (`mode: words`) from a policy, up to 20 at once, with their entropy and a strength label. Nothing is stored.',
  responses: { 200: Generated },
  errors: ['bad_request'],
  body: z.preprocess(
    (b) => (b === undefined ? {} : b),
    z
      .preprocess((b) => (typeof b === 'object' && b !== null && !('mode' in b) ? { ...b, mode: 'characters' } : b), GenerateBody)
      .meta({ 'x-default-discriminator': { property: 'mode', value: 'characters' } }),
  ),
  async handler({ body }) {
    if (body.mode === 'words') {
      const policy = { words: body.words, separator: body.separator, capitalize: body.capitalize, addNumber: body.add_number };
      return ok({ mode: 'words', passwords: Array.from({ length: body.count }, () => generateWords(policy)) });
    }
    const policy = {
      length: body.length,
      classes: body.classes,
      exclude: body.exclude,
      excludeAmbiguous: body.exclude_ambiguous,
      requireEachClass: body.require_each_class,
    };
    const empty = Object.entries(alphabets(policy))
      .filter(([, a]) => a.length === 0)
      .map(([c]) => c);
    if (empty.length > 0)
      throw badRequest(
        'every character of a class is excluded',
        empty.map((c) => ({ path: 'body.exclude', message: `no ${c} character left` })),
      );
    if (policy.requireEachClass && policy.classes.length > policy.length)
      throw badRequest('the length is shorter than the number of required classes', [
        { path: 'body.length', message: `at least ${policy.classes.length}` },
      ]);
    return ok({ mode: 'characters', passwords: Array.from({ length: body.count }, () => generateChars(policy)) });
  },
});
