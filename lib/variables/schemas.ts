import * as z from 'zod/v4';
import { exactlyOneOf, ListPage, PageQuery, Timestamp } from '../schemas.js';
import { VARIABLE_NAME_RE } from './store.js';
import { MAX_NAMES, MAX_TEMPLATE_BYTES } from './resolve.js';

const VariableName = z.string().regex(VARIABLE_NAME_RE, '1–128 letters, digits and "_", not starting with a digit');
export const VariableParams = z.strictObject({ name: VariableName });

export const PutVariableBody = z.strictObject({
  credential_id: z.uuid(),
  field: z.string().min(1).max(256),
  description: z.string().max(1024).optional(),
});

export const ListVariablesQuery = PageQuery;

/** Either `names` or `template` (`${{ vars.NAME }}` references). */
const ResolveBodyFields = z.strictObject({
  names: z.array(VariableName).min(1).max(MAX_NAMES).optional(),
  template: z
    .string()
    .min(1)
    .refine((t) => Buffer.byteLength(t, 'utf8') <= MAX_TEMPLATE_BYTES, { message: `at most ${MAX_TEMPLATE_BYTES} bytes` })
    .optional(),
});
export const ResolveBody = exactlyOneOf(ResolveBodyFields, ['names', 'template'], 'send either names or template');

/* Responses (lib/http/define-handler.ts `HandlerDoc`): what the variable routes answer. */

/** A variable: a name bound to one field of a credential (lib/variables/store.ts `Variable`). */
export const Variable = z.strictObject({
  name: VariableName,
  credential_id: z.uuid().describe('The bound credential.'),
  credential_type: z.string().describe('The bound credential’s type (lib/catalog.ts).'),
  field: z.string().describe('The credential field the variable resolves to.'),
  description: z.string(),
  version: z.int().min(1),
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: z.string().nullable(),
  updated_by: z.string().nullable(),
});
export const VariableAnswer = z.strictObject({ variable: Variable });
export const VariableList = ListPage('variables', Variable, { paged: true });
export const VariableDeleted = z.strictObject({ deleted: z.literal(true), variable: z.strictObject({ name: VariableName }) });
/** The values by name, or the rendered template; `variables` names those resolved. */
export const Resolved = z.union([
  z.strictObject({
    values: z.record(z.string(), z.string()).describe('Each requested variable’s value.'),
    variables: z.array(VariableName),
  }),
  z.strictObject({
    result: z.string().describe('The template with every reference replaced by its value.'),
    variables: z.array(VariableName),
  }),
]);
