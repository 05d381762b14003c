# SPDX-License-Identifier: MIT
# NATS credentials for the JetStream publisher (nats.py): nkeys (Ed25519 keys written as base32
# with a type prefix and a CRC-16/XMODEM trailer), .creds files (a user JWT and its nkey seed
# between BEGIN/END lines) and the CONNECT fields that answer the server's nonce.
import base64
import os
from dataclasses import dataclass
from typing import Optional

from . import ed25519

FILE_MAX = 64 * 1024  # a .creds file is about 1 KiB; a seed file under 100 bytes

# The first base32 character of an encoded key names its type (the prefix byte's top 5 bits).
PREFIX_SEED = 18 << 3  # 'S'
PREFIX_USER = 20 << 3  # 'U'
PREFIX_ACCOUNT = 0  # 'A'
PREFIX_OPERATOR = 14 << 3  # 'O'
_NAMES = {PREFIX_USER: "user", PREFIX_ACCOUNT: "account", PREFIX_OPERATOR: "operator",
          13 << 3: "server", 2 << 3: "cluster"}


def crc16_xmodem(data: bytes) -> int:
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def _b32(raw: bytes) -> str:
    return base64.b32encode(raw).decode("ascii").rstrip("=")


def _unb32(text: str, what: str) -> bytes:
    try:
        return base64.b32decode(text + "=" * (-len(text) % 8))
    except ValueError:
        raise ValueError(f"{what}: not base32 (A-Z, 2-7)") from None


def _with_crc(raw: bytes) -> bytes:
    return raw + crc16_xmodem(raw).to_bytes(2, "little")


def encode_public(prefix: int, key: bytes) -> str:
    """A public nkey ('U...' for PREFIX_USER) from a 32-byte Ed25519 public key."""
    return _b32(_with_crc(bytes([prefix]) + key))


def encode_seed(prefix: int, seed: bytes) -> str:
    """An nkey seed ('SU...' for a user) from 32 bytes of Ed25519 private key."""
    if len(seed) != 32:
        raise ValueError("an nkey seed holds 32 bytes")
    head = bytes([PREFIX_SEED | (prefix >> 5), (prefix & 31) << 3])
    return _b32(_with_crc(head + seed))


def decode_seed(text: str, what: str = "nkey seed"):
    """(type prefix, 32-byte private key) of an encoded seed; ValueError naming what is wrong."""
    text = text.strip()
    if not text.startswith("S"):
        raise ValueError(f"{what}: a seed starts with 'S' (like SU... for a user), "
                         f"not {text[:2]!r}")
    raw = _unb32(text, what)
    if len(raw) != 36:
        raise ValueError(f"{what}: {len(raw)} bytes after base32, a seed has 36")
    if crc16_xmodem(raw[:-2]) != int.from_bytes(raw[-2:], "little"):
        raise ValueError(f"{what}: the checksum does not match (a mistyped or truncated seed)")
    if raw[0] & 0xF8 != PREFIX_SEED:
        raise ValueError(f"{what}: not a seed")
    prefix = ((raw[0] & 7) << 5) | (raw[1] >> 3)
    if prefix not in _NAMES:
        raise ValueError(f"{what}: an unknown key type")
    return prefix, raw[2:34]


def _read(path: str, what: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(FILE_MAX + 1)
    except OSError as e:
        raise ValueError(f"{what} {path}: {e.strerror}") from None
    if len(data) > FILE_MAX:
        raise ValueError(f"{what} {path}: larger than {FILE_MAX} bytes")
    try:
        return data.decode("ascii")
    except UnicodeDecodeError as e:
        raise ValueError(f"{what} {path}: not ASCII text (byte offset {e.start})") from None


def _block(text: str, word: str) -> Optional[str]:
    """The first non-empty line after a '---...BEGIN ...word...---' line."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("---") and "BEGIN" in line and word in line:
            for body in lines[i + 1:]:
                if body.strip():
                    return None if body.startswith("---") else body.strip()
    return None


@dataclass(frozen=True)
class Credentials:
    """What answers an auth_required server: a user JWT (.creds) or a bare nkey, with the seed
    that signs the nonce; or a user and password; or a token."""
    jwt: Optional[str] = None
    seed: Optional[bytes] = None  # 32-byte Ed25519 private key
    user: Optional[str] = None
    password: Optional[str] = None
    token: Optional[str] = None

    @property
    def nkey(self) -> Optional[str]:
        return encode_public(PREFIX_USER, ed25519.public_key(self.seed)) if self.seed else None

    def connect_fields(self, nonce: Optional[str]) -> dict:
        out = {}
        if self.seed is not None:
            if self.jwt:
                out["jwt"] = self.jwt
            else:
                out["nkey"] = self.nkey
            if nonce:
                sig = ed25519.sign(self.seed, nonce.encode("utf-8"))
                out["sig"] = base64.urlsafe_b64encode(sig).decode("ascii").rstrip("=")
        if self.user is not None:
            out["user"] = self.user
            out["pass"] = self.password or ""
        if self.token is not None:
            out["auth_token"] = self.token
        return out


def _user_seed(text: str, what: str) -> bytes:
    prefix, seed = decode_seed(text, what)
    if prefix != PREFIX_USER:
        raise ValueError(f"{what}: the seed of a {_NAMES[prefix]}, a user seed (SU...) is needed")
    return seed


def load_creds(path: str) -> Credentials:
    """A .creds file: '-----BEGIN NATS USER JWT-----', the JWT, then '-----BEGIN USER NKEY
    SEED-----' and the seed."""
    text = _read(path, "creds file")
    jwt = _block(text, "JWT")
    seed = _block(text, "SEED")
    if not jwt or jwt.count(".") != 2:
        raise ValueError(f"creds file {path}: no user JWT (a '-----BEGIN NATS USER JWT-----' "
                         "line followed by the JWT)")
    if not seed:
        raise ValueError(f"creds file {path}: no seed (a '-----BEGIN USER NKEY SEED-----' line "
                         "followed by SU...)")
    return Credentials(jwt=jwt, seed=_user_seed(seed, f"creds file {path}"))


def load_nkey(path: str) -> Credentials:
    """A file holding a user's nkey seed (SU..., as `nk -gen user` writes it), alone or in the
    seed block of a .creds-like file."""
    text = _read(path, "nkey seed file")
    seed = _block(text, "SEED") or text.strip()
    return Credentials(seed=_user_seed(seed, f"nkey seed file {path}"))


def generate_user_seed() -> str:
    """A fresh user seed (SU...), for tests and tooling."""
    return encode_seed(PREFIX_USER, os.urandom(32))


def public_of_seed(seed_text: str) -> str:
    """The public nkey of an encoded seed (U... for a user seed)."""
    prefix, seed = decode_seed(seed_text)
    return encode_public(prefix, ed25519.public_key(seed))
