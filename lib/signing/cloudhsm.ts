import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CloudHSMV2Client, DescribeClustersCommand, type DescribeClustersCommandOutput } from '@aws-sdk/client-cloudhsm-v2';
import { KEY_SPECS, SIGNING_ALGORITHMS } from './algorithms.js';
import { BackendUnavailable, type BackendStatus, type GeneratedKey, type SigningBackend } from './backend.js';

/**
 * AWS CloudHSM for the pkcs11 backend (lib/signing/pkcs11.ts) in Lambda.
 *
 * The Client SDK 5 PKCS#11 library connects to the HSMs listed in its configuration file.
 * A configuration baked into the layer names fixed addresses, which go stale when an HSM is
 * replaced. Instead, before the library is initialised (the backend's `prepare` hook, run
 * on every (re)connection), the function asks the CloudHSM API for the cluster's HSMs
 * (DescribeClusters, IAM `cloudhsm:DescribeClusters`) and writes the configuration with the
 * ENI address of every ACTIVE one (TCP 2223; the security group allows 2223-2225). /opt is
 * read-only in Lambda, so the file goes to CLOUDHSM_CLIENT_CONFIG under /tmp, where the
 * layer's /opt/cloudhsm/etc/cloudhsm-pkcs11.cfg links to (docs/operations.md, "CloudHSM").
 *
 * The function that only describes the backends (GET /api/v1/crypto/backends) runs outside
 * the VPC: `CloudHsmDescription` reports the cluster's state from the same API instead of
 * opening a PKCS#11 session.
 */

/** The HSM port the client connects to (2224-2225 are used by the SDK for its other channels). */
const HSM_PORT = 2223;
/** The cluster's issuing certificate, shipped in the layer (a trust anchor never taken from an API). */
const CUSTOMER_CA_FILE = '/opt/cloudhsm/etc/customerCA.crt';

/** The one call made: a client, or a small recording fake in tests. */
export interface DescribeClustersClient {
  send(command: DescribeClustersCommand): Promise<DescribeClustersCommandOutput>;
}

interface CloudHsmOptions {
  readonly clusterId: string;
  readonly region: string;
  /** Another CloudHSM API endpoint (CLOUDHSM_ENDPOINT: a VPC interface endpoint, a test server). */
  readonly endpoint?: string;
  /** Where the client configuration is written (CLOUDHSM_CLIENT_CONFIG). */
  readonly configPath: string;
  readonly caFile?: string;
  readonly client?: DescribeClustersClient;
}

interface ClusterView {
  readonly state: string;
  readonly hsms: readonly { readonly id: string; readonly ip?: string; readonly state: string; readonly availabilityZone?: string }[];
}

/** A failed lookup, in words safe to show: the AWS error's name only (its message may carry ARNs). */
class CloudHsmDiscoveryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CloudHsmDiscoveryError';
  }
}

function clientOf(opts: Pick<CloudHsmOptions, 'region' | 'endpoint' | 'client'>): DescribeClustersClient {
  return opts.client ?? new CloudHSMV2Client({ region: opts.region, ...(opts.endpoint ? { endpoint: opts.endpoint } : {}) });
}

/** DescribeClusters for exactly this cluster. */
export async function describeCluster(client: DescribeClustersClient, clusterId: string): Promise<ClusterView> {
  let out: DescribeClustersCommandOutput;
  try {
    out = await client.send(new DescribeClustersCommand({ Filters: { clusterIds: [clusterId] } }));
  } catch (error) {
    throw new CloudHsmDiscoveryError(`DescribeClusters for ${clusterId} failed (${(error as Error).name || 'error'})`, { cause: error });
  }
  const cluster = (out.Clusters ?? []).find((c) => c.ClusterId === clusterId);
  if (!cluster) throw new CloudHsmDiscoveryError(`CloudHSM cluster ${clusterId} was not found in this account and region`);
  return {
    state: cluster.State ?? 'UNKNOWN',
    hsms: (cluster.Hsms ?? []).map((h) => ({ id: h.HsmId ?? '?', ip: h.EniIp, state: h.State ?? 'UNKNOWN', availabilityZone: h.AvailabilityZone })),
  };
}

/** The addresses to connect to: every ACTIVE HSM's ENI address, sorted. */
function activeAddresses(cluster: ClusterView): string[] {
  return cluster.hsms
    .filter((h) => h.state === 'ACTIVE' && h.ip)
    .map((h) => h.ip!)
    .sort();
}

/**
 * The Client SDK 5 PKCS#11 configuration (cloudhsm-pkcs11.cfg) for these HSMs, in the shape
 * `configure-pkcs11 -a <ips> --log-type term` writes: logs go to stderr (CloudWatch); the
 * log file is named because the SDK expects the field, and unused with `term`.
 */
function clientConfig(addresses: readonly string[], files: { readonly caFile?: string; readonly logFile: string }): object {
  return {
    clusters: [
      {
        type: 'hsm1',
        cluster: {
          hsm_ca_file: files.caFile ?? CUSTOMER_CA_FILE,
          servers: addresses.map((hostname) => ({ hostname, port: HSM_PORT, enable: true })),
        },
      },
    ],
    logging: { log_type: 'term', log_file: files.logFile, log_level: 'warn', log_interval: 'never' },
  };
}

/**
 * The pkcs11 backend's `prepare` hook: looks the cluster's HSMs up and (re)writes the client
 * configuration, atomically (a half-written file is never read). Refuses a cluster without
 * an ACTIVE HSM: the library would only time out. Returns the addresses written.
 */
export function cloudHsmPreparer(opts: CloudHsmOptions): () => Promise<string[]> {
  let client: DescribeClustersClient | undefined;
  return async () => {
    client ??= clientOf(opts);
    const cluster = await describeCluster(client, opts.clusterId);
    const addresses = activeAddresses(cluster);
    if (addresses.length === 0) {
      throw new CloudHsmDiscoveryError(`CloudHSM cluster ${opts.clusterId} (${cluster.state}) has no ACTIVE HSM (${cluster.hsms.length} in all)`);
    }
    mkdirSync(dirname(opts.configPath), { recursive: true });
    const temp = `${opts.configPath}.${process.pid}.tmp`;
    const config = clientConfig(addresses, { caFile: opts.caFile, logFile: join(dirname(opts.configPath), 'cloudhsm-pkcs11.log') });
    writeFileSync(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, opts.configPath);
    return addresses;
  };
}

/**
 * The pkcs11 backend as the describing function sees it (CLOUDHSM_CLUSTER_ID set, no
 * PKCS11_MODULE: outside the VPC, without the layer): its status comes from the CloudHSM API,
 * `reachable` meaning at least one HSM is ACTIVE. Key specs and algorithms are the ones this
 * service drives through PKCS#11 (the signing function checks the token's mechanisms when it
 * connects). It cannot sign: every operation is unavailable here.
 */
export class CloudHsmDescription implements SigningBackend {
  readonly name = 'pkcs11';
  private client: DescribeClustersClient | undefined;

  constructor(private readonly opts: Omit<CloudHsmOptions, 'configPath' | 'caFile'> & { readonly tokenLabel: string }) {}

  get tokenLabel(): string {
    return this.opts.tokenLabel;
  }

  async status(): Promise<BackendStatus> {
    const base = {
      name: this.name,
      configured: true,
      token_label: this.opts.tokenLabel,
      key_specs: [...KEY_SPECS],
      algorithms: [...SIGNING_ALGORITHMS],
    };
    try {
      this.client ??= clientOf(this.opts);
      const cluster = await describeCluster(this.client, this.opts.clusterId);
      const active = activeAddresses(cluster).length;
      if (active > 0) return { ...base, reachable: true, status: 'available' };
      return { ...base, reachable: false, status: 'error', reason: `CloudHSM cluster ${this.opts.clusterId} (${cluster.state}) has no ACTIVE HSM` };
    } catch (error) {
      return {
        ...base,
        reachable: false,
        status: 'error',
        reason: error instanceof CloudHsmDiscoveryError ? error.message : 'the CloudHSM cluster could not be described',
      };
    }
  }

  private refuse(): never {
    throw new BackendUnavailable(this.name, 'this function only describes the CloudHSM cluster; signing runs in the signing functions');
  }

  async generateKey(): Promise<GeneratedKey> {
    this.refuse();
  }

  async sign(): Promise<Buffer> {
    this.refuse();
  }

  async destroyKey(): Promise<void> {
    this.refuse();
  }
}
