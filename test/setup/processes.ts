import { type ChildProcess, type SpawnOptions, spawn, spawnSync } from 'node:child_process';

/**
 * Long-lived processes the suite starts (a local runtime, DynamoDB Local), each in a process
 * group of its own, so that whatever it starts in turn (Java, function hosts, Node 22) goes
 * with it: stopping kills the group, and so does every way out of the process that started
 * it (normal exit, vitest's SIGINT/SIGTERM handling, an uncaught error, a failed setup).
 */
const groups = new Set<number>();
let hooked = false;

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: nothing left in the group
  }
}

/** Whether the process `pid` is still there (signal 0 tests without sending). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether any process of the group is still alive (zombies aside: their parent reaps them). */
export function groupAlive(pgid: number): boolean {
  return groupMembers(pgid).length > 0;
}

/** The processes of a group still running, as `pid command` lines (empty when none). */
export function groupMembers(pgid: number): string[] {
  if (process.platform === 'win32') return [];
  const ps = spawnSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' });
  if (ps.error || ps.status !== 0) {
    // no ps here: whether the group still has a process is all that can be said
    try {
      process.kill(-pgid, 0);
      return [`(process group ${pgid}: still has a process; ps is not available to list it)`];
    } catch {
      return [];
    }
  }
  return ps.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([pid, group, stat]) => pid && Number(group) === pgid && !stat?.startsWith('Z'))
    .map(([pid, , , ...args]) => `${pid} ${args.join(' ').slice(0, 400)}`);
}

/** Spawns `command` as the leader of a new process group, killed with the group when this process exits. */
export function spawnGroup(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  if (!hooked) {
    hooked = true;
    // 'exit' runs on process.exit (vitest's own signal handlers end with it) and on a normal end
    process.on('exit', () => {
      for (const pgid of groups) killGroup(pgid, 'SIGKILL');
    });
  }
  const child = spawn(command, args, { ...options, detached: true });
  const pgid = child.pid;
  if (pgid !== undefined) {
    groups.add(pgid);
    // the leader gone, its group may still hold what it started: the stop below checks that
    child.once('exit', () => {
      if (!groupAlive(pgid)) groups.delete(pgid);
    });
  }
  return child;
}

/**
 * Stops a group spawned by spawnGroup: SIGTERM to the leader (which stops what it started and
 * writes its reports), SIGKILL to the whole group after `graceMs`. Returns what was still
 * running in the group after the leader had exited (and was then killed): a leak of the
 * process under test, reported by the caller.
 */
export async function stopGroup(child: ChildProcess, graceMs = 30_000): Promise<string[]> {
  const pgid = child.pid;
  if (pgid === undefined) return [];
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((ok) => child.once('exit', ok));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((ok) => setTimeout(ok, graceMs).unref())]);
  }
  // what the leader started gets a moment to follow it out
  let left = groupMembers(pgid);
  for (let i = 0; i < 25 && left.length > 0; i++) {
    await new Promise((ok) => setTimeout(ok, 200));
    left = groupMembers(pgid);
  }
  killGroup(pgid, 'SIGKILL');
  groups.delete(pgid);
  return left;
}
