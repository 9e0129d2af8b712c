/**
 * The local S3 engine of both runtimes: fauxqs (already the local SQS engine; it serves the
 * S3 API too) with file-based object storage under `<DATA_DIR>/s3`, so the same
 * @aws-sdk/client-s3 code (lib/documents/storage.ts) runs here and in AWS, and a test can read
 * the stored bytes. fauxqs needs Node 22 (node:sqlite), so it runs in a Node 22 child process
 * (scripts/local/node22.ts) in both runtimes. docs/operations.md says why fauxqs, not s3rver.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { node22 } from './node22.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The documents bucket's name in the source runtime (the artifact runtime takes it from the template). */
export const LOCAL_DOCUMENTS_BUCKET = 'secrets-api-documents';

export interface LocalS3 {
  readonly endpoint: string;
  readonly storageDir: string;
  stop(): Promise<void>;
}

// the child: start fauxqs, create the buckets, print its address; stop with the parent
const CHILD = `
const { startFauxqs } = await import(process.env.LOCAL_S3_ENTRY);
const cfg = JSON.parse(process.env.LOCAL_S3_CONFIG);
const server = await startFauxqs({ port: 0, host: '127.0.0.1', logger: false, s3StorageDir: cfg.dir });
for (const name of cfg.buckets) { try { server.createBucket(name); } catch {} }
process.stdout.write(JSON.stringify({ address: server.address }) + '\\n');
const stop = () => server.stop().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
`;

export async function startLocalS3(opts: { readonly dataDir: string; readonly buckets: readonly string[] }): Promise<LocalS3> {
  const storageDir = join(opts.dataDir, 's3');
  mkdirSync(storageDir, { recursive: true, mode: 0o700 });
  const child: ChildProcess = spawn(node22(), ['--no-warnings', '--input-type=module', '-e', CHILD], {
    env: {
      ...process.env,
      LOCAL_S3_ENTRY: pathToFileURL(join(ROOT, 'node_modules', 'fauxqs', 'dist', 'app.js')).href,
      LOCAL_S3_CONFIG: JSON.stringify({ dir: storageDir, buckets: opts.buckets }),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const address = await new Promise<string>((ok, fail) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = /^\{.*\}$/m.exec(out);
      if (line) ok((JSON.parse(line[0]) as { address: string }).address);
    });
    child.once('exit', (code) => fail(new Error(`the local S3 engine (fauxqs) exited with ${code} before it started`)));
  });
  return {
    endpoint: address.replace('localhost', '127.0.0.1'),
    storageDir,
    stop: () =>
      new Promise<void>((ok) => {
        if (child.exitCode !== null) return ok();
        child.once('exit', () => ok());
        child.kill('SIGTERM');
        setTimeout(ok, 3000).unref();
      }),
  };
}
