import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_ACCOUNT_ROUTES, OWN_PARTITIONS, ROUTES, SELF_IDENTIFYING_TENANT_ROUTES, tenancyOf, tenantCredentialOf, type Route } from '../../lib/routes.js';
import { BACKGROUND_JOBS } from '../../infra/background.js';
import { SHARE_AWARE_GET_HANDLERS } from '../../lib/sharing/access.js';
import { ACCOUNT_ATTRIBUTES, AUDIT_ATTRIBUTES, METERING_ATTRIBUTES, DATA_KEY_ATTRIBUTES } from '../../lib/tenancy/attributes.js';
import { LOOKUP_PREFIXES } from '../../lib/tenancy/lookups.js';
import { TENANT_SESSION_PURPOSE, TENANT_SESSION_SECONDS } from '../../lib/tenancy/credentials.js';
import { METER_ACTIONS } from '../../lib/tenancy/meter.js';
import { actionsOf, allOfType, functionsByRoute, functionStatements, parentRef, resourcesOfType, roleStatements, synthesize, type CfnResource, type Statement, type Synthesized } from './synth.js';
import { scaled } from '../helpers/timeouts.js';

/**
 * Tenancy enforced by IAM (docs/architecture.md, "Tenancy in IAM"; infra/grants.ts): every
 * synthesized route function's statements, one by one.
 */
const TENANT = 'T#${aws:PrincipalTag/tenant_id}';
/** The account's metering partition (usage items, rate-limit buckets: lib/store/keys.ts meterPk). */
const METER = 'METER#${aws:PrincipalTag/tenant_id}';
const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const actions = (st: Statement) => list(st.Action);
const WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem', 'dynamodb:BatchWriteItem'];
const DATA_KEY = ['kms:Decrypt', 'kms:GenerateDataKey', 'kms:Encrypt', 'kms:ReEncryptFrom', 'kms:ReEncryptTo'];
const leadingKeys = (st: Statement): string[] | undefined => {
  for (const op of Object.values(st.Condition ?? {}) as Record<string, unknown>[]) if (op['dynamodb:LeadingKeys']) return list(op['dynamodb:LeadingKeys'] as string[]);
  return undefined;
};
const attributes = (st: Statement): string[] | undefined => {
  for (const op of Object.values(st.Condition ?? {}) as Record<string, unknown>[]) if (op['dynamodb:Attributes']) return list(op['dynamodb:Attributes'] as string[]);
  return undefined;
};

/**
 * The share-aware bearer routes: they reach another account's resource through a share or a
 * document grant, in a nested owner scope (lib/tenancy/scope.ts `ownerScope`), and are tenant
 * routes like any other (no exception).
 */
const SHARE_AWARE = [
  'GET /api/v1/secrets/{name}',
  'PUT /api/v1/secrets/{name}',
  'GET /api/v1/documents/{id}',
  'GET /api/v1/documents/{id}/download',
  'GET /api/v1/documents/{id}/pages/{page}',
];

describe('tenancy in IAM: the synthesized roles, statement by statement', () => {
  let s: Synthesized;
  let fns: ReturnType<typeof functionsByRoute>;
  beforeAll(() => {
    s = synthesize();
    fns = functionsByRoute(s);
  }, scaled(240_000));

  const tenantRoutes = () => ROUTES.filter((r) => tenancyOf(r) === 'tenant');

  it('classifies every route: every bearer, device and temp-token route is a tenant route, the share-aware ones included', () => {
    for (const r of ROUTES) {
      const expected = OPERATOR_ACCOUNT_ROUTES.has(r.key)
        ? 'tenant'
        : r.auth === 'operator'
          ? 'operator'
          : SELF_IDENTIFYING_TENANT_ROUTES.has(r.key)
            ? 'tenant'
            : ['public', 'endpoint'].includes(r.auth)
              ? 'self'
              : 'tenant';
      expect(tenancyOf(r), r.key).toBe(expected);
    }
    const shareAware = ROUTES.filter((r) => SHARE_AWARE.includes(r.key) || (r.handler !== null && SHARE_AWARE_GET_HANDLERS.has(r.handler)));
    expect([...SELF_IDENTIFYING_TENANT_ROUTES.keys()].sort()).toEqual([
      'GET /api/v1/auth/cli/login',
      'GET /api/v1/auth/oauth/authorize',
      'GET /api/v1/auth/oauth/logout',
      'GET /api/v1/auth/oauth/userinfo',
      'GET /api/v1/auth/oidc/callback',
      'GET /api/v1/auth/oidc/login',
      'GET /api/v1/diagnostics/auth',
      'POST /api/v1/agent/oauth/enroll',
      'POST /api/v1/agent/oauth/token',
      'POST /api/v1/auth/cli/revoke',
      'POST /api/v1/auth/cli/token',
      'POST /api/v1/auth/oauth/introspect',
      'POST /api/v1/auth/oauth/token',
      'POST /api/v1/auth/oauth/userinfo',
      'POST /api/v1/auth/refresh',
      'POST /api/v1/auth/webauthn/authentication/begin',
      'POST /api/v1/auth/webauthn/authentication/finish',
      'POST /api/v1/auth/workload/token',
      'POST /api/v1/auth/zkp/register',
      'POST /api/v1/auth/zkp/verify',
      'POST /webhooks/{payment_provider}',
    ]);
    expect(shareAware.length).toBeGreaterThan(SHARE_AWARE.length + 10);
    for (const r of shareAware) expect(tenancyOf(r), r.key).toBe('tenant');
    expect(tenantRoutes().length).toBeGreaterThan(150);
  });

  it('no bearer, device or temp-token route (the share-aware ones included) holds an unconditioned tenant-data statement', () => {
    const routes = ROUTES.filter((r) => r.auth === 'bearer' || r.auth === 'device' || r.auth === 'temp-token' || r.key === 'POST /webhooks/{payment_provider}');
    expect(routes.map((r) => r.key)).toEqual(expect.arrayContaining(SHARE_AWARE));
    for (const route of routes) {
      for (const { role, statement } of functionStatements(s, fns.get(route.key)!)) {
        const where = `${route.key} ${role} ${statement.Sid}`;
        if (actions(statement).some((a) => a.startsWith('dynamodb:'))) expect(leadingKeys(statement), where).toBeDefined();
        if (actions(statement).some((a) => DATA_KEY.includes(a))) {
          const equals = (statement.Condition?.StringEquals ?? {}) as Record<string, string>;
          expect(equals['kms:EncryptionContext:tenant_id'] ?? equals['kms:ViaService'] ?? equals['kms:EncryptionContext:tenant_role'], where).toBeDefined();
        }
      }
    }
  });

  it('no tenant-data statement of a tenant route without a LeadingKeys or encryption-context condition', () => {
    for (const route of tenantRoutes()) {
      const fn = fns.get(route.key)!;
      expect(fn.resource.Properties!.Environment.Variables.TENANT_ROLE_ARN, route.key).toBeDefined();
      for (const { role, statement } of functionStatements(s, fn)) {
        const where = `${route.key} ${role} ${statement.Sid}`;
        if (actions(statement).some((a) => a.startsWith('dynamodb:'))) {
          const keys = leadingKeys(statement);
          expect(keys, where).toBeDefined();
          if (role === 'tenant') {
            // the account's own partition, its metering partition, or the global lookup items (never another T#)
            const lookups = LOOKUP_PREFIXES.map((p) => `${p}*`);
            expect(keys!.every((k) => k === TENANT || k === METER || lookups.includes(k)), where).toBe(true);
            expect(Object.keys(statement.Condition!).some((op) => op.startsWith('ForAllValues:')), where).toBe(true);
          } else {
            // the execution role: credential items, the projected account read, device nonces, the
            // role's shared sessions; a temporary access token's item and the per-IP limiter; a
            // route's own global items (lib/routes.ts OWN_PARTITIONS: never an account partition)
            expect(['CredentialRead', 'AccountRead', 'DeviceNonce', 'TempTokenRead', 'IpMeter', 'TenantSessionCache', 'OwnItemRead', 'OwnItemWrite'], where).toContain(statement.Sid);
            if (statement.Sid!.startsWith('Own')) expect(keys!.some((k) => String(k).startsWith('T#') || String(k).startsWith('METER#')), where).toBe(false);
          }
        }
        if (actions(statement).some((a) => DATA_KEY.includes(a))) {
          const c = statement.Condition ?? {};
          const context = (c.StringEquals as Record<string, string> | undefined)?.['kms:EncryptionContext:tenant_id'];
          const via = (c.StringEquals as Record<string, string> | undefined)?.['kms:ViaService'];
          const sessions = (c.StringEquals as Record<string, unknown> | undefined)?.['kms:EncryptionContext:purpose'] === TENANT_SESSION_PURPOSE;
          // the tenant role's SSE-KMS statement of the documents bucket (S3 calls KMS with the
          // caller's session; bucket keys: the context is the bucket) is confined by the object
          // statement it serves, tenants/${aws:PrincipalTag/tenant_id}/*, and usable only via S3
          if (role === 'tenant' && statement.Sid === 'TenantDocumentObjectsKey') expect(JSON.stringify(via), where).toContain('s3.');
          else if (role === 'tenant') expect(context, where).toBe('${aws:PrincipalTag/tenant_id}');
          else if (sessions) {
            // the role's sealed shared sessions: under its own tenant-access role's name only
            const tenantRole = parentRef(fn.template, fn.resource.Properties!.Environment.Variables.TENANT_ROLE_ARN);
            expect((c.StringEquals as Record<string, unknown>)['kms:EncryptionContext:tenant_role'], where).toEqual({ Ref: tenantRole });
          } else expect(via, `${where}: the execution role opens data keys only through SQS or S3, or its shared sessions`).toBeDefined();
        }
      }
    }
  });

  it('the execution role reads credential items and the account item projected to what authentication needs, and assumes only its tenant role with one tenant_id tag', () => {
    for (const route of tenantRoutes()) {
      const fn = fns.get(route.key)!;
      const own = functionStatements(s, fn).filter((x) => x.role === 'own').map((x) => x.statement);
      const sid = (id: string) => own.find((st) => st.Sid === id);
      if (tenantCredentialOf(route) === 'signed-event') {
        // POST /webhooks/{payment_provider}: nothing of the table before the verified event names the account, only the per-IP limiter
        expect(own.filter((st) => actions(st).some((a) => a.startsWith('dynamodb:'))).map((st) => st.Sid), route.key).toEqual(['IpMeter', 'TenantSessionCache']);
      } else if (tenantCredentialOf(route) === 'own-items') {
        // the agent's device authorization, the CLI login, refresh and sign-in steps: their own global
        // items (lib/routes.ts OWN_PARTITIONS) and the per-IP limiter, nothing of any account but, for
        // a route that also takes a sign-in session's access token, authentication's projected account read
        const ownItems = OWN_PARTITIONS[route.key]!;
        const table = own.filter((st) => actions(st).some((a) => a.startsWith('dynamodb:')) && st.Sid !== 'TenantSessionCache');
        expect(table.map((st) => st.Sid).sort(), route.key).toEqual(
          [...(ownItems.read ? ['OwnItemRead'] : []), ...(ownItems.write ? ['OwnItemWrite'] : []), ...(ownItems.accessToken ? ['AccountRead'] : []), 'IpMeter'].sort(),
        );
        expect(sid('CredentialRead'), route.key).toBeUndefined();
      } else if (route.auth === 'temp-token') {
        // GET /api/v1/t/{token}: before the token names the account, its TEMPTOKEN# item and the
        // per-IP limiter, nothing of any account (the account item is read in the tenant session)
        expect(sid('TempTokenRead'), route.key).toMatchObject({ Action: 'dynamodb:GetItem', Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TEMPTOKEN#*'] } } });
        expect(sid('IpMeter'), route.key).toMatchObject({
          Action: 'dynamodb:UpdateItem',
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['IP#*'], 'dynamodb:Attributes': [...METERING_ATTRIBUTES] } },
        });
        expect([sid('CredentialRead'), sid('AccountRead')], route.key).toEqual([undefined, undefined]);
      } else {
        expect(sid('TempTokenRead') ?? sid('IpMeter'), route.key).toBeUndefined();
        expect(sid('CredentialRead'), route.key).toMatchObject({ Action: 'dynamodb:GetItem', Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['KEY#*', 'APITOKEN#*', 'DEVICE#*'] } } });
      }
      if (tenantCredentialOf(route) === 'bearer' || tenantCredentialOf(route) === 'device' || OWN_PARTITIONS[route.key]?.accessToken) expect(sid('AccountRead'), route.key).toMatchObject({
        Action: 'dynamodb:GetItem',
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*'] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...ACCOUNT_ATTRIBUTES] },
          Null: { 'dynamodb:Attributes': 'false' },
          StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
        },
      });
      expect(Boolean(sid('DeviceNonce')), route.key).toBe(route.auth === 'device');
      const assume = sid('AssumeTenantRole')!;
      expect(assume, route.key).toMatchObject({
        Action: ['sts:AssumeRole', 'sts:TagSession'],
        Condition: { Null: { 'aws:RequestTag/tenant_id': 'false' }, 'ForAllValues:StringEquals': { 'aws:TagKeys': ['tenant_id'] } },
      });
      // a route with own items has its role pair beside its function, in its family's stack (infra/grants.ts tenantRolesFor)
      const ownItems = tenantCredentialOf(route) === 'own-items';
      const tenantRef = fn.resource.Properties!.Environment.Variables.TENANT_ROLE_ARN;
      expect(tenantRef['Fn::GetAtt'] !== undefined, route.key).toBe(ownItems);
      const tenantRole = parentRef(fn.template, tenantRef);
      expect(assume.Resource, route.key).toEqual({ 'Fn::GetAtt': [tenantRole, 'Arn'] });
      // the role's shared sessions: its own partitions only (another role's sessions are out of reach)
      expect(sid('TenantSessionCache'), route.key).toMatchObject({
        Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [{ 'Fn::Join': ['', ['TSESSION#', { Ref: tenantRole }, '#*']] }] } },
      });
      // sessions of the length lib/tenancy/credentials.ts asks for (role chaining's hour)
      // (the pair lives in the parent, or for a route with own items beside its function)
      const home = ownItems ? fn.template : s.api;
      expect(home.resources[tenantRole]!.Properties!.MaxSessionDuration, route.key).toBe(TENANT_SESSION_SECONDS);
      // the tenant-access role trusts exactly that execution role, with session tags
      const trust = list(home.resources[tenantRole]!.Properties!.AssumeRolePolicyDocument.Statement as Statement[]);
      const execution = parentRef(fn.template, fn.resource.Properties!.Role);
      expect(trust, route.key).toEqual([
        { Action: ['sts:AssumeRole', 'sts:TagSession'], Effect: 'Allow', Principal: { AWS: { 'Fn::GetAtt': [execution, 'Arn'] } } },
      ]);
    }
  });

  it('the tenant-access role of each grant set: exactly its statements', () => {
    for (const route of tenantRoutes()) {
      const tenant = functionStatements(s, fns.get(route.key)!).filter((x) => x.role === 'tenant').map((x) => x.statement);
      const has = (g: string) => (route.grants as readonly string[]).includes(g);
      const expected = [
        'TenantRead',
        'TenantLookups',
        'TenantMeter',
        ...(has('table:write') ? ['TenantWrite', 'TenantLookupWrite', 'TenantLookupDelete'] : []),
        ...(has('kms:decrypt') || has('kms:encrypt') ? ['TenantDataKeys'] : []),
        ...(has('kms:encrypt') && !has('table:write') ? ['TenantDataKeyCreate'] : []),
        ...(has('documents:read') || has('documents:write') ? ['TenantDocumentObjects', 'TenantDocumentObjectsKey'] : []),
        ...(has('audit:send') ? ['TenantAuditKey'] : []),
      ];
      expect(tenant.map((st) => st.Sid).sort(), route.key).toEqual(expected.sort());
      for (const st of tenant) expect(st.Effect).toBe('Allow');
    }
  });

  it('no write permission on read-only routes beyond metering: their audit entries go to the audit queue', () => {
    // read-only: authenticated, without table:write (GET routes that declare it, exports and key
    // downloads that record a version, are writers by declaration); every one has audit:send
    const readOnly = ROUTES.filter((r) => r.grants.includes('table:meter') && !r.grants.includes('table:write'));
    expect(readOnly.length).toBeGreaterThan(100);
    expect(ROUTES.filter((r) => r.grants.includes('audit:send'))).toEqual(readOnly);
    for (const route of readOnly) {
      const meter: Statement[] = [];
      const ipMeter: Statement[] = [];
      const statements = functionStatements(s, fns.get(route.key)!);
      for (const { role, statement } of statements) {
        const writes = actions(statement).filter((a) => WRITES.includes(a));
        if (writes.length === 0) continue;
        const where = `${route.key} ${role} ${statement.Sid}`;
        if (statement.Sid === 'DeviceNonce') {
          expect(leadingKeys(statement), where).toEqual(['NONCE#*']);
          continue;
        }
        if (statement.Sid === 'IpMeter' && OWN_PARTITIONS[route.key]) {
          // a self-authenticating route with own items (lib/routes.ts OWN_PARTITIONS): the per-IP
          // limiter on its own role, an account's metering only in its tenant session (TenantMeter)
          expect([role, writes], where).toEqual(['own', ['dynamodb:UpdateItem']]);
          expect(leadingKeys(statement), where).toEqual(['IP#*']);
          expect(attributes(statement), where).toEqual([...METERING_ATTRIBUTES]);
          ipMeter.push(statement);
          continue;
        }
        if (statement.Sid === 'TenantSessionCache') {
          // the role's sealed shared sessions (lib/authn/tenant-sessions.ts): no account data
          expect([role, writes], where).toEqual(['own', ['dynamodb:PutItem']]);
          expect(JSON.stringify(leadingKeys(statement)), where).toMatch(/^\[\{"Fn::Join":\["",\["TSESSION#",\{"Ref":"[^"]+"\},"#\*"\]\]\}\]$/);
          continue;
        }
        if (statement.Sid === 'TenantDataKeyCreate') {
          // a sealing route's first seal of an account creates its data-key record, and nothing else
          expect([role, writes], where).toEqual(['tenant', ['dynamodb:PutItem']]);
          expect(leadingKeys(statement), where).toEqual([TENANT]);
          expect(attributes(statement), where).toEqual([...DATA_KEY_ATTRIBUTES]);
          continue;
        }
        // the metering statement and nothing else: the tenant role's, or (operator and
        // self-authenticating routes) the own role's
        expect(writes, where).toEqual(['dynamodb:UpdateItem']);
        if (tenancyOf(route) === 'tenant') {
          // the metering partition only, never T# (a secret's ttl, say)
          expect([role, statement.Sid], where).toEqual(['tenant', 'TenantMeter']);
          expect(leadingKeys(statement), where).toEqual([METER]);
          expect(attributes(statement), where).toEqual([...METERING_ATTRIBUTES]);
        } else {
          // operator and self routes are not tenant-scoped: the metering items of any account and the per-IP buckets, nothing else
          expect([role, statement.Sid], where).toEqual(['own', 'TableMeter']);
          expect(leadingKeys(statement), where).toEqual(['METER#*', 'IP#*']);
          expect(attributes(statement), where).toEqual([...METERING_ATTRIBUTES]);
        }
        meter.push(statement);
      }
      expect(ipMeter, route.key).toHaveLength(OWN_PARTITIONS[route.key] ? 1 : 0);
      expect(meter, route.key).toHaveLength(OWN_PARTITIONS[route.key] && tenancyOf(route) !== 'tenant' ? 0 : 1);
      // the audit entry: SendMessage on the audit queue only, its data key only through SQS for that queue
      const own = statements.filter((x) => x.role === 'own').map((x) => x.statement);
      const send = own.filter((st) => actions(st).includes('sqs:SendMessage'));
      expect(send.map((st) => st.Sid).sort(), route.key).toEqual([...(route.grants.includes('queue:send') ? ['QueueSend'] : []), 'AuditSend'].sort());
      const auditSend = send.find((st) => st.Sid === 'AuditSend')!;
      // the data stack's audit queue (an export of it, in the API stack)
      expect(JSON.stringify(auditSend.Resource), route.key).toMatch(/AuditQueue[0-9A-F]{8}Arn/);
      const key = own.find((st) => st.Sid === 'AuditQueueKey')!;
      expect(key, route.key).toMatchObject({ Action: ['kms:GenerateDataKey', 'kms:Decrypt'] });
      expect((key.Condition!.StringEquals as Record<string, unknown>)['kms:EncryptionContext:aws:sqs:arn'], route.key).toEqual(auditSend.Resource);
      expect(fns.get(route.key)!.resource.Properties!.Environment.Variables.AUDIT_QUEUE_URL, route.key).toBeDefined();
      // the audit MAC key (lib/audit/queue-key.ts): on a tenant route a data key of the session's
      // own account, for that purpose only; on an operator route (not tenant-scoped, the
      // documented exception) any account's, still for that purpose only; a self route on its own
      // items (OIDC discovery, the JWKS) audits no account and holds none: with it, it could seal
      // a message for any account (issue 31, "Forged audit entries")
      const tenantScoped = tenancyOf(route) === 'tenant';
      const macKey = statements
        .filter((x) => x.role === (tenantScoped ? 'tenant' : 'own'))
        .map((x) => x.statement)
        .filter((st) => actions(st).includes('kms:GenerateDataKey') && JSON.stringify(st.Condition ?? {}).includes('audit-queue'));
      if (!tenantScoped && OWN_PARTITIONS[route.key]) {
        expect(macKey, route.key).toEqual([]);
        continue;
      }
      expect(macKey.map((st) => st.Sid), route.key).toEqual([tenantScoped ? 'TenantAuditKey' : 'AuditKey']);
      expect(macKey[0], route.key).toMatchObject({
        Action: 'kms:GenerateDataKey',
        Condition: {
          StringEquals: {
            'kms:EncryptionContext:purpose': 'audit-queue',
            ...(tenantScoped ? { 'kms:EncryptionContext:tenant_id': '${aws:PrincipalTag/tenant_id}' } : {}),
          },
          'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['tenant_id', 'purpose'] },
          Null: { 'kms:EncryptionContext:tenant_id': 'false' },
        },
      });
      if (!tenantScoped) expect(Object.keys((macKey[0]!.Condition!.StringEquals as object) ?? {}), route.key).toEqual(['kms:EncryptionContext:purpose']);
    }
  });

  it('TenantMeter on every tenant role: UpdateItem on the metering partition only, naming only the metering attributes; TenantWrite does not reach it', () => {
    for (const route of tenantRoutes()) {
      const tenant = functionStatements(s, fns.get(route.key)!).filter((x) => x.role === 'tenant').map((x) => x.statement);
      const meter = tenant.find((st) => st.Sid === 'TenantMeter');
      expect(meter, route.key).toEqual({
        Sid: 'TenantMeter',
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Resource: expect.anything(),
        Condition: {
          'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [METER] },
          'ForAllValues:StringLike': { 'dynamodb:Attributes': [...METERING_ATTRIBUTES] },
        },
      });
      const write = tenant.find((st) => st.Sid === 'TenantWrite');
      if (write) expect(leadingKeys(write), route.key).toEqual([TENANT]);
      // what reaches the metering partition is what lib/tenancy/meter.ts allows the tenant clients (lib/store/client.ts)
      for (const st of tenant.filter((x) => leadingKeys(x)?.includes(METER))) {
        for (const a of actions(st)) expect(METER_ACTIONS as readonly string[], `${route.key} ${st.Sid}`).toContain(a.replace(/^dynamodb:/, ''));
      }
      // the usage report's read: TenantRead reaches the metering partition on every tenant role
      expect(leadingKeys(tenant.find((st) => st.Sid === 'TenantRead')!), route.key).toEqual([TENANT, METER]);
    }
  });

  it('every write statement of a tenant route has a LeadingKeys or encryption-context condition', () => {
    const KMS_WRITES = ['kms:GenerateDataKey', 'kms:Encrypt', 'kms:ReEncryptTo'];
    let checked = 0;
    for (const route of tenantRoutes()) {
      for (const { role, statement } of functionStatements(s, fns.get(route.key)!)) {
        if (!actions(statement).some((a) => WRITES.includes(a) || KMS_WRITES.includes(a))) continue;
        const where = `${route.key} ${role} ${statement.Sid}`;
        const conditionKeys = Object.values(statement.Condition ?? {}).flatMap((op) => Object.keys(op as object));
        expect(
          conditionKeys.some((k) => k === 'dynamodb:LeadingKeys' || k.startsWith('kms:EncryptionContext:')),
          `${where}: ${JSON.stringify(statement.Condition)}`,
        ).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(tenantRoutes().length);
  });

  it('the audit writer: a tenant-access role that can only put an audit entry in the session\'s account', () => {
    const writer: CfnResource = resourcesOfType(s.background, 'AWS::Lambda::Function').find(([, f]) => f.Properties!.Handler === 'audit/writer.handler')![1];
    expect(writer.Properties!.Environment.Variables.TENANT_ROLE_ARN).toBeDefined();
    const statements = functionStatements(s, { template: s.background, resource: writer, local: true });
    const tenant = statements.filter((x) => x.role === 'tenant').map((x) => x.statement);
    expect(tenant).toEqual([
      // the audit MAC keys of the session's account only (lib/audit/queue-key.ts)
      {
        Sid: 'TenantAuditKeyOpen',
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: expect.anything(),
        Condition: {
          StringEquals: { 'kms:EncryptionContext:purpose': 'audit-queue', 'kms:EncryptionContext:tenant_id': '${aws:PrincipalTag/tenant_id}' },
          'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['tenant_id', 'purpose'] },
          Null: { 'kms:EncryptionContext:tenant_id': 'false' },
        },
      },
      {
        Sid: 'TenantAuditPut',
        Effect: 'Allow',
        Action: 'dynamodb:PutItem',
        Resource: expect.anything(),
        Condition: {
          'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [TENANT], 'dynamodb:Attributes': [...AUDIT_ATTRIBUTES] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      },
    ]);
    // its own role: the audit queue and the assumption of that role, no table action at all
    const own = statements.filter((x) => x.role === 'own').map((x) => x.statement);
    expect(own.flatMap(actions).filter((a) => a.startsWith('dynamodb:'))).toEqual([]);
    expect(own.find((st) => st.Sid === 'AssumeTenantRole')).toMatchObject({
      Action: ['sts:AssumeRole', 'sts:TagSession'],
      Condition: { Null: { 'aws:RequestTag/tenant_id': 'false' }, 'ForAllValues:StringEquals': { 'aws:TagKeys': ['tenant_id'] } },
    });
    expect(own.find((st) => st.Sid === 'AuditQueueConsume')).toMatchObject({ Action: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'] });
    expect(own.flatMap(actions).filter((a) => a.startsWith('kms:'))).toEqual(['kms:Decrypt']);
  });

  it('a route with own items (lib/routes.ts OWN_PARTITIONS) touches only those partitions on its own role: no index, no account partition, its writes name no account and return nothing', () => {
    const confined = ROUTES.filter((r) => OWN_PARTITIONS[r.key] !== undefined);
    expect(confined.map((r) => r.key).sort()).toEqual([
      'GET /.well-known/acme-challenge/{token}',
      'GET /.well-known/oauth-authorization-server/{issuerPath+}',
      'GET /api/v1/auth/cli/login',
      'GET /api/v1/auth/oauth/.well-known/openid-configuration',
      'GET /api/v1/auth/oauth/authorize',
      'GET /api/v1/auth/oauth/jwks',
      'GET /api/v1/auth/oauth/logout',
      'GET /api/v1/auth/oauth/userinfo',
      'GET /api/v1/auth/oidc/callback',
      'GET /api/v1/auth/oidc/login',
      'GET /api/v1/diagnostics/auth',
      'POST /api/v1/agent/oauth/device',
      'POST /api/v1/agent/oauth/enroll',
      'POST /api/v1/agent/oauth/token',
      'POST /api/v1/auth/cli/login',
      'POST /api/v1/auth/cli/revoke',
      'POST /api/v1/auth/cli/token',
      'POST /api/v1/auth/oauth/introspect',
      'POST /api/v1/auth/oauth/token',
      'POST /api/v1/auth/oauth/userinfo',
      'POST /api/v1/auth/refresh',
      'POST /api/v1/auth/webauthn/authentication/begin',
      'POST /api/v1/auth/webauthn/authentication/finish',
      'POST /api/v1/auth/workload/token',
      'POST /api/v1/auth/zkp/register',
      'POST /api/v1/auth/zkp/verify',
    ]);
    for (const route of confined) {
      const own = functionStatements(s, fns.get(route.key)!).filter((x) => x.role === 'own').map((x) => x.statement);
      const listedSids = ['PlatformListingRead', 'ListedItemRead'];
      const table = own.filter((st) => actions(st).some((a) => a.startsWith('dynamodb:')) && !['IpMeter', 'TenantSessionCache', 'AccountRead', ...listedSids].includes(String(st.Sid)));
      const { read, write, listed } = OWN_PARTITIONS[route.key]!;
      // listed items (the authorization server's JWK set): the listings' keys on index plat, and
      // of the listed account items the keys and the declared attributes only, present
      const listedStatements = own.filter((st) => listedSids.includes(String(st.Sid)));
      expect(listedStatements.map((st) => st.Sid), route.key).toEqual(listed ? listedSids : []);
      if (listed) {
        expect(listedStatements[0], route.key).toMatchObject({
          Action: 'dynamodb:Query',
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': listed.listings.map((l) => `${l}#*`) }, Null: { 'dynamodb:LeadingKeys': 'false' } },
        });
        expect(JSON.stringify(listedStatements[0]!.Resource), route.key).toContain('/index/plat');
        expect(listedStatements[1], route.key).toMatchObject({
          Action: 'dynamodb:BatchGetItem',
          Condition: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*'] },
            'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', ...listed.attributes] },
            Null: { 'dynamodb:Attributes': 'false' },
          },
        });
        expect(JSON.stringify(listedStatements[1]!.Resource), route.key).not.toContain('/index/');
      }
      expect(table.map((st) => st.Sid), route.key).toEqual([...(read ? ['OwnItemRead'] : []), ...(write ? ['OwnItemWrite'] : [])]);
      for (const st of table) expect(JSON.stringify(st.Resource), route.key).not.toContain('/index/');
      if (read) expect(table[0]!.Condition, route.key).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...read] } });
      if (write) {
        expect(table.at(-1)!.Condition, route.key).toEqual({
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...write] },
          'ForAllValues:StringNotLike': { 'dynamodb:Attributes': ['tenant_id', 'owner_tenant_id', 'T#*', 'platpk', 'platsk'] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        });
      }
      for (const p of [...(read ?? []), ...(write ?? [])]) expect(p.startsWith('T#') || p.startsWith('METER#'), `${route.key} ${p}`).toBe(false);
      // no data key on its own role
      expect(own.some((st) => st.Sid === 'TenantDataKeys'), route.key).toBe(false);
    }
  });

  it('the workers that act for one account per message or listing entry: their table and data-key grants only on a tenant-access role; their own role reads only its platform listings', () => {
    const workers = BACKGROUND_JOBS.filter((j) => j.tenantAccess === 'grants');
    expect(workers.map((j) => j.id).sort()).toEqual(['CertificateExpirySweeper', 'JobsWorker', 'LeaseSweeper', 'OutboxRelay', 'WebhookWorker']);
    for (const job of workers) {
      const fn: CfnResource = resourcesOfType(s.background, 'AWS::Lambda::Function').find(([, f]) => f.Properties!.Handler === job.handler)![1];
      expect(fn.Properties!.Environment.Variables.TENANT_ROLE_ARN, job.id).toBeDefined();
      const statements = functionStatements(s, { template: s.background, resource: fn, local: true });
      const own = statements.filter((x) => x.role === 'own').map((x) => x.statement);
      // no table action on its own role but the listings' Query on index plat, LEASES#* or TENANTS#* only, and
      // for the stream relay the listings' keys on account items (and the stream's read actions)
      const table = own.filter((st) => st.Sid !== 'TableStreamRead' && actions(st).some((a) => a.startsWith('dynamodb:')));
      const reads = table.filter((st) => st.Sid !== 'PlatformListingWrite');
      expect(table.map((st) => st.Sid).sort(), job.id).toEqual([...(job.platformListings?.length ? ['PlatformListingRead'] : []), ...(job.platformListingWrites ? ['PlatformListingWrite'] : [])].sort());
      for (const st of reads) {
        expect(st.Action, job.id).toBe('dynamodb:Query');
        expect(JSON.stringify(st.Resource), job.id).toMatch(/\/index\/plat"/);
        expect(st.Condition, job.id).toEqual({
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': job.platformListings!.map((l) => `${l}#*`) },
          Null: { 'dynamodb:LeadingKeys': 'false' },
        });
      }
      // the envelope key only through SQS (its queues), never a tenant context
      for (const st of own.filter((x) => actions(x).some((a) => DATA_KEY.includes(a)))) {
        expect(JSON.stringify(st.Condition ?? {}), `${job.id} ${st.Sid}`).toContain('sqs.');
      }
      expect(own.find((st) => st.Sid === 'AssumeTenantRole'), job.id).toMatchObject({
        Action: ['sts:AssumeRole', 'sts:TagSession'],
        Condition: { Null: { 'aws:RequestTag/tenant_id': 'false' }, 'ForAllValues:StringEquals': { 'aws:TagKeys': ['tenant_id'] } },
      });
      // its tenant-access role: a tenant route's statements for the same grants, every one on the session's account
      const tenant = statements.filter((x) => x.role === 'tenant').map((x) => x.statement);
      const has = (g: string) => (job.grants as readonly string[]).includes(g);
      expect(tenant.map((st) => st.Sid).sort(), job.id).toEqual(
        ['TenantRead', 'TenantLookups', 'TenantMeter', 'TenantWrite', 'TenantLookupWrite', 'TenantLookupDelete', ...(has('kms:decrypt') || has('kms:encrypt') ? ['TenantDataKeys'] : [])].sort(),
      );
      const write = tenant.find((st) => st.Sid === 'TenantWrite')!;
      expect(leadingKeys(write), job.id).toEqual([TENANT]);
      const keyStatement = tenant.find((st) => st.Sid === 'TenantDataKeys');
      if (keyStatement) expect(keyStatement.Condition, job.id).toEqual({ StringEquals: { 'kms:EncryptionContext:tenant_id': '${aws:PrincipalTag/tenant_id}' } });
    }
  });

  it('the outbox relay (cross-account by design) writes on its own role only the platform listings\' keys of account items: no other attribute, no read, no data key', () => {
    const relay: CfnResource = resourcesOfType(s.background, 'AWS::Lambda::Function').find(([, f]) => f.Properties!.Handler === 'webhooks/relay.handler')![1];
    const statements = functionStatements(s, { template: s.background, resource: relay, local: true });
    const own = statements.filter((x) => x.role === 'own').map((x) => x.statement);
    const writing = own.filter((st) => actions(st).some((a) => WRITES.includes(a)));
    expect(writing.map((st) => st.Sid)).toEqual(['PlatformListingWrite']);
    expect(writing[0]!.Action).toBe('dynamodb:UpdateItem');
    expect(writing[0]!.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*'] },
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'platpk', 'platsk'] },
      Null: { 'dynamodb:Attributes': 'false' },
      StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
    });
    expect(own.flatMap(actions).filter((a) => ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem'].includes(a))).toEqual([]);
    expect(own.some((st) => st.Sid === 'TenantDataKeys')).toBe(false);
  });

  it('documents are confined by the tenant session\'s tag: object actions only on the tenant role, under tenants/${aws:PrincipalTag/tenant_id}/, the SSE-KMS key only via S3', () => {
    const documentRoutes = ROUTES.filter((r) => r.grants.some((g) => g.startsWith('documents:')));
    expect(documentRoutes.length).toBeGreaterThan(0);
    for (const route of documentRoutes) {
      expect(tenancyOf(route), route.key).toBe('tenant');
      const statements = functionStatements(s, fns.get(route.key)!);
      // the execution role: no S3 action, no key via S3
      const own = statements.filter((x) => x.role === 'own').map((x) => x.statement);
      expect(own.flatMap(actions).filter((a) => a.startsWith('s3:')), route.key).toEqual([]);
      expect(JSON.stringify(own), route.key).not.toContain('s3.');
      const tenant = statements.filter((x) => x.role === 'tenant').map((x) => x.statement);
      const objects = tenant.find((st) => st.Sid === 'TenantDocumentObjects')!;
      const write = route.grants.includes('documents:write');
      expect(list(objects.Action), route.key).toEqual(write ? ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'] : ['s3:GetObject']);
      expect(JSON.stringify(objects.Resource), route.key).toMatch(/-documents-.*\/tenants\/\$\{aws:PrincipalTag\/tenant_id\}\/\*"/);
      const key = tenant.find((st) => st.Sid === 'TenantDocumentObjectsKey')!;
      expect(list(key.Action).sort(), route.key).toEqual(write ? ['kms:Decrypt', 'kms:GenerateDataKey'] : ['kms:Decrypt']);
      const eq = key.Condition!.StringEquals as Record<string, unknown>;
      expect(JSON.stringify(eq['kms:ViaService']), route.key).toContain('s3.');
      expect(JSON.stringify(eq['kms:EncryptionContext:aws:s3:arn']), route.key).toContain('-documents-');
    }
    // no role of the app reaches every tenant's objects
    for (const { statement } of roleStatements(s)) {
      if (actions(statement).some((a) => a.startsWith('s3:') && a.endsWith('Object'))) expect(JSON.stringify(statement.Resource)).not.toMatch(/\/tenants\/\*"/);
    }
  });

  it('GET /ready holds only GetItem on the SYS partition and kms:DescribeKey', () => {
    const fn = fns.get('GET /ready')!;
    expect(fn.resource.Properties!.Environment.Variables.TENANT_ROLE_ARN).toBeUndefined();
    expect(actionsOf(s, fn)).toEqual(['dynamodb:GetItem', 'kms:DescribeKey', 'logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    const own = functionStatements(s, fn).map((x) => x.statement);
    const dynamo = own.filter((st) => actions(st).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo).toHaveLength(1);
    expect(dynamo[0]).toMatchObject({ Sid: 'ReadinessProbe', Action: 'dynamodb:GetItem', Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['SYS'] } } });
    expect(own.filter((st) => actions(st).some((a) => a.startsWith('kms:')))).toEqual([expect.objectContaining({ Sid: 'KeyDescribe', Action: 'kms:DescribeKey' })]);
  });

  it('the exceptions keep their route grants on their own role, and are exactly the operator and self-authenticating routes', () => {
    const exceptions = ROUTES.filter((r) => tenancyOf(r) !== 'tenant');
    const byKind = (k: string) => exceptions.filter((r) => tenancyOf(r) === k).length;
    expect(byKind('operator')).toBe(ROUTES.filter((r) => r.auth === 'operator' && !OPERATOR_ACCOUNT_ROUTES.has(r.key)).length);
    expect([...OPERATOR_ACCOUNT_ROUTES]).toEqual(['PUT /api/v1/admin/tenants/{id}/sso']);
    expect(byKind('self')).toBe(ROUTES.filter((r) => ['public', 'endpoint'].includes(r.auth) && !SELF_IDENTIFYING_TENANT_ROUTES.has(r.key)).length);
    expect(exceptions.length).toBe(byKind('operator') + byKind('self'));
    for (const route of exceptions) {
      const fn = fns.get(route.key)!;
      expect(fn.resource.Properties!.Environment.Variables.TENANT_ROLE_ARN, route.key).toBeUndefined();
      expect(functionStatements(s, fn).every((x) => x.role === 'own'), route.key).toBe(true);
    }
    // every tenant-access role in the app is assumed by a tenant route's function
    const assumed = new Set(tenantRoutes().map((r: Route) => parentRef(fns.get(r.key)!.template, fns.get(r.key)!.resource.Properties!.Environment.Variables.TENANT_ROLE_ARN)));
    const tenantRoles = allOfType(s, 'AWS::IAM::Role').filter((r) => JSON.stringify(r.resource.Properties!.AssumeRolePolicyDocument).includes('sts:TagSession'));
    // ... or by a background worker that acts for one account at a time (the audit writer, and
    // the workers with tenantAccess 'grants'), each its own
    for (const job of BACKGROUND_JOBS.filter((j) => j.tenantAccess !== undefined)) {
      const worker = resourcesOfType(s.background, 'AWS::Lambda::Function').find(([, f]) => f.Properties!.Handler === job.handler)![1];
      assumed.add(worker.Properties!.Environment.Variables.TENANT_ROLE_ARN['Fn::GetAtt'][0] as string);
    }
    expect(tenantRoles.map((r) => r.id).sort()).toEqual([...assumed].sort());
  });
});
