import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

/**
 * What the tool routes (lib/tools) reach in the embedded runtimes, started by
 * scripts/local/start.ts for the source and the artifact runtime alike:
 *
 * - a k-anonymity range server in the Have I Been Pwned model (`GET /range/<5 hex>`,
 *   `SUFFIX:COUNT` lines, padded with count-0 entries when `Add-Padding: true`) over a small
 *   corpus of known-breached test passwords; every request it receives (path and headers) is
 *   appended to `<dataDir>/breach-range/requests.jsonl`, so a test can assert that only the
 *   prefix arrived;
 * - the IPFS blockstore directory (`<dataDir>/ipfs`), used instead of a Kubo node;
 * - TOOLS_ALLOW_LOOPBACK, so the routes may reach these and a local slapd.
 */
export const BREACH_CORPUS: Readonly<Record<string, number>> = {
  password: 9_659_365,
  '123456': 37_359_195,
  'P@ssw0rd': 112_434,
  letmein: 583_190,
  'correct horse battery staple': 384,
};

const PADDED_LINES = 64;

/** The environment the tool routes read (added to each artifact function's environment too). */
export const LOCAL_TOOLS_ENV = ['BREACH_RANGE_URL', 'IPFS_BLOCKSTORE_DIR', 'TOOLS_ALLOW_LOOPBACK'] as const;

export async function startLocalTools(dataDir: string): Promise<() => void> {
  const corpus = Object.entries(BREACH_CORPUS).map(([pw, count]) => ({ hash: createHash('sha1').update(pw).digest('hex').toUpperCase(), count }));
  const logDir = join(dataDir, 'breach-range');
  mkdirSync(logDir, { recursive: true });
  const server = createServer((req, res) => {
    appendFileSync(join(logDir, 'requests.jsonl'), `${JSON.stringify({ method: req.method, url: req.url, headers: req.headers })}\n`);
    const m = /^\/range\/([0-9A-Fa-f]{5})$/.exec(req.url ?? '');
    if (req.method !== 'GET' || !m) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('The hash prefix was not in a valid format');
      return;
    }
    const prefix = m[1]!.toUpperCase();
    const lines = corpus.filter((e) => e.hash.startsWith(prefix)).map((e) => `${e.hash.slice(5)}:${e.count}`);
    if (String(req.headers['add-padding']).toLowerCase() === 'true') {
      while (lines.length < PADDED_LINES) lines.push(`${randomBytes(18).toString('hex').slice(0, 35).toUpperCase()}:0`);
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  process.env.BREACH_RANGE_URL ??= `http://127.0.0.1:${port}/range/`;
  process.env.IPFS_BLOCKSTORE_DIR ??= join(dataDir, 'ipfs');
  process.env.TOOLS_ALLOW_LOOPBACK ??= '1';
  return () => {
    server.close();
    server.closeAllConnections();
  };
}
