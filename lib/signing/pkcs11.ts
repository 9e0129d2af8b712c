import { createHash, createPublicKey } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Handle, Mechanism, PKCS11, RsaPSS, Template } from 'pkcs11js';
import { p256, p384 } from '@noble/curves/nist.js';
import { count, METRIC } from '../core/metrics.js';
import { ALGORITHMS, KEY_SPECS, PSS_SALT_LENGTH, SIGNING_ALGORITHMS, rsaBits, type KeySpec, type SigningAlgorithm } from './algorithms.js';
import {
  BackendUnavailable,
  DeviceError,
  UnsupportedKeySpec,
  type BackendStatus,
  type GeneratedKey,
  type KeyRef,
  type SigningBackend,
} from './backend.js';

/**
 * The `pkcs11` signing backend on pkcs11js: CloudHSM's PKCS#11 library in AWS, SoftHSM2
 * locally. Keys are generated inside the token (sensitive, never extractable) and found
 * by label; the token itself is found by its label, never by slot number (SoftHSM
 * renumbers slots after init).
 *
 * One module load and one pool of logged-in sessions per process, reused across warm
 * invocations; sessions are opened on demand up to PKCS11_POOL_SIZE, so a Lambda
 * instance (one request at a time) holds one. A PKCS#11 session runs one operation at a
 * time, so a request holds a session from the pool for its SignInit + Sign. A device error fails that request (502,
 * never retried here) and marks the connection broken: the next request finalizes the
 * module once the in-flight operations have drained and reconnects (initialize, find the
 * token, open sessions, log in).
 */

/**
 * pkcs11js is a native addon delivered by the HSM layer in AWS: it is loaded on first use,
 * never at module load, so a function without the layer (every non-signing route that
 * imports the credential registry) still starts.
 */
const requireNative = createRequire(import.meta.url);
let native: typeof import('pkcs11js') | undefined;
const pkcs11js = new Proxy({} as typeof import('pkcs11js'), {
  get: (_t, prop) => (native ??= requireNative('pkcs11js') as typeof import('pkcs11js'))[prop as keyof typeof import('pkcs11js')],
});
const lazy = <T>(make: () => T): (() => T) => {
  let value: T | undefined;
  return () => (value ??= make());
};

// PKCS#11 v3.0 constants that pkcs11js 2.1 does not name.
const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;
const CKM_EDDSA = 0x1057;

/** DER OIDs for CKA_EC_PARAMS. */
const EC_PARAMS: Partial<Record<KeySpec, Buffer>> = {
  EC_P256: Buffer.from('06082a8648ce3d030107', 'hex'), // prime256v1
  EC_P384: Buffer.from('06052b81040022', 'hex'), // secp384r1
  ED25519: Buffer.from('06032b6570', 'hex'), // id-Ed25519
};

const SIGN_MECHANISMS = lazy(
  (): Record<SigningAlgorithm, number> => ({
    ECDSA_P256_SHA256: pkcs11js.CKM_ECDSA,
    ECDSA_P384_SHA384: pkcs11js.CKM_ECDSA,
    ED25519: CKM_EDDSA,
    RSA_PKCS1_SHA256: pkcs11js.CKM_SHA256_RSA_PKCS,
    RSA_PSS_SHA256: pkcs11js.CKM_SHA256_RSA_PKCS_PSS,
  }),
);

const GEN_MECHANISMS = lazy(
  (): Record<KeySpec, number> => ({
    EC_P256: pkcs11js.CKM_EC_KEY_PAIR_GEN,
    EC_P384: pkcs11js.CKM_EC_KEY_PAIR_GEN,
    ED25519: CKM_EC_EDWARDS_KEY_PAIR_GEN,
    RSA_2048: pkcs11js.CKM_RSA_PKCS_KEY_PAIR_GEN,
    RSA_3072: pkcs11js.CKM_RSA_PKCS_KEY_PAIR_GEN,
    RSA_4096: pkcs11js.CKM_RSA_PKCS_KEY_PAIR_GEN,
  }),
);

const MECHANISM_NAMES = lazy(
  () =>
    new Map<number, string>([
      [pkcs11js.CKM_EC_KEY_PAIR_GEN, 'CKM_EC_KEY_PAIR_GEN'],
      [pkcs11js.CKM_ECDSA, 'CKM_ECDSA'],
      [CKM_EC_EDWARDS_KEY_PAIR_GEN, 'CKM_EC_EDWARDS_KEY_PAIR_GEN'],
      [CKM_EDDSA, 'CKM_EDDSA'],
      [pkcs11js.CKM_RSA_PKCS_KEY_PAIR_GEN, 'CKM_RSA_PKCS_KEY_PAIR_GEN'],
      [pkcs11js.CKM_SHA256_RSA_PKCS, 'CKM_SHA256_RSA_PKCS'],
      [pkcs11js.CKM_SHA256_RSA_PKCS_PSS, 'CKM_SHA256_RSA_PKCS_PSS'],
    ]),
);

/** Failures of one request that say nothing about the connection (no reconnect). */
const REQUEST_LEVEL = lazy(
  () =>
    new Set([
      pkcs11js.CKR_ARGUMENTS_BAD,
      pkcs11js.CKR_DATA_LEN_RANGE,
      pkcs11js.CKR_DATA_INVALID,
      pkcs11js.CKR_MECHANISM_INVALID,
      pkcs11js.CKR_MECHANISM_PARAM_INVALID,
      pkcs11js.CKR_KEY_TYPE_INCONSISTENT,
      pkcs11js.CKR_KEY_FUNCTION_NOT_PERMITTED,
      pkcs11js.CKR_KEY_SIZE_RANGE,
      pkcs11js.CKR_TEMPLATE_INCONSISTENT,
      pkcs11js.CKR_TEMPLATE_INCOMPLETE,
      pkcs11js.CKR_ATTRIBUTE_VALUE_INVALID,
      pkcs11js.CKR_DOMAIN_PARAMS_INVALID,
    ]),
);

const SIGNATURE_BUFFER = 1024; // RSA-4096 needs 512

interface Pkcs11Options {
  /** Path of the PKCS#11 module; undefined = not configured (unavailable, 503). */
  readonly module: string | undefined;
  readonly tokenLabel: string;
  /** The crypto user's PIN, resolved once per connection (environment or Secrets Manager). */
  readonly pin: () => Promise<string>;
  readonly poolSize: number;
  /** The sentence a caller sees when no module is configured. */
  readonly unavailableReason?: string;
  /**
   * Runs before the module is loaded and initialised, on every (re)connection: CloudHSM
   * writes the client configuration with the cluster's current HSM addresses here
   * (lib/signing/cloudhsm.ts). A failure fails the connection like a device error.
   */
  readonly prepare?: () => Promise<unknown>;
}

const ckr = (error: unknown): { name: string; code: number } | undefined => {
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'number' && typeof e.message === 'string' && /^CKR_/.test(e.message)) return { name: e.message, code: e.code };
  return undefined;
};

/** A logged-in set of sessions on the token of one module initialization. */
class Connection {
  broken = false;
  private inFlight = 0;
  private readonly free: Handle[];
  private readonly waiters: Array<(s: Handle | null) => void> = [];
  private readonly drainWaiters: Array<() => void> = [];
  /** Private key handles by CKA_LABEL: valid for this connection only. */
  readonly handles = new Map<string, Handle>();

  private opened: number;

  /**
   * Sessions are opened on demand up to `max` (a Lambda instance serves one request at a
   * time and so never opens more than one; the local gateway, serving all, opens more).
   */
  constructor(
    readonly lib: PKCS11,
    readonly slot: Handle,
    first: Handle,
    private readonly max: number,
    readonly mechanisms: ReadonlySet<number>,
  ) {
    this.free = [first];
    this.opened = 1;
  }

  /** A free session, or null when the connection broke meanwhile (the caller reconnects). */
  acquire(): Promise<Handle | null> {
    if (this.broken) return Promise.resolve(null);
    const s = this.free.pop() ?? (this.opened < this.max ? this.open() : undefined);
    this.inFlight++;
    if (s) return Promise.resolve(s);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** One more session of the same login state (a failure here is a device error). */
  private open(): Handle {
    const s = this.lib.C_OpenSession(this.slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
    this.opened++;
    return s;
  }

  release(session: Handle): void {
    this.inFlight--; // `inFlight` counts holders and waiters
    const next = this.broken ? undefined : this.waiters.shift();
    if (next) next(session);
    else this.free.push(session);
    if (this.broken) this.turnAwayWaiters();
    if (this.inFlight === 0) for (const d of this.drainWaiters.splice(0)) d();
  }

  /** Waiters have sent nothing to the device: they go to the next connection. */
  private turnAwayWaiters(): void {
    for (const w of this.waiters.splice(0)) {
      this.inFlight--;
      w(null);
    }
  }

  /** Resolves once no operation runs on this connection any more. */
  drained(): Promise<void> {
    this.turnAwayWaiters();
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }
}

export class Pkcs11Backend implements SigningBackend {
  readonly name = 'pkcs11';
  private lib: PKCS11 | undefined;
  private conn: Connection | undefined;
  private connecting: Promise<Connection> | undefined;

  constructor(private readonly opts: Pkcs11Options) {}

  get tokenLabel(): string {
    return this.opts.tokenLabel;
  }

  async status(): Promise<BackendStatus> {
    const base = { name: this.name, key_specs: [...KEY_SPECS], algorithms: [...SIGNING_ALGORITHMS], token_label: this.opts.tokenLabel };
    if (!this.opts.module) {
      return { ...base, configured: false, reachable: false, status: 'unavailable', reason: this.unavailableReason() };
    }
    try {
      const c = await this.connection();
      const session = await this.acquire(c);
      try {
        // A cheap round trip: the token must still be there.
        c.lib.C_GetSessionInfo(session);
      } catch (error) {
        throw this.failure(c, 'session check', error);
      } finally {
        c.release(session);
      }
      const mechanisms = [...MECHANISM_NAMES()].filter(([m]) => c.mechanisms.has(m)).map(([, n]) => n);
      const specs = KEY_SPECS.filter((s) => c.mechanisms.has(GEN_MECHANISMS()[s]));
      const algorithms = SIGNING_ALGORITHMS.filter((a) => c.mechanisms.has(SIGN_MECHANISMS()[a]));
      return { ...base, configured: true, reachable: true, status: 'available', key_specs: specs, algorithms, mechanisms };
    } catch (error) {
      return { ...base, configured: true, reachable: false, status: 'error', reason: (error as Error).message };
    }
  }

  async generateKey(spec: KeySpec, label: { tenantId: string; keyId: string }): Promise<GeneratedKey> {
    const objectLabel = `${label.tenantId}/${label.keyId}`;
    const objectId = Buffer.from(label.keyId.replace(/-/g, ''), 'hex');
    return this.withSession('key generation', async (c, session) => {
      const mechanism = GEN_MECHANISMS()[spec];
      if (!c.mechanisms.has(mechanism)) throw new UnsupportedKeySpec(this.name, spec, `the token does not offer ${MECHANISM_NAMES().get(mechanism)}`);
      const common: Template = [
        { type: pkcs11js.CKA_LABEL, value: objectLabel },
        { type: pkcs11js.CKA_ID, value: objectId },
      ];
      const bits = rsaBits(spec);
      // The public half is a session object: its value is kept in the table, the token
      // keeps only private keys (HSMs count objects).
      const publicTemplate: Template = [
        ...common,
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_VERIFY, value: true },
        ...(bits
          ? [
              { type: pkcs11js.CKA_MODULUS_BITS, value: bits },
              { type: pkcs11js.CKA_PUBLIC_EXPONENT, value: Buffer.from([1, 0, 1]) },
            ]
          : [{ type: pkcs11js.CKA_EC_PARAMS, value: EC_PARAMS[spec]! }]),
      ];
      const privateTemplate: Template = [
        ...common,
        { type: pkcs11js.CKA_TOKEN, value: true },
        { type: pkcs11js.CKA_PRIVATE, value: true },
        { type: pkcs11js.CKA_SENSITIVE, value: true },
        { type: pkcs11js.CKA_EXTRACTABLE, value: false },
        { type: pkcs11js.CKA_SIGN, value: true },
        { type: pkcs11js.CKA_DECRYPT, value: false },
        { type: pkcs11js.CKA_UNWRAP, value: false },
        { type: pkcs11js.CKA_DERIVE, value: false },
      ];
      const pair = await c.lib.C_GenerateKeyPairAsync(session, { mechanism }, publicTemplate, privateTemplate);
      try {
        const spki = bits ? rsaSpki(c.lib, session, pair.publicKey) : ecSpki(c.lib, session, pair.publicKey, spec);
        c.handles.set(objectLabel, pair.privateKey);
        return { ref: { handle: objectLabel, object_id: objectId.toString('hex') }, spki };
      } catch (error) {
        c.lib.C_DestroyObject(session, pair.privateKey);
        throw error;
      } finally {
        c.lib.C_DestroyObject(session, pair.publicKey);
      }
    });
  }

  async sign(ref: KeyRef, algorithm: SigningAlgorithm, message: Buffer): Promise<Buffer> {
    const info = ALGORITHMS[algorithm];
    const input = info.prehash ? createHash(info.prehash).update(message).digest() : message;
    const pss: RsaPSS = { type: pkcs11js.CK_PARAMS_RSA_PSS, hashAlg: pkcs11js.CKM_SHA256, mgf: pkcs11js.CKG_MGF1_SHA256, saltLen: PSS_SALT_LENGTH };
    const mechanism: Mechanism =
      algorithm === 'RSA_PSS_SHA256' ? { mechanism: SIGN_MECHANISMS()[algorithm], parameter: pss } : { mechanism: SIGN_MECHANISMS()[algorithm] };
    const raw = await this.withSession('sign', async (c, session) => {
      const key = this.findKey(c, session, ref);
      c.lib.C_SignInit(session, mechanism, key);
      return c.lib.C_SignAsync(session, input, Buffer.alloc(SIGNATURE_BUFFER));
    });
    if (algorithm === 'ECDSA_P256_SHA256') return Buffer.from(p256.Signature.fromBytes(raw, 'compact').toBytes('der'));
    if (algorithm === 'ECDSA_P384_SHA384') return Buffer.from(p384.Signature.fromBytes(raw, 'compact').toBytes('der'));
    return Buffer.from(raw);
  }

  async destroyKey(ref: KeyRef): Promise<void> {
    await this.withSession('key deletion', async (c, session) => {
      for (const h of findPrivateKeys(c.lib, session, ref.handle)) c.lib.C_DestroyObject(session, h);
      c.handles.delete(ref.handle);
    });
  }

  /** Closes the sessions and finalizes the module (tests, shutdown). */
  async close(): Promise<void> {
    const c = this.conn;
    this.conn = undefined;
    if (c) {
      c.broken = true;
      await c.drained();
      this.teardown(c);
    }
  }

  private unavailableReason(): string {
    return (
      this.opts.unavailableReason ??
      'no PKCS#11 module is configured (PKCS11_MODULE); locally install SoftHSM2 (sudo apt-get install softhsm2) and restart'
    );
  }

  private findKey(c: Connection, session: Handle, ref: KeyRef): Handle {
    const cached = c.handles.get(ref.handle);
    if (cached) return cached;
    const found = findPrivateKeys(c.lib, session, ref.handle);
    if (found.length !== 1)
      throw new DeviceError(this.name, found.length === 0 ? 'the key object is missing from the token' : 'the key label is not unique on the token');
    c.handles.set(ref.handle, found[0]!);
    return found[0]!;
  }

  private async acquire(c: Connection): Promise<Handle> {
    const s = await c.acquire();
    if (s === null) throw new DeviceError(this.name, 'connection lost');
    return s;
  }

  /** Runs `fn` on a pooled session; a PKCS#11 failure becomes a DeviceError (never retried). */
  private async withSession<T>(what: string, fn: (c: Connection, session: Handle) => Promise<T>): Promise<T> {
    count(METRIC.hsmCalls); // every HSM operation goes through here (one per request, retries aside)
    for (;;) {
      const c = await this.connection();
      let session: Handle | null;
      try {
        session = await c.acquire();
      } catch (error) {
        throw this.failure(c, 'opening a session', error);
      }
      if (session === null) continue; // broke before anything was sent: use the new connection
      try {
        return await fn(c, session);
      } catch (error) {
        throw this.failure(c, what, error);
      } finally {
        c.release(session);
      }
    }
  }

  private failure(c: Connection, what: string, error: unknown): Error {
    if (error instanceof DeviceError || error instanceof BackendUnavailable || error instanceof UnsupportedKeySpec) return error;
    const rv = ckr(error);
    if (!rv || !REQUEST_LEVEL().has(rv.code)) c.broken = true;
    return new DeviceError(this.name, `${what} failed: ${rv?.name ?? (error as Error).message}`, { cause: error, code: rv?.name });
  }

  private connection(): Promise<Connection> {
    if (this.conn && !this.conn.broken) return Promise.resolve(this.conn);
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private load(): PKCS11 {
    if (this.lib) return this.lib;
    let lib: PKCS11;
    try {
      lib = new pkcs11js.PKCS11();
      lib.load(this.opts.module!);
    } catch (error) {
      throw new DeviceError(this.name, `cannot load the PKCS#11 module ${this.opts.module}`, { cause: error, code: 'module_load' });
    }
    this.lib = lib;
    return lib;
  }

  private teardown(c: Connection): void {
    try {
      c.lib.C_CloseAllSessions(c.slot);
    } catch {
      // the token may be gone
    }
    try {
      c.lib.C_Finalize();
    } catch {
      // not initialized any more
    }
  }

  private async connect(): Promise<Connection> {
    if (!this.opts.module) throw new BackendUnavailable(this.name, this.unavailableReason());
    const old = this.conn;
    this.conn = undefined;
    if (old) {
      old.broken = true;
      await old.drained();
      this.teardown(old);
    }
    if (this.opts.prepare) {
      try {
        await this.opts.prepare();
      } catch (error) {
        throw new DeviceError(this.name, `cannot prepare the PKCS#11 module: ${(error as Error).message}`, { cause: error, code: 'prepare' });
      }
    }
    const lib = this.load();
    let pin: string;
    try {
      pin = await this.opts.pin();
    } catch (error) {
      throw new DeviceError(this.name, 'cannot read the crypto user credentials', { cause: error, code: 'credentials' });
    }
    try {
      try {
        // Signs run on libuv's worker threads (C_SignAsync): the module must lock itself.
        lib.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
      } catch (error) {
        if (ckr(error)?.code !== pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED) throw error;
      }
      const slot = lib.C_GetSlotList(true).find((s) => lib.C_GetTokenInfo(s).label.trim() === this.opts.tokenLabel);
      if (slot === undefined)
        throw new DeviceError(this.name, `no token labelled "${this.opts.tokenLabel}" is present`, { code: 'token_not_present' });
      const mechanisms = new Set(lib.C_GetMechanismList(slot));
      const first = lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
      try {
        lib.C_Login(first, pkcs11js.CKU_USER, pin);
      } catch (error) {
        if (ckr(error)?.code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) throw error;
      }
      const conn = new Connection(lib, slot, first, this.opts.poolSize, mechanisms);
      this.conn = conn;
      return conn;
    } catch (error) {
      try {
        lib.C_Finalize();
      } catch {
        // initialization itself failed
      }
      if (error instanceof DeviceError) throw error;
      const rv = ckr(error);
      throw new DeviceError(this.name, `cannot open the token "${this.opts.tokenLabel}": ${rv?.name ?? (error as Error).message}`, {
        cause: error,
        code: rv?.name,
      });
    }
  }
}

function findPrivateKeys(lib: PKCS11, session: Handle, label: string): Handle[] {
  lib.C_FindObjectsInit(session, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
    { type: pkcs11js.CKA_LABEL, value: label },
  ]);
  try {
    return lib.C_FindObjects(session, 2);
  } finally {
    lib.C_FindObjectsFinal(session);
  }
}

function rsaSpki(lib: PKCS11, session: Handle, key: Handle): Buffer {
  const [n, e] = lib.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_MODULUS }, { type: pkcs11js.CKA_PUBLIC_EXPONENT }]).map((a) => a.value);
  return createPublicKey({ key: { kty: 'RSA', n: n!.toString('base64url'), e: e!.toString('base64url') }, format: 'jwk' }).export({
    type: 'spki',
    format: 'der',
  });
}

/** CKA_EC_POINT is a DER OCTET STRING around the point (some modules return it bare). */
function unwrapPoint(value: Buffer, size: number): Buffer {
  if (value.length === size) return value;
  if (value[0] === 0x04) {
    const long = value[1]! & 0x80 ? value[1]! & 0x7f : 0;
    const start = 2 + long;
    const inner = value.subarray(start);
    if (inner.length === size) return inner;
  }
  throw new Error(`unexpected CKA_EC_POINT of ${value.length} bytes`);
}

function ecSpki(lib: PKCS11, session: Handle, key: Handle, spec: KeySpec): Buffer {
  const [attr] = lib.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_EC_POINT }]);
  const value = attr!.value;
  if (spec === 'ED25519') {
    const x = unwrapPoint(value, 32);
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: x.toString('base64url') }, format: 'jwk' }).export({
      type: 'spki',
      format: 'der',
    });
  }
  const coord = spec === 'EC_P256' ? 32 : 48;
  const point = unwrapPoint(value, 2 * coord + 1);
  if (point[0] !== 0x04) throw new Error('compressed EC point');
  return createPublicKey({
    key: {
      kty: 'EC',
      crv: spec === 'EC_P256' ? 'P-256' : 'P-384',
      x: point.subarray(1, 1 + coord).toString('base64url'),
      y: point.subarray(1 + coord).toString('base64url'),
    },
    format: 'jwk',
  }).export({ type: 'spki', format: 'der' });
}
