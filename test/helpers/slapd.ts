import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/local/ports.js';

/**
 * A real OpenLDAP server (Debian `slapd`) for the LDAP tests: a throwaway slapd.conf (mdb
 * backend, core/cosine/inetorgperson/nis schemas) in a temp directory, on a free loopback
 * port, run in the foreground and killed by stop(). `ldapadd` (ldap-utils) seeds the base.
 */
export const SLAPD = '/usr/sbin/slapd';
export const SUFFIX = 'dc=example,dc=test';
export const ROOT_DN = `cn=admin,${SUFFIX}`;

export interface Slapd {
  readonly url: string;
  readonly port: number;
  ldapadd(ldif: string): void;
  /** `ldapsearch` output (LDIF) as the root DN: an independent client's view. */
  ldapsearch(base: string, filter: string, ...attrs: string[]): string;
  stop(): Promise<void>;
}

export async function startSlapd(rootPassword: string): Promise<Slapd> {
  if (!existsSync(SLAPD)) throw new Error('slapd is not installed: apt-get install -y slapd ldap-utils');
  const dir = mkdtempSync(join(tmpdir(), 'slapd-'));
  mkdirSync(join(dir, 'db'));
  const conf = join(dir, 'slapd.conf');
  writeFileSync(
    conf,
    [
      ...['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include /etc/ldap/schema/${s}.schema`),
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      `pidfile ${join(dir, 'slapd.pid')}`,
      'database mdb',
      `suffix "${SUFFIX}"`,
      `rootdn "${ROOT_DN}"`,
      `rootpw ${rootPassword}`,
      `directory ${join(dir, 'db')}`,
      'maxsize 16777216',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const proc: ChildProcess = spawn(SLAPD, ['-f', conf, '-h', `${url}/`, '-d', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const bind = ['-x', '-H', url, '-D', ROOT_DN, '-w', rootPassword];
  for (let i = 0; ; i++) {
    try {
      execFileSync('ldapsearch', [...bind, '-b', '', '-s', 'base', '-LLL', '(objectClass=*)'], { stdio: 'pipe' });
      break;
    } catch {
      if (i > 100 || proc.exitCode !== null) throw new Error(`slapd did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const server: Slapd = {
    url,
    port,
    ldapadd: (ldif) => void execFileSync('ldapadd', bind, { input: ldif, stdio: ['pipe', 'pipe', 'pipe'] }),
    ldapsearch: (base, filter, ...attrs) =>
      execFileSync('ldapsearch', [...bind, '-b', base, '-LLL', filter, ...attrs], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        if (proc.exitCode === null) proc.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  server.ldapadd(
    `dn: ${SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\ndn: ou=people,${SUFFIX}\nobjectClass: organizationalUnit\nou: people\n`,
  );
  return server;
}
