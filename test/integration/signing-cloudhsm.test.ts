import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DescribeClustersCommand, type DescribeClustersCommandOutput } from '@aws-sdk/client-cloudhsm-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareSoftHsm } from '../../scripts/local/softhsm.js';
import { CloudHsmDescription, cloudHsmPreparer, describeCluster, type DescribeClustersClient } from '../../lib/signing/cloudhsm.js';
import { Pkcs11Backend } from '../../lib/signing/pkcs11.js';
import { fileDirectory } from '../helpers/scratch.js';

/**
 * lib/signing/cloudhsm.ts: cluster discovery (DescribeClusters) and the Client SDK 5
 * configuration written before the PKCS#11 library starts; the pkcs11 backend's `prepare`
 * hook (on a real SoftHSM2 token); the describing backend; and the registry's wiring with
 * CLOUDHSM_CLUSTER_ID, through the real CloudHSM client pointed at a local HTTP fake
 * (CLOUDHSM_ENDPOINT). The CloudHSM control plane has no local engine: each fake records
 * the request, and the tests assert it exactly.
 */
const CLUSTER = 'cluster-jxhlf7644ne';
type ClusterReply = NonNullable<DescribeClustersCommandOutput['Clusters']>;

const hsm = (id: string, ip: string, state: string) => ({ HsmId: id, EniIp: ip, State: state, AvailabilityZone: 'eu-west-1a', ClusterId: CLUSTER });
const ACTIVE_CLUSTER: ClusterReply = [
  { ClusterId: CLUSTER, State: 'ACTIVE', Hsms: [hsm('hsm-b', '10.0.2.17', 'ACTIVE'), hsm('hsm-a', '10.0.1.9', 'ACTIVE'), hsm('hsm-c', '10.0.3.5', 'CREATE_IN_PROGRESS')] },
];

/** A recording stand-in for CloudHSMV2Client: answers each send with the next reply. */
function fakeClient(...replies: (ClusterReply | Error)[]) {
  const calls: { command: string; input: unknown }[] = [];
  const client: DescribeClustersClient = {
    async send(command: DescribeClustersCommand) {
      calls.push({ command: command.constructor.name, input: command.input });
      const reply = replies.shift();
      if (!reply) throw new Error('unexpected call');
      if (reply instanceof Error) throw reply;
      return { Clusters: reply, $metadata: {} };
    },
  };
  return { client, calls };
}

const EXPECTED_REQUEST = { command: 'DescribeClustersCommand', input: { Filters: { clusterIds: [CLUSTER] } } };
const root = fileDirectory('cloudhsm-');
const tmp = (prefix: string) => mkdtempSync(join(root, prefix));

describe('cluster discovery and the client configuration', () => {
  it('asks for exactly this cluster and writes every ACTIVE HSM (sorted) into the SDK 5 configuration', async () => {
    const { client, calls } = fakeClient(ACTIVE_CLUSTER);
    const configPath = join(tmp('cloudhsm-'), 'nested', 'cloudhsm-pkcs11.cfg');
    const addresses = await cloudHsmPreparer({ clusterId: CLUSTER, region: 'eu-west-1', configPath, client })();
    expect(calls).toEqual([EXPECTED_REQUEST]);
    expect(addresses).toEqual(['10.0.1.9', '10.0.2.17']);
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({
      clusters: [
        {
          type: 'hsm1',
          cluster: {
            hsm_ca_file: '/opt/cloudhsm/etc/customerCA.crt',
            servers: [
              { hostname: '10.0.1.9', port: 2223, enable: true },
              { hostname: '10.0.2.17', port: 2223, enable: true },
            ],
          },
        },
      ],
      logging: { log_type: 'term', log_file: join(configPath, '..', 'cloudhsm-pkcs11.log'), log_level: 'warn', log_interval: 'never' },
    });
    expect(statSync(configPath).mode & 0o777).toBe(0o600);
  });

  it('rewrites the configuration on the next connection when an HSM was replaced', async () => {
    const replaced: ClusterReply = [{ ClusterId: CLUSTER, State: 'ACTIVE', Hsms: [hsm('hsm-a', '10.0.1.9', 'ACTIVE'), hsm('hsm-d', '10.0.2.44', 'ACTIVE')] }];
    const { client, calls } = fakeClient(ACTIVE_CLUSTER, replaced);
    const configPath = join(tmp('cloudhsm-'), 'cloudhsm-pkcs11.cfg');
    const prepare = cloudHsmPreparer({ clusterId: CLUSTER, region: 'eu-west-1', configPath, client, caFile: '/opt/ca/other.crt' });
    await prepare();
    expect(await prepare()).toEqual(['10.0.1.9', '10.0.2.44']);
    expect(calls).toEqual([EXPECTED_REQUEST, EXPECTED_REQUEST]);
    const written = JSON.parse(readFileSync(configPath, 'utf8')) as { clusters: { cluster: { hsm_ca_file: string; servers: { hostname: string }[] } }[] };
    expect(written.clusters[0]!.cluster.servers.map((s) => s.hostname)).toEqual(['10.0.1.9', '10.0.2.44']);
    expect(written.clusters[0]!.cluster.hsm_ca_file).toBe('/opt/ca/other.crt');
  });

  it('refuses a cluster without an ACTIVE HSM, an unknown cluster, and a failed call, writing nothing; the AWS message never surfaces', async () => {
    const configPath = join(tmp('cloudhsm-'), 'cloudhsm-pkcs11.cfg');
    const degraded = fakeClient([{ ClusterId: CLUSTER, State: 'DEGRADED', Hsms: [hsm('hsm-a', '10.0.1.9', 'DELETE_IN_PROGRESS')] }]);
    await expect(cloudHsmPreparer({ clusterId: CLUSTER, region: 'eu-west-1', configPath, client: degraded.client })()).rejects.toThrow(
      `CloudHSM cluster ${CLUSTER} (DEGRADED) has no ACTIVE HSM (1 in all)`,
    );
    await expect(describeCluster(fakeClient([]).client, CLUSTER)).rejects.toThrow(`CloudHSM cluster ${CLUSTER} was not found in this account and region`);
    const denied = Object.assign(new Error('User: arn:aws:sts::111122223333:assumed-role/x is not authorized to perform: cloudhsm:DescribeClusters'), { name: 'AccessDeniedException' });
    const failing = cloudHsmPreparer({ clusterId: CLUSTER, region: 'eu-west-1', configPath, client: fakeClient(denied).client });
    const error = await failing().catch((e: Error) => e);
    expect((error as Error).message).toBe(`DescribeClusters for ${CLUSTER} failed (AccessDeniedException)`);
    expect((error as Error).message).not.toContain('111122223333');
    expect(existsSync(configPath)).toBe(false);
  });
});

/** One SoftHSM2 token for the file (the module reads SOFTHSM2_CONF once per process). */
const softhsm = prepareSoftHsm(tmp('cloudhsm-softhsm-'));
if (!softhsm.ok) throw new Error(`SoftHSM2 is required for these tests: ${softhsm.reason}`);
const token = softhsm.token;
process.env.SOFTHSM2_CONF = token.conf;

describe('the pkcs11 backend\'s prepare hook, on a SoftHSM2 token', () => {

  it('runs before the module is loaded: a failing lookup fails the connection, the next connection looks again', async () => {
    const order: string[] = [];
    let fail = true;
    const backend = new Pkcs11Backend({
      module: token.module,
      tokenLabel: token.tokenLabel,
      pin: async () => {
        order.push('pin');
        return token.pin;
      },
      poolSize: 1,
      prepare: async () => {
        order.push('prepare');
        if (fail) throw new Error(`CloudHSM cluster ${CLUSTER} (DEGRADED) has no ACTIVE HSM (1 in all)`);
      },
    });
    try {
      const first = await backend.status();
      expect(first).toMatchObject({ configured: true, reachable: false, status: 'error' });
      expect(first.reason).toBe(`pkcs11: cannot prepare the PKCS#11 module: CloudHSM cluster ${CLUSTER} (DEGRADED) has no ACTIVE HSM (1 in all)`);
      expect(order).toEqual(['prepare']);
      fail = false;
      const second = await backend.status();
      expect(second).toMatchObject({ configured: true, reachable: true, status: 'available' });
      expect(order).toEqual(['prepare', 'prepare', 'pin']);
    } finally {
      await backend.close();
    }
  });

  it('a module that cannot load fails after the configuration was written', async () => {
    const { client, calls } = fakeClient(ACTIVE_CLUSTER);
    const configPath = join(tmp('cloudhsm-'), 'cloudhsm-pkcs11.cfg');
    const backend = new Pkcs11Backend({
      module: join(tmp('no-module-'), 'libcloudhsm_pkcs11.so'),
      tokenLabel: 'hsm1',
      pin: async () => 'cu:pw',
      poolSize: 1,
      prepare: cloudHsmPreparer({ clusterId: CLUSTER, region: 'eu-west-1', configPath, client }),
    });
    const status = await backend.status();
    expect(status.reason).toMatch(/^pkcs11: cannot load the PKCS#11 module /);
    expect(calls).toEqual([EXPECTED_REQUEST]);
    expect(existsSync(configPath)).toBe(true);
  });
});

describe('through the real CloudHSM client, pointed at a local fake (CLOUDHSM_ENDPOINT)', () => {
  let server: Server;
  let endpoint: string;
  const requests: { method?: string; target?: string; contentType?: string; body: unknown }[] = [];
  let reply: ClusterReply = ACTIVE_CLUSTER;
  const read = (req: IncomingMessage) =>
    new Promise<string>((ok) => {
      let text = '';
      req.on('data', (c: Buffer) => {
        text += c.toString();
      });
      req.on('end', () => ok(text));
    });

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      requests.push({ method: req.method, target: req.headers['x-amz-target'] as string, contentType: req.headers['content-type'], body: JSON.parse(await read(req)) });
      res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ Clusters: reply }));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'fake-secret-for-the-fake-endpoint' });
  });
  afterAll(async () => {
    await new Promise((ok) => server.close(ok));
  });

  const exact = { method: 'POST', target: 'BaldrApiService.DescribeClusters', contentType: 'application/x-amz-json-1.1', body: { Filters: { clusterIds: [CLUSTER] } } };

  it('the describing backend (outside the VPC) reports the cluster, and cannot sign', async () => {
    requests.length = 0;
    reply = ACTIVE_CLUSTER;
    const described = new CloudHsmDescription({ clusterId: CLUSTER, region: 'eu-west-1', endpoint, tokenLabel: 'hsm1' });
    expect(await described.status()).toMatchObject({ name: 'pkcs11', configured: true, reachable: true, status: 'available', token_label: 'hsm1' });
    expect(requests).toEqual([exact]);
    reply = [{ ClusterId: CLUSTER, State: 'UNINITIALIZED', Hsms: [] }];
    expect(await described.status()).toMatchObject({ reachable: false, status: 'error', reason: `CloudHSM cluster ${CLUSTER} (UNINITIALIZED) has no ACTIVE HSM` });
    await expect(described.sign()).rejects.toThrow(/only describes the CloudHSM cluster/);
  });

  it('the registry: CLOUDHSM_CLUSTER_ID with a module looks the cluster up before connecting to the token', async () => {
    requests.length = 0;
    reply = ACTIVE_CLUSTER;
    const configPath = join(tmp('cloudhsm-registry-cfg-'), 'cloudhsm-pkcs11.cfg');
    // this file's first configuration read: set before the registry loads it
    Object.assign(process.env, {
      KEY_PROVIDER: 'kms',
      KMS_KEY_ID: 'arn:aws:kms:eu-west-1:111122223333:key/00000000-0000-0000-0000-000000000000',
      AWS_REGION: 'eu-west-1',
      PKCS11_MODULE: token.module,
      PKCS11_TOKEN_LABEL: token.tokenLabel,
      PKCS11_PIN: token.pin,
      CLOUDHSM_CLUSTER_ID: CLUSTER,
      CLOUDHSM_ENDPOINT: endpoint,
      CLOUDHSM_CLIENT_CONFIG: configPath,
    });
    const { signingBackend } = await import('../../lib/signing/registry.js');
    const backend = signingBackend('pkcs11')!;
    expect(backend).toBeInstanceOf(Pkcs11Backend);
    try {
      expect(await backend.status()).toMatchObject({ configured: true, reachable: true, status: 'available' });
      expect(requests).toEqual([exact]);
      const written = JSON.parse(readFileSync(configPath, 'utf8')) as { clusters: { cluster: { servers: { hostname: string }[] } }[] };
      expect(written.clusters[0]!.cluster.servers.map((s) => s.hostname)).toEqual(['10.0.1.9', '10.0.2.17']);
    } finally {
      await (backend as Pkcs11Backend).close();
    }
  });
});
