import * as z from 'zod/v4';
import { PageQuery } from '../../lib/schemas.js';
import { VARIABLE_NAME_RE } from '../../lib/variables/store.js';
import { MAX_NAMES, MAX_TEMPLATE_BYTES } from '../../lib/variables/resolve.js';

const VariableName = z.string().regex(VARIABLE_NAME_RE, '1–128 letters, digits and "_", not starting with a digit');
export const VariableParams = z.strictObject({ name: VariableName });

export const PutVariableBody = z.strictObject({
  credential_id: z.uuid(),
  field: z.string().min(1).max(256),
  description: z.string().max(1024).optional(),
});

export const ListVariablesQuery = PageQuery;

/** Either `names` or `template` (`${{ vars.NAME }}` references). */
export const ResolveBody = z
  .strictObject({
    names: z.array(VariableName).min(1).max(MAX_NAMES).optional(),
    template: z
      .string()
      .min(1)
      .refine((t) => Buffer.byteLength(t, 'utf8') <= MAX_TEMPLATE_BYTES, { message: `at most ${MAX_TEMPLATE_BYTES} bytes` })
      .optional(),
  })
  .refine((b) => (b.names === undefined) !== (b.template === undefined), { message: 'send either names or template' });
