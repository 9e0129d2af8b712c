import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPkcs12 } from '../../lib/pki/pkcs12.js';
import { signingAlgorithm, toPublicCryptoKey, toSigningKey, x509 } from '../../lib/pki/x509.js';

/** lib/pki's PKCS#12 read back by openssl (a process: this tier, not the unit tier). */
describe('PKCS#12', () => {
  it('an Ed25519 key and certificate (which node-forge alone cannot write) open in openssl', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'p12-'));
    try {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: '01',
        subject: 'CN=ed',
        issuer: 'CN=ed',
        publicKey: await toPublicCryptoKey(publicKey),
        signingKey: await toSigningKey(privateKey),
        signingAlgorithm: signingAlgorithm(privateKey),
      });
      const p = join(dir, 'ed.p12');
      writeFileSync(
        p,
        await buildPkcs12(
          'secret-pass',
          [{ alias: 'ed', privateKey: privateKey.export({ type: 'pkcs8', format: 'der' }), chain: [new Uint8Array(cert.rawData)] }],
          [],
        ),
      );
      const out = execFileSync('openssl', ['pkcs12', '-in', p, '-passin', 'pass:secret-pass', '-nodes', '-info'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      expect(out).toContain('BEGIN PRIVATE KEY');
      expect(out).toContain('friendlyName: ed');
      expect(() => execFileSync('openssl', ['pkcs12', '-in', p, '-passin', 'pass:other-pass', '-nodes'], { stdio: 'ignore' })).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
