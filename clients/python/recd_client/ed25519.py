# SPDX-License-Identifier: MIT
# Ed25519 signatures (RFC 8032, section 5.1) in plain Python: the standard library has none, and
# NATS nkey authentication signs the server's nonce with the user's Ed25519 seed. Points are kept
# in extended coordinates (X:Y:Z:T with x = X/Z, y = Y/Z, x*y = T/Z). Not constant time: fine for
# signing a connection nonce on the client's own machine, not for a signing service.
import hashlib

P = 2 ** 255 - 19
L = 2 ** 252 + 27742317777372353535851937790883648493  # order of the base point
D = -121665 * pow(121666, P - 2, P) % P
_SQRT_M1 = pow(2, (P - 1) // 4, P)  # a square root of -1


def _inv(x: int) -> int:
    return pow(x, P - 2, P)


def _add(a, b):
    """Point addition on the twisted Edwards curve (RFC 8032 5.1.4, a = -1)."""
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % P
    bb = (y1 + x1) * (y2 + x2) % P
    cc = 2 * t1 * t2 * D % P
    dd = 2 * z1 * z2 % P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _double(a):
    x1, y1, z1, _ = a
    aa = x1 * x1 % P
    bb = y1 * y1 % P
    cc = 2 * z1 * z1 % P
    h = aa + bb
    e = h - (x1 + y1) * (x1 + y1)
    g = aa - bb
    f = cc + g
    return (e * f % P, g * h % P, f * g % P, e * h % P)


_ZERO = (0, 1, 1, 0)


def _mul(k: int, pt):
    """k * pt, double and add from the top bit."""
    q = _ZERO
    for i in reversed(range(k.bit_length())):
        q = _double(q)
        if (k >> i) & 1:
            q = _add(q, pt)
    return q


def _recover_x(y: int, sign: int):
    """x for y on the curve with the given low bit (RFC 8032 5.1.3), or None."""
    if y >= P:
        return None
    u = (y * y - 1) % P
    v = (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    if (v * x * x - u) % P != 0:
        x = x * _SQRT_M1 % P
    if (v * x * x - u) % P != 0:
        return None
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = P - x
    return x


_BY = 4 * _inv(5) % P
_BX = _recover_x(_BY, 0)
BASE = (_BX, _BY, 1, _BX * _BY % P)


def _encode(pt) -> bytes:
    x, y, z, _ = pt
    zi = _inv(z)
    x, y = x * zi % P, y * zi % P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


def _decode(b: bytes):
    if len(b) != 32:
        return None
    n = int.from_bytes(b, "little")
    y, sign = n & ((1 << 255) - 1), n >> 255
    x = _recover_x(y, sign)
    if x is None:
        return None
    return (x, y, 1, x * y % P)


def _same(a, b) -> bool:
    x1, y1, z1, _ = a
    x2, y2, z2, _ = b
    return (x1 * z2 - x2 * z1) % P == 0 and (y1 * z2 - y2 * z1) % P == 0


def _expand(seed: bytes):
    if len(seed) != 32:
        raise ValueError(f"an Ed25519 seed is 32 bytes, not {len(seed)}")
    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little")
    a &= (1 << 254) - 8  # clear the 3 low bits and bit 255
    a |= 1 << 254
    return a, h[32:]


def public_key(seed: bytes) -> bytes:
    """The 32-byte public key of a 32-byte private key (seed)."""
    a, _ = _expand(seed)
    return _encode(_mul(a, BASE))


def _hash_int(*parts: bytes) -> int:
    return int.from_bytes(hashlib.sha512(b"".join(parts)).digest(), "little") % L


def sign(seed: bytes, msg: bytes) -> bytes:
    """The 64-byte signature R || S of msg."""
    a, prefix = _expand(seed)
    pub = _encode(_mul(a, BASE))
    r = _hash_int(prefix, msg)
    rb = _encode(_mul(r, BASE))
    s = (r + _hash_int(rb, pub, msg) * a) % L
    return rb + s.to_bytes(32, "little")


def verify(pub: bytes, msg: bytes, sig: bytes) -> bool:
    """True when sig is a valid signature of msg by pub (checks [S]B = R + [k]A)."""
    if len(sig) != 64:
        return False
    a_pt, r_pt = _decode(pub), _decode(sig[:32])
    s = int.from_bytes(sig[32:], "little")
    if a_pt is None or r_pt is None or s >= L:
        return False
    k = _hash_int(sig[:32], pub, msg)
    return _same(_mul(s, BASE), _add(r_pt, _mul(k, a_pt)))
