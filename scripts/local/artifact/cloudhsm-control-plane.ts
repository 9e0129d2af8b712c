/**
 * The CloudHSM control plane, stood in (it has no local engine): the one call the service
 * makes, `DescribeClusters` (AWS JSON 1.1, target `BaldrApiService.DescribeClusters`), for
 * the local cluster, whose one HSM is the SoftHSM2 token on the loopback address. Every
 * request is recorded with its target and body so the test setup can assert the exact
 * requests the functions sent; anything else is answered with the error AWS gives for an
 * unknown operation.
 */
import { createServer, type Server } from 'node:http';

export const LOCAL_CLUSTER_ID = 'cluster-localhsmaaaa';

export interface RecordedRequest {
  readonly target: string;
  readonly body: unknown;
}

export interface ControlPlane {
  readonly endpoint: string;
  readonly requests: readonly RecordedRequest[];
  stop(): Promise<void>;
}

export async function startCloudHsmControlPlane(): Promise<ControlPlane> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        body = Buffer.concat(chunks).toString('utf8');
      }
      requests.push({ target, body });
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(value));
      };
      if (target !== 'BaldrApiService.DescribeClusters')
        return json(400, { __type: 'UnknownOperationException', message: `${target} is not served locally` });
      const ids = (body as { Filters?: { clusterIds?: string[] } }).Filters?.clusterIds ?? [LOCAL_CLUSTER_ID];
      json(200, {
        Clusters: ids.includes(LOCAL_CLUSTER_ID)
          ? [
              {
                ClusterId: LOCAL_CLUSTER_ID,
                State: 'ACTIVE',
                HsmType: 'hsm1.medium',
                Hsms: [{ ClusterId: LOCAL_CLUSTER_ID, HsmId: 'hsm-local0000a', EniIp: '127.0.0.1', State: 'ACTIVE', AvailabilityZone: 'us-east-1a' }],
              },
            ]
          : [],
      });
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    stop: () => new Promise((ok) => server.close(() => ok())),
  };
}
