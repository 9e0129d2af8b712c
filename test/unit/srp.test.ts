import { sha1 } from '@noble/hashes/legacy.js';
import * as legacy from 'secure-remote-password/client.js';
import { describe, expect, it } from 'vitest';
import * as cliSrp from '../../cli/srp.js';
import {
  clientEphemeral,
  clientPremaster,
  clientProof,
  clientPublicOf,
  clientRegistration,
  groupOf,
  multiplier,
  privateKey,
  scrambler,
  serverEphemeral,
  serverPremaster,
  serverPublicOf,
  verifierOf,
  verifyClientProof,
} from '../../lib/users/srp.js';

/** RFC 5054 Appendix B's values, as printed there (hex in groups of 8). */
const h = (s: string) => BigInt(`0x${s.replace(/\s+/g, '')}`);
const N_1024 =
  'EEAF0AB9 ADB38DD6 9C33F80A FA8FC5E8 60726187 75FF3C0B 9EA2314C 9C256576 D674DF74 96EA81D3 383B4813 D692C6E0 E0D5D8E2 50B98BE4 ' +
  '8E495C1D 6089DAD1 5DC7D7B4 6154D6B6 CE8EF4AD 69B15D49 82559B29 7BCF1885 C529F566 660E57EC 68EDBC3C 05726CC0 2FD4CBF4 976EAA9A ' +
  'FD5138FE 8376435B 9FC61D2F C0EB06E3';
const RFC_GROUP = groupOf(N_1024.replace(/\s+/g, ''), 2n, sha1);
const B_ = {
  I: 'alice',
  P: 'password123',
  s: 'BEB25379D1A8581EB5A727673A2441EE',
  k: h('7556AA04 5AEF2CDD 07ABAF0F 665C3E81 8913186F'),
  x: h('94B7555A ABE9127C C58CCF49 93DB6CF8 4D16C124'),
  v: h(
    '7E273DE8 696FFC4F 4E337D05 B4B375BE B0DDE156 9E8FA00A 9886D812 9BADA1F1 822223CA 1A605B53 0E379BA4 729FDC59 F105B478 7E5186F5 ' +
      'C671085A 1447B52A 48CF1970 B4FB6F84 00BBF4CE BFBB1681 52E08AB5 EA53D15C 1AFF87B2 B9DA6E04 E058AD51 CC72BFC9 033B564E 26480D78 ' +
      'E955A5E2 9E7AB245 DB2BE315 E2099AFB',
  ),
  a: h('60975527 035CF2AD 1989806F 0407210B C81EDC04 E2762A56 AFD529DD DA2D4393'),
  b: h('E487CB59 D31AC550 471E81F0 0F6928E0 1DDA08E9 74A004F4 9E61F5D1 05284D20'),
  A: h(
    '61D5E490 F6F1B795 47B0704C 436F523D D0E560F0 C64115BB 72557EC4 4352E890 3211C046 92272D8B 2D1A5358 A2CF1B6E 0BFCF99F 921530EC ' +
      '8E393561 79EAE45E 42BA92AE ACED8251 71E1E8B9 AF6D9C03 E1327F44 BE087EF0 6530E69F 66615261 EEF54073 CA11CF58 58F0EDFD FE15EFEA ' +
      'B349EF5D 76988A36 72FAC47B 0769447B',
  ),
  B: h(
    'BD0C6151 2C692C0C B6D041FA 01BB152D 4916A1E7 7AF46AE1 05393011 BAF38964 DC46A067 0DD125B9 5A981652 236F99D9 B681CBF8 7837EC99 ' +
      '6C6DA044 53728610 D0C6DDB5 8B318885 D7D82C7F 8DEB75CE 7BD4FBAA 37089E6F 9C6059F3 88838E7A 00030B33 1EB76840 910440B1 B27AAEAE ' +
      'EB4012B7 D7665238 A8E3FB00 4B117B58',
  ),
  u: h('CE38B959 3487DA98 554ED47D 70A7AE5F 462EF019'),
  S: h(
    'B0DC82BA BCF30674 AE450C02 87745E79 90A3381F 63B387AA F271A10D 233861E3 59B48220 F7C4693C 9AE12B0A 6F67809F 0876E2D0 13800D6C ' +
      '41BB59B6 D5979B5C 00A172B4 A2A5903A 0BDCAF8A 709585EB 2AFAFA8F 3499B200 210DCC1F 10EB3394 3CD67FC8 8A2F39A4 BE5BEC4E C0A3212D ' +
      'C346D7E4 74B29EDE 8A469FFE CA686E5A',
  ),
};

describe('SRP-6a: RFC 5054 Appendix B test vectors (1024-bit group, SHA-1)', () => {
  it('version 2 computes k = H(N | PAD(g)), x, v, A, B, u and the premaster secret of both sides as the RFC prints them', () => {
    expect(multiplier(2, RFC_GROUP).toString(16), 'k of srp_version 2').toBe(B_.k.toString(16));
    expect(privateKey(B_.s, B_.I, B_.P, RFC_GROUP).toString(16), 'x').toBe(B_.x.toString(16));
    expect(verifierOf(B_.x, RFC_GROUP).toString(16), 'v').toBe(B_.v.toString(16));
    expect(clientPublicOf(B_.a, RFC_GROUP).toString(16), 'A').toBe(B_.A.toString(16));
    expect(serverPublicOf(B_.v, B_.b, 2, RFC_GROUP).toString(16), 'B of srp_version 2').toBe(B_.B.toString(16));
    expect(scrambler(B_.A, B_.B, RFC_GROUP).toString(16), 'u').toBe(B_.u.toString(16));
    expect(clientPremaster(B_.B, B_.x, B_.a, B_.u, 2, RFC_GROUP).toString(16), "client's S").toBe(B_.S.toString(16));
    expect(serverPremaster(B_.A, B_.v, B_.u, B_.b, RFC_GROUP).toString(16), "server's S").toBe(B_.S.toString(16));
  });

  it('version 1 (g hashed as one byte) is not RFC 5054: its k and B differ from the RFC', () => {
    expect(multiplier(1, RFC_GROUP)).not.toBe(B_.k);
    expect(serverPublicOf(B_.v, B_.b, 1, RFC_GROUP)).not.toBe(B_.B);
  });
});

describe('SRP-6a in the service group (2048-bit, SHA-256)', () => {
  it('the client and server sides agree in version 2, and the server proof is what the client expects', () => {
    const { salt, verifier } = clientRegistration('alice@example.com', 'correct horse');
    const eph = clientEphemeral();
    const server = serverEphemeral(verifier, 2);
    const c = clientProof({ identity: 'alice@example.com', password: 'correct horse', salt, serverPublic: server.public, secret: eph.secret, version: 2 });
    const input = { identity: 'alice@example.com', salt, verifier, clientPublic: eph.public, serverSecret: server.secret, clientProof: c.proof };
    expect(verifyClientProof({ ...input, version: 2 })).toBe(c.expectedServerProof);
    // the same exchange checked with the other multiplier fails: the version is part of the proof
    expect(verifyClientProof({ ...input, version: 1 })).toBeUndefined();
    const wrong = clientProof({ identity: 'alice@example.com', password: 'wrong', salt, serverPublic: server.public, secret: eph.secret, version: 2 });
    expect(verifyClientProof({ ...input, clientProof: wrong.proof, version: 2 })).toBeUndefined();
  });

  it('version 1 is the secure-remote-password npm convention: that client signs in against a version-1 handshake', () => {
    const salt = legacy.generateSalt();
    const verifier = legacy.deriveVerifier(legacy.derivePrivateKey(salt, 'bob@example.com', 'pw'));
    const eph = legacy.generateEphemeral();
    const server = serverEphemeral(verifier, 1);
    const session = legacy.deriveSession(eph.secret, server.public, salt, 'bob@example.com', legacy.derivePrivateKey(salt, 'bob@example.com', 'pw'));
    const input = { identity: 'bob@example.com', salt, verifier, clientPublic: eph.public, serverSecret: server.secret, clientProof: session.proof };
    const m2 = verifyClientProof({ ...input, version: 1 });
    expect(m2).toBeDefined();
    expect(() => legacy.verifySession(eph.public, session, m2!)).not.toThrow();
    expect(verifyClientProof({ ...input, version: 2 })).toBeUndefined();
  });

  it("the CLI's own client (cli/srp.ts, node:crypto) signs in against the server side in version 2", () => {
    const { salt, verifier } = clientRegistration('carol@example.com', 'pw');
    const eph = cliSrp.clientEphemeral();
    const server = serverEphemeral(verifier, cliSrp.SRP_VERSION as 2);
    const c = cliSrp.clientProof({ identity: 'carol@example.com', password: 'pw', salt, serverPublic: server.public, secret: eph.secret });
    const m2 = verifyClientProof({ identity: 'carol@example.com', salt, verifier, clientPublic: eph.public, serverSecret: server.secret, clientProof: c.proof, version: 2 });
    expect(m2, 'the server accepts the CLI proof').toBe(c.expectedServerProof);
    expect(() => cliSrp.clientProof({ identity: 'a', password: 'b', salt: '00', serverPublic: '0'.repeat(512), secret: 5n })).toThrow('B mod N is 0');
  });

  it('a client refuses B mod N = 0', () => {
    expect(() => clientProof({ identity: 'a', password: 'b', salt: '00'.repeat(32), serverPublic: '0'.repeat(512), secret: 5n, version: 2 })).toThrow(
      'B mod N is 0',
    );
  });
});
