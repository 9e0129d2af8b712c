/**
 * `npm test`'s pretest: what the test suite needs beyond node_modules, checked before it
 * runs, so a fresh machine gets a clear answer instead of a failure deep in a test file.
 *
 * - Command-line tools the tests and the local runtime run (each with the Debian package that
 *   provides it): missing ones are installed with `apt-get update && apt-get install -y --no-install-recommends …` (only what the tests use: no kernel image, no printer tools)
 *   when running as root on a system with apt-get; otherwise it stops with the exact command.
 * - PostgreSQL (127.0.0.1:5432, user postgres without password) and MariaDB
 *   (127.0.0.1:3306, root without password), which the database-lease tests use: a server
 *   that is installed but stopped is started as .ci/run always did (root only); otherwise
 *   it stops and says how.
 *
 * SKIP_PREREQUISITES=1 skips every check. README "Set-up" lists the same prerequisites.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { softHsmModule } from '../local/softhsm.js';

interface Tool {
  readonly command: string;
  /** The Debian package that provides it. */
  readonly pkg: string;
  readonly usedBy: string;
  /** A problem with the installed tool (too old, a part missing), if any. */
  readonly problem?: () => string | undefined;
}

function javaMajor(): number | undefined {
  const out = spawnSync('java', ['-version'], { encoding: 'utf8' });
  const m = /version "(?:1\.)?(\d+)/.exec(`${out.stderr}${out.stdout}`);
  return m ? Number(m[1]) : undefined;
}

const TOOLS: readonly Tool[] = [
  {
    command: 'java',
    pkg: 'openjdk-17-jre-headless',
    usedBy: 'DynamoDB Local (Java 17 or newer)',
    problem: () => {
      const major = javaMajor();
      return major !== undefined && major >= 17 ? undefined : `java ${major ?? '?'} is older than 17`;
    },
  },
  { command: 'keytool', pkg: 'openjdk-17-jre-headless', usedBy: 'PKCS#12 keystore checks (test/api/credentials-formats)' },
  {
    command: 'softhsm2-util',
    pkg: 'softhsm2',
    usedBy: 'the local PKCS#11 signing token (scripts/local/softhsm.ts, test/api/signing)',
    problem: () => (softHsmModule() ? undefined : 'softhsm2-util is there but libsofthsm2.so is not'),
  },
  { command: 'pebble', pkg: 'pebble', usedBy: 'the ACME test server (test/api/acme)' },
  { command: 'openssl', pkg: 'openssl', usedBy: 'certificate, key and CMS checks (test/api/*)' },
  { command: 'gpg', pkg: 'gnupg', usedBy: 'OpenPGP key checks (test/api/keys-kinds)' },
  { command: 'gpg-agent', pkg: 'gnupg', usedBy: 'importing OpenPGP secret keys (test/api/keys-kinds)' },
  { command: 'ssh-keygen', pkg: 'openssh-client', usedBy: 'SSH key checks (test/api/keys-kinds)' },
  { command: 'minisign', pkg: 'minisign', usedBy: 'minisign signature checks (test/api/keys-kinds)' },
  { command: 'oathtool', pkg: 'oathtool', usedBy: 'TOTP codes from another implementation (test/api/interop-tools)' },
  { command: 'age', pkg: 'age', usedBy: 'age encryption with exported keys (test/api/interop-tools)' },
  { command: 'xmlsec1', pkg: 'xmlsec1', usedBy: 'SAML assertions signed by another implementation (test/api/federation-saml)' },
  { command: 'wg', pkg: 'wireguard-tools', usedBy: 'WireGuard public keys (test/api/interop-tools)' },
  { command: 'slapd', pkg: 'slapd', usedBy: 'the throwaway LDAP directory of the LDAP tests (test/helpers/slapd.ts, test/api/tools-ldap)' },
  { command: 'ldapsearch', pkg: 'ldap-utils', usedBy: 'seeding and reading that directory with another client (test/helpers/slapd.ts)' },
  {
    command: 'chromium-headless-shell',
    pkg: 'chromium-headless-shell',
    usedBy: 'the page tests in a real browser: passkeys with a virtual authenticator, the SRP page, OAuth consent (test/helpers/browser.ts)',
  },
];

const has = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
const isRoot = (): boolean => process.getuid?.() === 0;

/** The tools that are missing or unfit, with why. */
function toolProblems(): { tool: Tool; problem: string }[] {
  return TOOLS.flatMap((tool) => {
    if (!has(tool.command)) return [{ tool, problem: `${tool.command} not found` }];
    const problem = tool.problem?.();
    return problem ? [{ tool, problem }] : [];
  });
}

function aptInstall(pkgs: readonly string[]): boolean {
  process.stderr.write(`prerequisites: installing ${pkgs.join(' ')} (apt-get)\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  if (update.status !== 0) return false;
  return spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], { stdio: 'inherit', env }).status === 0;
}

interface Server {
  readonly name: string;
  readonly port: number;
  /** undefined: reachable and the suite's login works; otherwise why not. */
  readonly check: () => Promise<string | undefined>;
  /** The command that starts an installed, stopped server (.ci/run's), or undefined when not installed. */
  readonly startCommand: () => string[] | undefined;
  readonly install: string;
}

const refused = (error: unknown) => ['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH'].includes((error as { code?: string }).code ?? '');

const SERVERS: readonly Server[] = [
  {
    name: 'PostgreSQL',
    port: 5432,
    async check() {
      const c = new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 3000 });
      c.on('error', () => undefined);
      try {
        await c.connect();
        await c.query('SELECT 1');
        return undefined;
      } catch (error) {
        return refused(error)
          ? 'not listening on 127.0.0.1:5432'
          : `user postgres without a password is refused (${(error as Error).message}); the tests need \`host all all 127.0.0.1/32 trust\` in pg_hba.conf`;
      } finally {
        await c.end().catch(() => undefined);
      }
    },
    startCommand() {
      if (!has('pg_ctlcluster') || !existsSync('/etc/postgresql')) return undefined;
      const version = readdirSync('/etc/postgresql').sort().at(-1);
      return version ? ['pg_ctlcluster', '--skip-systemctl-redirect', version, 'main', 'start'] : undefined;
    },
    install: 'apt-get install -y --no-install-recommends postgresql, allow `host all all 127.0.0.1/32 trust` in pg_hba.conf, then start it (pg_ctlcluster <version> main start)',
  },
  {
    name: 'MariaDB',
    port: 3306,
    async check() {
      try {
        const c = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root', password: '', connectTimeout: 3000 });
        await c.query('SELECT 1');
        await c.end();
        return undefined;
      } catch (error) {
        return refused(error)
          ? 'not listening on 127.0.0.1:3306'
          : `root without a password is refused (${(error as Error).message}); the tests log in as root with an empty password over TCP`;
      }
    },
    startCommand: () => (existsSync('/usr/sbin/mariadbd') ? ['start-stop-daemon', '--start', '--oknodo', '--background', '--exec', '/usr/sbin/mariadbd'] : undefined),
    install: 'apt-get install -y --no-install-recommends mariadb-server, give root an empty password for TCP logins from 127.0.0.1, then start it',
  },
];

async function serverProblems(): Promise<string[]> {
  const problems: string[] = [];
  for (const server of SERVERS) {
    let problem = await server.check();
    if (problem?.startsWith('not listening')) {
      const start = server.startCommand();
      if (!start) {
        problems.push(`${server.name}: ${problem} and not installed: ${server.install}`);
        continue;
      }
      if (!isRoot()) {
        problems.push(`${server.name}: ${problem}; start it with: sudo ${start.join(' ')}`);
        continue;
      }
      process.stderr.write(`prerequisites: starting ${server.name}: ${start.join(' ')}\n`);
      spawnSync(start[0]!, start.slice(1), { stdio: 'inherit' });
      for (let i = 0; i < 30 && problem?.startsWith('not listening'); i++) {
        await new Promise((r) => setTimeout(r, 1000));
        problem = await server.check();
      }
    }
    if (problem) problems.push(`${server.name}: ${problem}`);
  }
  return problems;
}

async function main(): Promise<number> {
  if (process.env.SKIP_PREREQUISITES === '1') {
    process.stderr.write('prerequisites: skipped (SKIP_PREREQUISITES=1)\n');
    return 0;
  }
  const problems: string[] = [];
  let missing = toolProblems();
  if (missing.length > 0) {
    const pkgs = [...new Set(missing.map((m) => m.tool.pkg))];
    const lines = missing.map((m) => `  ${m.problem}: needed by ${m.tool.usedBy} (Debian package ${m.tool.pkg})`);
    if (isRoot() && has('apt-get')) {
      if (!aptInstall(pkgs)) problems.push(`apt-get install -y --no-install-recommends ${pkgs.join(' ')} failed`);
      missing = toolProblems();
      if (missing.length > 0) problems.push(...missing.map((m) => `${m.problem} after installing ${m.tool.pkg}`));
    } else if (has('apt-get')) {
      problems.push(`missing tools:\n${lines.join('\n')}\nInstall them with:\n  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${pkgs.join(' ')}`);
    } else {
      problems.push(`missing tools (no apt-get here: install the equivalents with your package manager):\n${lines.join('\n')}`);
    }
  }
  problems.push(...(await serverProblems()));
  if (problems.length > 0) {
    process.stderr.write(`prerequisites of npm test are not met (README "Set-up"; SKIP_PREREQUISITES=1 skips this check):\n- ${problems.join('\n- ')}\n`);
    return 1;
  }
  process.stderr.write(`prerequisites: ok (${[...new Set(TOOLS.map((t) => t.command))].join(', ')}; PostgreSQL and MariaDB on 127.0.0.1)\n`);
  return 0;
}

process.exitCode = await main();
