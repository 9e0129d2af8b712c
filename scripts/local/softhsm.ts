/**
 * The local runtime's SoftHSM2 token (DESIGN.md §11): a private SoftHSM2 configuration
 * under DATA_DIR/softhsm/ (never the system's /etc/softhsm), its token directory, and one
 * token labelled PKCS11_TOKEN_LABEL (default `secrets-api`) initialised on first start with
 * a random user PIN and SO PIN kept in DATA_DIR/softhsm/pins.json (mode 0600). Then the
 * configuration the handlers read (lib/config.ts) is set: PKCS11_MODULE, PKCS11_TOKEN_LABEL,
 * PKCS11_PIN, and SOFTHSM2_CONF (read by the SoftHSM2 module itself).
 *
 * Without SoftHSM2 the server still starts: PKCS11_MODULE stays unset, so the pkcs11
 * backend reports itself unavailable with the install command and signing answers 503.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SOFTHSM_MODULE_PATHS = ['/usr/lib/softhsm/libsofthsm2.so', '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so', '/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so', '/usr/local/lib/softhsm/libsofthsm2.so', '/opt/homebrew/lib/softhsm/libsofthsm2.so'];
export const SOFTHSM_INSTALL = 'install SoftHSM2 (Debian/Ubuntu: sudo apt-get install softhsm2; macOS: brew install softhsm) and restart';
export const DEFAULT_TOKEN_LABEL = 'secrets-api';

/** The installed SoftHSM2 PKCS#11 module (SOFTHSM2_MODULE overrides), or undefined. */
export const softHsmModule = (): string | undefined => process.env.SOFTHSM2_MODULE ?? SOFTHSM_MODULE_PATHS.find((p) => existsSync(p));

export interface SoftHsmToken {
  readonly module: string;
  readonly conf: string;
  readonly tokenLabel: string;
  readonly pin: string;
}

export type SoftHsmSetup = { readonly ok: true; readonly token: SoftHsmToken } | { readonly ok: false; readonly reason: string };

/** Where a runtime with this DATA_DIR keeps its SoftHSM2 configuration and PINs. */
export const softHsmPaths = (dataDir: string) => {
  const dir = join(dataDir, 'softhsm');
  return { dir, conf: join(dir, 'softhsm2.conf'), tokens: join(dir, 'tokens'), pins: join(dir, 'pins.json') };
};

function findUtil(): string | undefined {
  for (const p of ['/usr/bin/softhsm2-util', '/usr/local/bin/softhsm2-util', '/opt/homebrew/bin/softhsm2-util']) if (existsSync(p)) return p;
  try {
    return execFileSync('sh', ['-c', 'command -v softhsm2-util'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The token labels SoftHSM2 shows for a configuration. */
function tokenLabels(util: string, conf: string): string[] {
  const out = execFileSync(util, ['--show-slots'], { env: { ...process.env, SOFTHSM2_CONF: conf }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return [...out.matchAll(/^\s*Label:\s*(.*?)\s*$/gm)].map((m) => m[1]!).filter(Boolean);
}

/** Creates or opens the token; returns its settings, or why signing is unavailable. */
export function prepareSoftHsm(dataDir: string, tokenLabel = process.env.PKCS11_TOKEN_LABEL ?? DEFAULT_TOKEN_LABEL): SoftHsmSetup {
  const module = softHsmModule();
  const util = findUtil();
  if (!module || !util) return { ok: false, reason: `SoftHSM2 is not installed: ${SOFTHSM_INSTALL}` };
  const paths = softHsmPaths(dataDir);
  mkdirSync(paths.tokens, { recursive: true, mode: 0o700 });
  if (!existsSync(paths.conf)) {
    writeFileSync(paths.conf, `# SoftHSM2 configuration of this local runtime (scripts/local/softhsm.ts)\ndirectories.tokendir = ${paths.tokens}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`, { mode: 0o600 });
  }
  let pins: { pin: string; so_pin: string };
  if (existsSync(paths.pins)) pins = JSON.parse(readFileSync(paths.pins, 'utf8')) as typeof pins;
  else {
    pins = { pin: randomBytes(12).toString('base64url'), so_pin: randomBytes(12).toString('base64url') };
    writeFileSync(paths.pins, JSON.stringify(pins), { mode: 0o600 });
  }
  try {
    if (!tokenLabels(util, paths.conf).includes(tokenLabel)) {
      execFileSync(util, ['--init-token', '--free', '--label', tokenLabel, '--pin', pins.pin, '--so-pin', pins.so_pin], {
        env: { ...process.env, SOFTHSM2_CONF: paths.conf },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    }
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return { ok: false, reason: `the SoftHSM2 token in ${paths.dir} could not be initialised${stderr ? `: ${stderr}` : ''}` };
  }
  return { ok: true, token: { module, conf: paths.conf, tokenLabel, pin: pins.pin } };
}

/**
 * The start.ts hook: prepares the token and sets the handlers' configuration before they
 * load. Returns a line for the console. An explicitly configured PKCS11_MODULE (e.g. a
 * CloudHSM client, or a deliberately broken path in a test) is left alone.
 */
export function configureLocalSigning(dataDir: string): string {
  if (process.env.PKCS11_MODULE) return `PKCS#11 signing on ${process.env.PKCS11_MODULE} (configured)`;
  const setup = prepareSoftHsm(dataDir);
  if (!setup.ok) return `signing: pkcs11 backend unavailable (${setup.reason}); POST /api/v1/crypto/sign answers 503`;
  Object.assign(process.env, {
    SOFTHSM2_CONF: setup.token.conf,
    PKCS11_MODULE: setup.token.module,
    PKCS11_TOKEN_LABEL: setup.token.tokenLabel,
    PKCS11_PIN: setup.token.pin,
  });
  return `signing: SoftHSM2 token "${setup.token.tokenLabel}" (${setup.token.conf})`;
}
