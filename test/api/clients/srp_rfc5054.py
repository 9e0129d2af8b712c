#!/usr/bin/env python3
"""A strict SRP-6a client written from RFC 5054 (section 2.4-2.6, Appendix A's 2048-bit group)
and RFC 2945 (section 3, the proofs M1 and M2), with the standard library only: it shares no
code with the service. Used by test/api/zkp.test.ts against the service over HTTP.

  x = H(s | H(I | ":" | P))            v = g^x % N          A = g^a % N
  k = H(N | PAD(g))                    u = H(PAD(A) | PAD(B))
  S = (B - (k * g^x)) ^ (a + (u * x)) % N                    K = H(PAD(S))
  M1 = H(H(N) XOR H(g) | H(I) | s | PAD(A) | PAD(B) | K)     M2 = H(PAD(A) | M1 | K)

H is SHA-256. Usage (JSON on stdout):
  srp_rfc5054.py register BASE_URL TENANT EMAIL RESET_TOKEN   (the password on stdin)
  srp_rfc5054.py signin   BASE_URL TENANT EMAIL               (the password on stdin)
"""
import hashlib
import json
import secrets
import sys
import urllib.error
import urllib.request

N = int(
    "AC6BDB41 324A9A9B F166DE5E 1389582F AF72B665 1987EE07 FC319294 3DB56050 A37329CB B4A099ED 8193E075 7767A13D"
    " D52312AB 4B03310D CD7F48A9 DA04FD50 E8083969 EDB767B0 CF609517 9A163AB3 661A05FB D5FAAAE8 2918A996 2F0B93B8"
    " 55F97993 EC975EEA A80D740A DBF4FF74 7359D041 D5C33EA7 1D281E44 6B14773B CA97B43A 23FB8016 76BD207A 436C6481"
    " F1D2B907 8717461A 5B9D32E6 88F87748 544523B5 24B0D57D 5EA77A27 75D2ECFA 032CFBDB F52FB378 61602790 04E57AE6"
    " AF874E73 03CE5329 9CCC041C 7BC308D8 2A5698F3 A8D0C382 71AE35F8 E9DBFBB6 94B5C803 D89F7AE4 35DE236D 525F5475"
    " 9B65E372 FCD68EF2 0FA7111F 9E4AFF73".replace(" ", ""),
    16,
)
g = 2
LEN = 256  # bytes of N


def H(*parts: bytes) -> bytes:
    return hashlib.sha256(b"".join(parts)).digest()


def PAD(n: int) -> bytes:
    return n.to_bytes(LEN, "big")


def num(b: bytes) -> int:
    return int.from_bytes(b, "big")


def minimal(n: int) -> bytes:
    return n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")


k = num(H(PAD(N), PAD(g)))


def x_of(salt: bytes, identity: str, password: str) -> int:
    return num(H(salt, H(f"{identity}:{password}".encode())))


def post(base: str, path: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(base + path, json.dumps(body).encode(), {"content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req) as res:
            return res.status, json.load(res)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def register(base: str, tenant: str, email: str, token: str, password: str) -> dict:
    salt = secrets.token_bytes(32)
    v = pow(g, x_of(salt, email, password), N)
    status, body = post(base, "/api/v1/auth/zkp/register", {
        "tenant_id": tenant, "email": email, "reset_token": token,
        "salt": salt.hex(), "verifier": PAD(v).hex(), "srp_version": 2,
    })
    return {"status": status, "body": body}


def signin(base: str, tenant: str, email: str, password: str) -> dict:
    a = secrets.randbits(256)
    A = pow(g, a, N)
    status, step1 = post(base, "/api/v1/auth/zkp/verify", {"tenant_id": tenant, "email": email, "client_public": PAD(A).hex(), "srp_version": 2})
    if status != 200:
        return {"step": 1, "status": status, "body": step1}
    data = step1["data"]
    salt = bytes.fromhex(data["salt"])
    B = int(data["server_public"], 16)
    if B % N == 0:  # RFC 5054 2.5.4
        return {"step": 1, "error": "B % N == 0"}
    u = num(H(PAD(A), PAD(B)))
    if u == 0:
        return {"step": 1, "error": "u == 0"}
    x = x_of(salt, email, password)
    S = pow((B - k * pow(g, x, N)) % N, a + u * x, N)
    K = H(PAD(S))
    hn_xor_hg = bytes(p ^ q for p, q in zip(H(PAD(N)), H(minimal(g))))
    M1 = H(hn_xor_hg, H(email.encode()), salt, PAD(A), PAD(B), K)
    status, step2 = post(base, "/api/v1/auth/zkp/verify", {"challenge_id": data["challenge_id"], "client_proof": M1.hex()})
    if status != 200:
        return {"step": 2, "status": status, "body": step2}
    server_proved = step2["data"]["server_proof"].lower() == H(PAD(A), M1, K).hex()
    return {"step": 2, "status": status, "server_proved": server_proved, "srp_version": data.get("srp_version"), "access_token": step2["data"]["access_token"]}


if __name__ == "__main__":
    command, base, tenant, email = sys.argv[1:5]
    password = sys.stdin.read()
    if command == "register":
        out = register(base, tenant, email, sys.argv[5], password)
    else:
        out = signin(base, tenant, email, password)
    print(json.dumps(out))
