import type { CallContext, Principal } from '../auth/principal.js';
import { hasScope } from '../auth/scopes.js';
import { badRequest, HttpError } from '../core/errors.js';
import { resourceType } from '../catalog.js';
import { keys } from '../store/keys.js';
import { getMany } from '../store/pagination.js';
import { credentialFields, findCredential, type FoundCredential } from './fields.js';
import { toVariable, VARIABLE_NAME_RE, type Variable } from './store.js';

/**
 * Variable resolution, shared by POST /api/v1/variables/resolve (an API caller: its read
 * scope for each credential's type, lib/catalog.ts) and the agents' device route
 * (a device: its grants). The access decision is the caller's `access` function.
 *
 * Input: either `names` (up to 100) or a `template` (up to 64 KiB) in which every
 * `${{ vars.NAME }}` (spaces inside the braces optional) is replaced by the value of NAME.
 * Every `${{ … }}` must be such a reference (anything else is a 400); there is no escape
 * syntax; text outside the references is kept byte for byte; values are inserted as they
 * are (no quoting).
 *
 * All or nothing: every name must be bound, its credential must still exist with the field,
 * and `access` must allow the credential. Otherwise the call fails as a whole — 403 if any
 * name was denied, else 404 — and the error names every failing variable with its reason
 * (`details`: `vars.NAME`), never a value. Access and existence are decided before any
 * secret part is opened. Values are returned only in the result and never logged.
 */
interface ResolveRequest {
  readonly names?: readonly string[] | undefined;
  readonly template?: string | undefined;
}

interface ResolvedCredential {
  readonly type: string;
  readonly id: string;
  readonly name: string;
}

/** Whether the caller may read this credential's values through the variable `variable`. */
type VariableAccess = (credential: ResolvedCredential, variable: string) => boolean | Promise<boolean>;

interface Resolution {
  /** The names resolved, in first-use order. */
  readonly names: readonly string[];
  /** NAME → value (always, also for templates). */
  readonly values: Readonly<Record<string, string>>;
  /** The rendered template (template requests only). */
  readonly result?: string;
  /** The credentials read (for the caller's audit entry). */
  readonly credentials: readonly ResolvedCredential[];
}

type FailureReason = 'not_found' | 'forbidden';

interface ResolutionFailure {
  readonly name: string;
  readonly reason: FailureReason;
  readonly message: string;
}

/** The whole call failed: 403 when any variable was denied, else 404; `failures` names them all. */
export class VariableResolutionError extends HttpError {
  constructor(readonly failures: readonly ResolutionFailure[]) {
    const denied = failures.some((f) => f.reason === 'forbidden');
    super(
      denied ? 403 : 404,
      denied ? 'forbidden' : 'not_found',
      `variables could not be resolved: ${failures.map((f) => `${f.name} (${f.message})`).join(', ')}`,
      { details: failures.map((f) => ({ path: `vars.${f.name}`, message: f.message })) },
    );
  }
}

export const MAX_NAMES = 100;
export const MAX_TEMPLATE_BYTES = 64 * 1024;
const REFERENCE = /\$\{\{\s*([^{}]*?)\s*\}\}/g;
const VAR_REF = /^vars\.([A-Za-z_][A-Za-z0-9_]*)$/;

/** An API caller's access: the read scopes of the credential's type (admin:* implies them). */
export const scopeAccess =
  (principal: Principal): VariableAccess =>
  (credential) => {
    const rt = resourceType(credential.type);
    return rt !== undefined && rt.scopes.read.every((s) => hasScope(principal.scopes, s));
  };

/** The names a template references, in first-use order; 400 on any other `${{ … }}`. */
function templateNames(template: string): string[] {
  const names: string[] = [];
  for (const m of template.matchAll(REFERENCE)) {
    const ref = VAR_REF.exec(m[1]!);
    if (!ref)
      throw badRequest('unsupported expression in template: only ${{ vars.NAME }} is allowed', [
        { path: 'body.template', message: `at offset ${m.index}` },
      ]);
    if (!names.includes(ref[1]!)) names.push(ref[1]!);
  }
  return names;
}

function requestedNames(req: ResolveRequest): string[] {
  if ((req.names === undefined) === (req.template === undefined))
    throw badRequest('send either names or template', [{ path: 'body', message: 'exactly one of names, template' }]);
  if (req.template !== undefined) {
    if (Buffer.byteLength(req.template, 'utf8') > MAX_TEMPLATE_BYTES)
      throw badRequest(`the template exceeds ${MAX_TEMPLATE_BYTES} bytes`, [{ path: 'body.template', message: 'too long' }]);
    const names = templateNames(req.template);
    if (names.length > MAX_NAMES)
      throw badRequest(`at most ${MAX_NAMES} variables per template`, [{ path: 'body.template', message: 'too many variables' }]);
    return names;
  }
  const names = [...new Set(req.names)];
  if (names.length === 0 || names.length > MAX_NAMES)
    throw badRequest(`between 1 and ${MAX_NAMES} names`, [{ path: 'body.names', message: 'count' }]);
  const bad = names.filter((n) => !VARIABLE_NAME_RE.test(n));
  if (bad.length > 0)
    throw badRequest(
      'invalid variable names',
      bad.slice(0, 10).map((_n, i) => ({ path: `body.names.${i}`, message: 'letters, digits and "_", not starting with a digit' })),
    );
  return names;
}

async function readBindings(tenantId: string, names: readonly string[]): Promise<Map<string, Variable>> {
  const items = await getMany(names.map((n) => keys.variable(tenantId, n)));
  return new Map(items.map((item) => [String(item.name), toVariable(item)]));
}

export async function resolveVariables(ctx: CallContext, req: ResolveRequest, access: VariableAccess): Promise<Resolution> {
  const tid = ctx.principal.tenantId;
  const names = requestedNames(req);
  const bindings = await readBindings(tid, names);
  const failures: ResolutionFailure[] = [];
  const credentials = new Map<string, FoundCredential | undefined>();
  const plan: Array<{ name: string; credential: FoundCredential; field: string }> = [];
  for (const name of names) {
    const b = bindings.get(name);
    if (!b) {
      failures.push({ name, reason: 'not_found', message: 'no such variable' });
      continue;
    }
    if (!credentials.has(b.credential_id)) credentials.set(b.credential_id, await findCredential(tid, b.credential_id));
    const c = credentials.get(b.credential_id);
    if (!c) {
      failures.push({ name, reason: 'not_found', message: 'the bound credential no longer exists' });
      continue;
    }
    if (!(await access({ type: c.type, id: c.id, name: c.name }, name))) {
      failures.push({ name, reason: 'forbidden', message: 'access to the bound credential denied' });
      continue;
    }
    plan.push({ name, credential: c, field: b.field });
  }
  if (failures.length > 0) throw new VariableResolutionError(failures);

  const fieldsOf = new Map<string, Map<string, string>>();
  const values: Record<string, string> = {};
  for (const { name, credential, field } of plan) {
    if (!fieldsOf.has(credential.id)) fieldsOf.set(credential.id, await credentialFields(tid, credential));
    const value = fieldsOf.get(credential.id)!.get(field);
    if (value === undefined) failures.push({ name, reason: 'not_found', message: 'the bound field no longer exists' });
    else values[name] = value;
  }
  if (failures.length > 0) throw new VariableResolutionError(failures);

  const read = [...new Map(plan.map((p) => [p.credential.id, { type: p.credential.type, id: p.credential.id, name: p.credential.name }])).values()];
  const base = { names, values, credentials: read };
  if (req.template === undefined) return base;
  const result = req.template.replace(REFERENCE, (_m, inner: string) => values[VAR_REF.exec(inner)![1]!]!);
  return { ...base, result };
}
