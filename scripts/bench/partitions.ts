/**
 * Load test: one account's traffic through the local runtime, with every DynamoDB write
 * counted per item key and per gsi1 partition key by the proxy in front of DynamoDB Local
 * (scripts/bench/proxy.ts), extrapolated to 10,000 requests per second for that one account.
 * docs/capacity.md states the bound and the capacity model; this prints the figures and
 * exits non-zero when a key other than the ones named there exceeds the bound.
 *
 * The mix: 70 % GET /api/v1/secrets/{name}, 20 % PUT /api/v1/secrets/{name} (audited: an
 * audit entry and an outbox event each), 10 % GET /api/v1/passwords/{id}, over SECRETS
 * secrets, with the account's quota at 10,000 requests per second (600,000 per minute).
 *
 *   npm run bench:partitions    (PARTITIONS_SECONDS=20 PARTITIONS_CONCURRENCY=16 PARTITIONS_BOUND=300)
 */
import { randomBytes } from 'node:crypto';
import { generateApiKey } from '../../lib/auth/api-keys.js';
import { keys, meterPk, tenantPk } from '../../lib/store/keys.js';
import { freePort } from '../local/ports.js';
import { closedLoop, http, startRuntime } from './harness.js';
import { countingProxy } from './proxy.js';

const SECONDS = Number(process.env.PARTITIONS_SECONDS ?? 20);
const CONCURRENCY = Number(process.env.PARTITIONS_CONCURRENCY ?? 16);
const BOUND = Number(process.env.PARTITIONS_BOUND ?? 300);
const TARGET_RPS = 10_000;
const SECRETS = 200;
/**
 * Items written by the stream's batches rather than per request: the audit chain head, sealed
 * by the relay for each stream batch that holds the account's entries, up to 99 entries per
 * transaction (lib/events/relay.ts, lib/audit/chain.ts). Their rate follows the batches and
 * the audit entries per second, not the requests: projected as entries/99 plus the batches
 * per second measured here.
 */
const PERIODIC = /\|AUDITCHAIN$/;

async function main() {
  const dynamoPort = await freePort();
  const proxy = await countingProxy(dynamoPort, 0);
  const rootKey = generateApiKey().key;
  const rt = await startRuntime(rootKey, { dynamoPort, env: { DYNAMODB_CLIENT_ENDPOINT: `http://127.0.0.1:${proxy.port}` } });
  try {
    const j = async (method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) => {
      const r = await http(
        method,
        `${rt.baseUrl}${path}`,
        { authorization: `Bearer ${key}`, ...headers },
        body === undefined ? undefined : JSON.stringify(body),
      );
      return { ...r, json: () => JSON.parse(r.text) as { data: any } };
    };
    const made = (
      await j('POST', '/api/v1/admin/tenants', rootKey, {
        name: 'partitions',
        admin_email: 'partitions@example.test',
        quota: { requests_per_minute: TARGET_RPS * 60, max_secrets: 100_000 },
      })
    ).json().data;
    const key: string = made.api_key.key;
    const tid: string = made.tenant.id;
    for (let i = 0; i < SECRETS; i++) await j('POST', '/api/v1/secrets', key, { name: `p-${i}`, data: { value: randomBytes(12).toString('hex') } });
    const password = (await j('POST', '/api/v1/passwords', key, { name: 'p', username: 'u', password: randomBytes(12).toString('hex') })).json().data
      .password.id as string;

    const from = proxy.calls.length;
    let requests = 0;
    const op = async () => {
      const r = Math.random();
      const name = `p-${Math.floor(Math.random() * SECRETS)}`;
      const res =
        r < 0.7
          ? await j('GET', `/api/v1/secrets/${name}`, key)
          : r < 0.9
            ? // an update requires If-Match (428 without); `*`: the write mix of the model, whatever version is there
              await j('PUT', `/api/v1/secrets/${name}`, key, { data: { value: randomBytes(12).toString('hex') } }, { 'if-match': '*' })
            : await j('GET', `/api/v1/passwords/${password}`, key);
      requests++;
      if (res.status !== 200 && res.status !== 409) throw new Error(`${res.status} ${res.text.slice(0, 200)}`);
    };
    const load = await closedLoop('mix', op, { concurrency: CONCURRENCY, seconds: SECONDS });
    // A KEYS_ONLY gsi1 is written when an item enters it or changes its gsi1 keys, not when an
    // item keeps them (a secret's head rewritten by an update): the gsi1 key each item had
    // is followed from the first call of the run, set-up included.
    const gsiOf = new Map<string, string | undefined>();
    const perItem = new Map<string, number>();
    const perGsi = new Map<string, number>();
    let writes = 0;
    proxy.calls.forEach((c, i) => {
      for (const w of c.writes) {
        const changed = w.gsi !== undefined && gsiOf.get(w.key) !== w.gsi;
        if (w.gsi !== undefined) gsiOf.set(w.key, w.gsi);
        if (i < from) continue;
        writes++;
        const k = w.key.replace(tenantPk(tid), tenantPk('<tenant>')).replace(meterPk(tid), meterPk('<tenant>'));
        perItem.set(k, (perItem.get(k) ?? 0) + 1);
        if (changed) perGsi.set(w.gsi!, (perGsi.get(w.gsi!) ?? 0) + 1);
      }
    });
    const at10k = (n: number) => (n / requests) * TARGET_RPS;
    const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
    const out = process.stdout;
    out.write(
      `\nper-key writes: one account, ${requests} requests in ${SECONDS} s (${load.throughput.toFixed(0)} req/s here, ${load.errors} errors), ${writes} item writes, ${new Date().toISOString()}\n`,
    );
    out.write(
      `mix: 70 % GET secret, 20 % PUT secret (audited), 10 % GET password; quota ${TARGET_RPS * 60}/min; extrapolated to ${TARGET_RPS} req/s for this account\n\n`,
    );
    out.write(`${'item key (pk|sk)'.padEnd(52)} ${'writes'.padStart(7)} ${'per req'.padStart(8)} ${'w/s @10k'.padStart(9)}\n`);
    const requestDriven = new Map([...perItem].filter(([k]) => !PERIODIC.test(k)));
    for (const [k, n] of top(requestDriven, 8))
      out.write(`${k.padEnd(52)} ${String(n).padStart(7)} ${(n / requests).toFixed(4).padStart(8)} ${at10k(n).toFixed(0).padStart(9)}\n`);
    const usage = [...perItem].filter(([k]) => k.startsWith(`${meterPk('<tenant>')}|${keys.usagePrefix}`));
    out.write(
      `usage/limiter items: ${usage.length}, max ${at10k(Math.max(...usage.map(([, n]) => n))).toFixed(0)} w/s @10k, mean ${at10k(usage.reduce((a, [, n]) => a + n, 0) / usage.length).toFixed(0)} w/s @10k\n\n`,
    );
    out.write(`${'gsi1 partition key'.padEnd(52)} ${'writes'.padStart(7)} ${'per req'.padStart(8)} ${'w/s @10k'.padStart(9)}\n`);
    for (const [k, n] of top(perGsi, 8))
      out.write(`${k.padEnd(52)} ${String(n).padStart(7)} ${(n / requests).toFixed(4).padStart(8)} ${at10k(n).toFixed(0).padStart(9)}\n`);
    const audit = [...perGsi].filter(([k]) => k.startsWith('AUDIT#'));
    out.write(`AUDIT shards written: ${audit.length}, max ${at10k(Math.max(...audit.map(([, n]) => n))).toFixed(0)} w/s @10k\n`);

    const auditEntries = audit.reduce((a, [, n]) => a + n, 0);
    for (const [k, n] of [...perItem].filter(([k]) => PERIODIC.test(k))) {
      const projected = at10k(auditEntries) / 99 + n / SECONDS;
      out.write(
        `periodic: ${k} ${(n / SECONDS).toFixed(1)} w/s here; projected @10k: ${projected.toFixed(0)} w/s (audit entries/s ÷ 99 + batches/s)\n`,
      );
    }
    const over = [...[...requestDriven].map(([k, n]) => ['item', k, n] as const), ...[...perGsi].map(([k, n]) => ['gsi1', k, n] as const)].filter(
      ([, , n]) => at10k(n) > BOUND,
    );
    if (over.length > 0) {
      for (const [what, k, n] of over) out.write(`OVER the bound of ${BOUND} w/s: ${what} ${k} ${at10k(n).toFixed(0)} w/s @10k\n`);
      process.exitCode = 1;
    } else out.write(`no item or gsi1 partition key above ${BOUND} writes/s at ${TARGET_RPS} req/s \n`);
  } finally {
    rt.stop();
    proxy.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
