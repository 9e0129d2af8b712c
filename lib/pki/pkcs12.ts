import { createHash, createHmac, randomBytes, type KeyObject } from 'node:crypto';
import forge from 'node-forge';

/**
 * PKCS#12 (RFC 7292) for any key type node:crypto holds (RSA, EC, Ed25519), in the shape
 * OpenSSL 3 writes by default: the private key as a pkcs8ShroudedKeyBag encrypted with
 * PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC; node:crypto's encrypted PKCS#8 export), the
 * certificates as certBags, integrity by an HMAC-SHA256 MAC keyed by the PKCS#12 KDF
 * (node-forge's implementation). node-forge's own PKCS#12 writer handles RSA keys only,
 * hence this assembly of its ASN.1 primitives. `openssl pkcs12` and `keytool` read it.
 */
const { asn1 } = forge;
const OID = {
  data: '1.2.840.113549.1.7.1',
  pkcs8ShroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
  sha256: '2.16.840.1.101.3.4.2.1',
};
const ITERATIONS = 10_000;

const seq = (items: forge.asn1.Asn1[]) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, items);
const set = (items: forge.asn1.Asn1[]) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, items);
const oid = (o: string) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(o).getBytes());
const octets = (bytes: Buffer) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, bytes.toString('binary'));
const explicit0 = (inner: forge.asn1.Asn1) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [inner]);
const integer = (n: number) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(n).getBytes());
const der = (a: forge.asn1.Asn1) => Buffer.from(asn1.toDer(a).getBytes(), 'binary');
const fromDer = (b: Buffer) => asn1.fromDer(b.toString('binary'));

function attributes(localKeyId: Buffer, friendlyName?: string): forge.asn1.Asn1 {
  const attrs = [seq([oid(OID.localKeyId), set([octets(localKeyId)])])];
  if (friendlyName) attrs.push(seq([oid(OID.friendlyName), set([asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BMPSTRING, false, friendlyName)])]));
  return set(attrs);
}

/** ContentInfo of type data wrapping a SafeContents. */
const dataContentInfo = (safeContents: forge.asn1.Asn1) => seq([oid(OID.data), explicit0(octets(der(safeContents)))]);

export interface Pkcs12Input {
  readonly privateKey: KeyObject;
  /** The end-entity certificate first, then its chain (DER). */
  readonly certificates: readonly Uint8Array[];
  readonly password: string;
  readonly friendlyName?: string;
}

export function buildPkcs12(input: Pkcs12Input): Buffer {
  const leaf = Buffer.from(input.certificates[0] ?? []);
  const localKeyId = createHash('sha1').update(leaf).digest();
  const encryptedKey = input.privateKey.export({ type: 'pkcs8', format: 'der', cipher: 'aes-256-cbc', passphrase: input.password }) as Buffer;
  const keyBag = seq([oid(OID.pkcs8ShroudedKeyBag), explicit0(fromDer(encryptedKey)), attributes(localKeyId, input.friendlyName)]);
  const certBags = input.certificates.map((c, i) =>
    seq([
      oid(OID.certBag),
      explicit0(seq([oid(OID.x509Certificate), explicit0(octets(Buffer.from(c)))])),
      ...(i === 0 ? [attributes(localKeyId, input.friendlyName)] : []),
    ]),
  );
  const authSafe = seq([dataContentInfo(seq(certBags)), dataContentInfo(seq([keyBag]))]);
  const authSafeDer = der(authSafe);

  const salt = randomBytes(16);
  const macKey = forge.pkcs12.generateKey(input.password, forge.util.createBuffer(salt.toString('binary')), 3, ITERATIONS, 32, forge.md.sha256.create());
  const mac = createHmac('sha256', Buffer.from(macKey.getBytes(), 'binary')).update(authSafeDer).digest();
  const macData = seq([
    seq([seq([oid(OID.sha256), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, '')]), octets(mac)]),
    octets(salt),
    integer(ITERATIONS),
  ]);
  return der(seq([integer(3), seq([oid(OID.data), explicit0(octets(authSafeDer))]), macData]));
}
