import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitForDynamo } from '../../scripts/local/dynamodb.js';
import { freePort } from '../../scripts/local/ports.js';
import type { TestProject } from 'vitest/node';
import { groupMembers, spawnGroup, stopGroup } from '../setup/processes.js';
import { startRuntime as startSuiteRuntime } from '../setup/runtime.js';

/**
 * No process outlives the one that started it: the local runtime (`npm start`,
 * scripts/local/start.ts) takes DynamoDB Local (a Java process) with it on every way out,
 * and the suite's own stop (test/setup/processes.ts) leaves nothing of a process group.
 * Each runtime here is its own process group, so what it started is found by group.
 */
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await stopGroup(c, 1000);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function startRuntime(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'secrets-api-processes-'));
  dirs.push(dataDir);
  const child = spawnGroup(process.execPath, ['--import', 'tsx', resolve('scripts/local/start.ts')], {
    env: { ...process.env, DATA_DIR: dataDir, DYNAMODB_IN_MEMORY: '1', NODE_NO_WARNINGS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdout!.resume();
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  return { child, pgid: child.pid!, exited, stderr: () => stderr };
}

async function until<T>(probe: () => T | undefined, what: string, timeoutMs = 120_000): Promise<T> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; ) {
    const found = probe();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const holding = (port: number, host: string) =>
  new Promise<Server>((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(port, host, () => ok(s));
  });

describe('the local runtime leaves no process behind', () => {
  it('stopped (SIGTERM) while it starts, it takes its DynamoDB Local (Java) with it', async () => {
    const dynamoPort = await freePort();
    const rt = await startRuntime({ PORT: String(await freePort()), DYNAMODB_PORT: String(dynamoPort) });
    const java = await until(() => groupMembers(rt.pgid).find((p) => /DynamoDBLocal/.test(p)), 'DynamoDB Local (java) in the runtime group');
    const javaPid = Number(java.split(' ')[0]);
    // up and serving (past its start-up output, so nothing but a kill ends it)
    await waitForDynamo(`http://127.0.0.1:${dynamoPort}`, 120_000);
    process.kill(rt.pgid, 'SIGTERM');
    await rt.exited;
    // the group's only members were the runtime and what it started: nothing may be left
    const left = await until(() => (groupMembers(rt.pgid).length === 0 ? [] : undefined), 'the runtime group to empty', 10_000).catch(() =>
      groupMembers(rt.pgid),
    );
    expect(left, `left running after the runtime exited (DynamoDB Local was pid ${javaPid})`).toEqual([]);
  }, 300_000); // a hang guard: the runtime and its JVM start slowly on a loaded machine

  for (const variable of ['PORT', 'DYNAMODB_PORT'] as const) {
    it(`answers ${variable} in use with one line naming ${variable}, and starts nothing`, async () => {
      const busy = await freePort();
      const holder = await holding(busy, variable === 'PORT' ? '127.0.0.1' : '0.0.0.0');
      try {
        const other = String(await freePort());
        const rt = await startRuntime(
          variable === 'PORT' ? { PORT: String(busy), DYNAMODB_PORT: other } : { PORT: other, DYNAMODB_PORT: String(busy) },
        );
        expect(await rt.exited).toBe(1);
        const lines = rt.stderr().trim().split('\n');
        expect(lines, rt.stderr()).toHaveLength(1);
        expect(lines[0]).toContain(`set ${variable} to a free port`);
        expect(lines[0]).toContain(String(busy));
        expect(groupMembers(rt.pgid)).toEqual([]);
      } finally {
        await new Promise((r) => holder.close(r));
      }
    });
  }
});

describe("the suite's process-group stop (test/setup/processes.ts)", () => {
  it('reports and kills what a stopped process left running in its group', async () => {
    // the shell exits on SIGTERM; the sleep it put in the background stays, as a leaked child would
    const child = spawnGroup('sh', ['-c', 'sleep 300 & wait'], { stdio: 'ignore' });
    children.push(child);
    await until(() => (groupMembers(child.pid!).some((p) => /sleep 300/.test(p)) ? true : undefined), 'the background sleep', 10_000);
    const left = await stopGroup(child, 5000);
    expect(left.some((p) => /sleep 300/.test(p))).toBe(true);
    expect(groupMembers(child.pid!)).toEqual([]);
  });
});

describe("the suite's runtime setup (test/setup/runtime.ts) on a runtime that does not start", () => {
  // the data directory the setup makes for the runtime that fails is removed with the test's own
  const project = { provide: (key: string, value: unknown) => key === 'dataDir' && dirs.push(value as string) } as unknown as TestProject;
  const attempt = async (env: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'secrets-api-planted-'));
    dirs.push(dir);
    const causes = join(dir, 'causes.txt');
    const before = process.env.SUITE_FAILURE_FILE;
    process.env.SUITE_FAILURE_FILE = causes;
    // what the setup prints is kept here, not in the passing run's output (a planted "FAIL" line there reads as a real one)
    let printed = '';
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed += chunk.toString();
      return true;
    });
    try {
      const error = await startSuiteRuntime(project, { artifact: false, env }).then(
        () => undefined,
        (e: Error) => e,
      );
      return { error, recorded: readFileSync(causes, 'utf8'), printed, dir };
    } finally {
      stderr.mockRestore();
      if (before === undefined) delete process.env.SUITE_FAILURE_FILE;
      else process.env.SUITE_FAILURE_FILE = before;
    }
  };

  it('names the cause in its first line when the runtime exits (a planted failure: DATA_DIR is a file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'secrets-api-planted-file-'));
    dirs.push(dir);
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, '');
    const { error, recorded, printed } = await attempt({ DATA_DIR: file });
    expect(error?.message.split('\n')[0]).toMatch(/^local source runtime exited \(code 1\) before listening: .*(ENOTDIR|EEXIST).*not-a-directory/);
    expect(recorded.trim()).toBe(error?.message);
    // after the start's progress lines, the run's first FAIL line is the cause, then the runtime's log tail
    expect(printed.split('\n').find((l) => l.startsWith('FAIL'))).toBe(`FAIL ${error?.message}`);
    expect(printed).toContain('--- the last 40 lines of its output');
  });

  it('names the step that took too long, and the variable that gives it more time', async () => {
    // the setup's own clock (read in this process), not the runtime's
    process.env.RUNTIME_STEP_TIMEOUT_S = '0.001';
    const { error } = await attempt({}).finally(() => delete process.env.RUNTIME_STEP_TIMEOUT_S);
    expect(error?.message).toMatch(
      /^local source runtime did not start: ".+" took more than 0\.001 s \(set RUNTIME_STEP_TIMEOUT_S to wait longer\)$/,
    );
  });
});
