/**
 * `tsx scripts/bench/cpu-by-process.ts -- <command...>`: runs the command and says where its
 * CPU went, by kind of process (function environments, DynamoDB Local, the test workers, the
 * type check, the builds, ...). Every second it reads the CPU time of each process in the
 * command's tree from /proc; a process that ends between two reads loses at most its last
 * second, so the total is checked against the command's own figure (getrusage of the children)
 * and the difference printed as "not seen".
 *
 * It measures; it asserts nothing. Use it to decide what to make faster.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resourceUsage } from 'node:process';

const TICKS = 100; // USER_HZ on Linux

interface Seen {
  readonly kind: string;
  cpu: number;
}

/** Programs the suite runs beside its own processes, by executable name. */
const TOOLS = new Set(['slapd', 'pebble', 'softhsm2-util', 'openssl', 'gpg', 'gpg-agent', 'ssh-keygen', 'keytool', 'age', 'minisign', 'oathtool', 'xmlsec1', 'wg', 'ldapsearch']);

/** The kind of a process, from its executable's name, else from the scripts its command line names. */
export function kindOf(cmdline: string): string {
  const exe = cmdline.split(' ')[0]?.split('/').pop() ?? '?';
  if (exe === 'java') return 'DynamoDB Local (java)';
  if (TOOLS.has(exe)) return 'tools (slapd, pebble, openssl, ...)';
  if (/^(postgres|mariadbd?|mysqld)$/.test(exe)) return 'databases';
  if (/^chrom/i.test(exe)) return 'chromium';
  const rules: [RegExp, string][] = [
    [/bootstrap\.mjs/, 'function environments (artifact)'],
    [/\btsc\b|typescript\/bin/, 'type check (tsc)'],
    [/esbuild/, 'esbuild'],
    [/vitest\/dist\/workers|forks\.js|threads\.js|vitest\/dist\/.*worker/, 'vitest workers'],
    [/vitest/, 'vitest main'],
    [/scripts\/local\/start|scripts\/local\/.*runtime/, 'local runtime (gateway, host)'],
    [/fauxqs/, 'fauxqs (S3, SQS)'],
    [/\bcdk\b/, 'cdk'],
  ];
  for (const [re, kind] of rules) if (re.test(cmdline)) return kind;
  // a Node process by the script it runs (the CLI under test, the CDK app, a coverage converter)
  // (the last such argument: tsx runs a script as `node --require …/preflight.cjs --import … script.ts`)
  const script = exe === 'node' ? cmdline.split(' ').filter((a) => /\.(m|c)?[jt]s$/.test(a)).pop() : undefined;
  return script ? `other (node ${script.split('/').slice(-2).join('/')})` : `other (${exe})`;
}

function children(): Map<number, number> {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(name), Number(fields[1]));
    } catch {
      // gone
    }
  }
  return parent;
}

function sample(root: number, seen: Map<number, Seen>): void {
  const parent = children();
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid, hops = 0; p && hops < 64; p = parent.get(p), hops++) if (p === root) return true;
    return false;
  };
  for (const pid of parent.keys()) {
    if (!inTree(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cpu = (Number(fields[11]) + Number(fields[12])) / TICKS;
      let entry = seen.get(pid);
      if (!entry) {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
        entry = { kind: kindOf(cmdline), cpu: 0 };
        seen.set(pid, entry);
      }
      entry.cpu = Math.max(entry.cpu, cpu);
    } catch {
      // gone between the two reads
    }
  }
}

const dash = process.argv.indexOf('--');
const command = dash >= 0 ? process.argv.slice(dash + 1) : process.argv.slice(2);
if (command.length === 0) {
  process.stderr.write('usage: tsx scripts/bench/cpu-by-process.ts -- <command> [args...]\n');
  process.exit(2);
}
const started = Date.now();
const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit' });
const seen = new Map<number, Seen>();
const timer = setInterval(() => sample(child.pid!, seen), 1000);
child.on('exit', (code) => {
  clearInterval(timer);
  const usage = resourceUsage();
  // this process's own time is not the command's
  const total = (usage.userCPUTime + usage.systemCPUTime) / 1e6;
  const byKind = new Map<string, { cpu: number; processes: number }>();
  for (const s of seen.values()) {
    const k = byKind.get(s.kind) ?? { cpu: 0, processes: 0 };
    k.cpu += s.cpu;
    k.processes++;
    byKind.set(s.kind, k);
  }
  const sum = [...byKind.values()].reduce((a, b) => a + b.cpu, 0);
  const lines = [...byKind].sort((a, b) => b[1].cpu - a[1].cpu).map(([kind, v]) => `${v.cpu.toFixed(0).padStart(7)} CPU-s ${String(v.processes).padStart(6)} processes  ${kind}`);
  const childrenCpu = readChildrenCpu();
  process.stdout.write(
    `\ncpu-by-process: ${((Date.now() - started) / 1000).toFixed(0)} s wall, exit ${code}\n${lines.join('\n')}\n${sum.toFixed(0).padStart(7)} CPU-s seen; the command's own figure ${childrenCpu.toFixed(0)} CPU-s (not seen: ${(childrenCpu - sum).toFixed(0)}); this sampler ${total.toFixed(0)} CPU-s\n`,
  );
  process.exit(code ?? 1);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));

/** CPU time of this process's waited-for children (cutime + cstime). */
function readChildrenCpu(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / TICKS;
}
