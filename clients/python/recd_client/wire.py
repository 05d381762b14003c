# SPDX-License-Identifier: MIT
# recd's wire encodings without sockets (docs/wire.md): binary frames and NDJSON lines from the
# message dicts of docs/protocol.md, client URLs, and the server's error reply.
import base64
import json
import re
import struct
from dataclasses import dataclass
from typing import Optional
from urllib.parse import unquote, urlsplit

from .formats import FORMATS, EncodeError

MAGIC = 0xD7
VERSION = 1
TYPES = {"open": 1, "state": 2, "event": 3, "flush": 4, "close": 5, "save": 6}
TYPE_ERROR = 0x7F
FLAG_SEQ, FLAG_TIME, FLAG_RESUME, FLAG_RING = 1, 2, 4, 8
DEFAULT_MAX_FRAME = 65536
_KEY = re.compile(r"[A-Za-z0-9._-]{1,64}\Z")
_TOKEN = re.compile(r"[\x21-\x7e]{1,256}\Z")


def check_session_key(key) -> str:
    if not isinstance(key, str) or not _KEY.match(key) or key.startswith("."):
        raise EncodeError(f"session: {key!r} is not a valid session key "
                          "(1..64 bytes of A-Z a-z 0-9 . _ -, not starting with '.')")
    return key


def _check_common(m: dict) -> str:
    if m.get("type") not in TYPES:
        raise EncodeError(f"type: {m.get('type')!r} is not open, state, event, flush, close or save")
    seq = m.get("seq")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < 2**63):
        raise EncodeError(f"seq: {seq!r} is not 0 .. 2^63-1")
    if m["type"] == "open":
        tok = m.get("auth")
        if tok is not None and (not isinstance(tok, str) or not _TOKEN.match(tok)):
            raise EncodeError("open.auth: 1-256 printable ASCII bytes without spaces")
    return check_session_key(m.get("session"))


def encode_ndjson(m: dict, omit_session: bool, max_frame: int = DEFAULT_MAX_FRAME,
                  fmt_name: Optional[str] = None) -> bytes:
    """One line. Every field passes through, so any format (carla too) works without a table
    entry; the daemon checks the fields and names the bad one."""
    _check_common(m)
    fmt = FORMATS.get(fmt_name) if fmt_name else None
    if fmt and fmt.time_key and m["type"] in ("state", "event") and fmt.time_key not in m:
        raise EncodeError(f"{m['type']}.{fmt.time_key}: missing (NDJSON always carries the time)")
    out = {k: v for k, v in m.items() if not (omit_session and k == "session")}
    try:
        line = json.dumps(out, separators=(",", ":"), allow_nan=False, default=_json_default)
    except ValueError:
        raise EncodeError(f"{m['type']}: NaN and infinities are refused (JSON has no literal "
                          "for them and recd never records them)") from None
    data = line.encode("utf-8")
    if len(data) > max_frame:
        raise EncodeError(f"{m['type']}: the line is {len(data)} bytes, over max frame {max_frame}")
    return data + b"\n"


def _json_default(v):
    if isinstance(v, (bytes, bytearray)):  # bytes fields are base64 in JSON
        return base64.b64encode(bytes(v)).decode("ascii")
    raise TypeError(f"{type(v).__name__} is not JSON serialisable")


def encode_binary(m: dict, fmt_name: Optional[str], omit_key: bool,
                  max_frame: int = DEFAULT_MAX_FRAME) -> bytes:
    """One frame. fmt_name is the session's format (the open's own for an open). A state or event
    without its time key is sent without has_time: the daemon stamps it on arrival."""
    key = _check_common(m)
    mtype = m["type"]
    fmt = FORMATS.get(fmt_name) if fmt_name else None
    if mtype in ("open", "state", "event") and fmt is None:
        raise EncodeError(f"{mtype}: format {fmt_name!r} has no binary encoding in this client "
                          "(use ?encoding=ndjson, or add it to recd_client.formats.FORMATS)")
    flags = 0
    head = b""
    if "seq" in m and m["seq"] is not None:
        flags |= FLAG_SEQ
        head += struct.pack("<Q", m["seq"])
    if mtype == "open":
        if m.get("resume"):
            flags |= FLAG_RESUME
        if m.get("ring"):
            flags |= FLAG_RING
        start = m.get("start_time", 0)
        if isinstance(start, bool) or not isinstance(start, int) or not -2**63 <= start < 2**63:
            raise EncodeError("open.start_time: not an i64")
        tok = (m.get("auth") or "").encode("ascii")
        if len(tok) > 255:
            raise EncodeError("open.auth: binary tokens are at most 255 bytes")
        payload = struct.pack("<BqB", fmt.code, start, len(tok)) + tok + fmt.open_extra(m)
    elif mtype in ("state", "event"):
        if fmt.time_key is None:  # the payload carries its own time (carla): send 0
            flags |= FLAG_TIME
            head += struct.pack("<Q", 0)
        elif fmt.time_key in m:
            t = m[fmt.time_key]
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t <= fmt.time_max:
                raise EncodeError(f"{mtype}.{fmt.time_key}: {t!r} is not 0 .. {fmt.time_max}")
            flags |= FLAG_TIME
            head += struct.pack("<Q", t)
        if mtype == "state":
            payload = fmt.state(m)
        elif fmt.event is None:
            raise EncodeError(f"event: format {fmt.name} has no events")
        else:
            payload = fmt.event(m)
    elif mtype == "save":
        last = m.get("last_ms")
        if isinstance(last, bool) or not isinstance(last, int) or not 1 <= last <= 0xFFFFFFFF:
            raise EncodeError(f"save.last_ms: {last!r} is not 1 .. 2^32-1")
        label = m.get("label")
        try:
            check_session_key(label)
        except EncodeError:
            raise EncodeError(f"save.label: {label!r} is not 1..64 bytes of A-Z a-z 0-9 . _ - "
                              "(not starting with '.')") from None
        payload = struct.pack("<IB", last, len(label)) + label.encode("ascii")
    elif mtype == "flush":
        end = m.get("end_tick")
        payload = b"" if end is None else struct.pack("<Q", _u63(end, "flush.end_tick"))
    else:
        end = m.get("end_time")
        if end is not None and (isinstance(end, bool) or not isinstance(end, int) or not -2**63 <= end < 2**63):
            raise EncodeError(f"close.end_time: {end!r} is not an i64")
        payload = b"" if end is None else struct.pack("<q", end)
    kb = b"" if omit_key else key.encode("ascii")
    body = bytes([len(kb)]) + kb + head + payload
    if len(body) > max_frame:
        raise EncodeError(f"{mtype}: the frame body is {len(body)} bytes, over max frame {max_frame}")
    return struct.pack("<BBBBI", MAGIC, VERSION, TYPES[mtype], flags, len(body)) + body


def _u63(v, where):
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**63:
        raise EncodeError(f"{where}: {v!r} is not 0 .. 2^63-1")
    return v


def decode_error_reply(data: bytes) -> Optional[str]:
    """The server's error message from what it sent before closing; None when it sent nothing.
    Bytes that are not an error reply are reported as such rather than ignored."""
    if not data:
        return None
    if data[0] == MAGIC:
        if len(data) >= 11 and data[2] == TYPE_ERROR:
            body = data[8:8 + struct.unpack_from("<I", data, 4)[0]]
            klen = body[0] if body else 0
            if len(body) >= 3 + klen:
                (mlen,) = struct.unpack_from("<H", body, 1 + klen)
                text = body[3 + klen:3 + klen + mlen].decode("ascii", "replace")
                key = body[1:1 + klen].decode("ascii", "replace")
                return f"session '{key}': {text}" if key else text
    else:
        line = data.split(b"\n", 1)[0]
        try:
            obj = json.loads(line)
            if isinstance(obj, dict) and obj.get("type") == "error":
                return str(obj.get("message", ""))
        except ValueError:
            pass
    return f"server sent {len(data)} bytes that are not an error reply"


@dataclass(frozen=True)
class TlsOptions:
    """A tls:// URL's options (docs/wire.md, "TLS"); "" when absent."""
    ca: str = ""  # PEM CA certificates the server's must chain to; "" = the system's store
    cert: str = ""  # PEM client certificate (chain)
    key: str = ""  # its PEM private key; "" = in the cert file
    servername: str = ""  # the name the server's certificate must hold; "" = the URL's host


@dataclass(frozen=True)
class Url:
    transport: str  # "tcp", "tls", "udp" or "unix"
    host: str
    port: int
    path: str
    encoding: str  # "binary" or "ndjson"
    tls: Optional[TlsOptions] = None  # tls:// only


_TLS_KEYS = ("ca", "cert", "key", "servername")


def _query(url: str, text: str, keys) -> dict:
    """KEY=VALUE&... percent-decoded ('+' stays '+', as in librecd); unknown, repeated or empty
    options are errors."""
    got = {}
    for item in filter(None, text.split("&")):
        key, _, value = item.partition("=")
        if key not in keys:
            raise ValueError(f"bad URL {url!r}: unknown query key {key!r} ({', '.join(keys)})")
        if key in got:
            raise ValueError(f"bad URL {url!r}: {key} is given twice")
        if not value:
            raise ValueError(f"bad URL {url!r}: {key}= needs a value")
        got[key] = unquote(value)
    return got


def parse_url(url: str) -> Url:
    """tcp://HOST:PORT, udp://HOST:PORT, unix:///path, each with an optional ?encoding=E;
    tls://HOST:PORT also takes ?ca=FILE&cert=FILE&key=FILE&servername=NAME."""
    parts = urlsplit(url)
    scheme = parts.scheme
    if scheme not in ("tcp", "tls", "udp", "unix"):
        raise ValueError(f"bad URL {url!r}: the scheme must be tcp, tls, udp or unix")
    query = _query(url, parts.query, ("encoding",) + (_TLS_KEYS if scheme == "tls" else ()))
    tls = None
    if scheme == "tls":
        tls = TlsOptions(**{k: query.get(k, "") for k in _TLS_KEYS})
        if tls.key and not tls.cert:
            raise ValueError(f"bad URL {url!r}: key= without cert=: the key belongs to a client "
                             "certificate")
    enc = query.get("encoding", "binary")
    if enc not in ("binary", "ndjson", "auto"):
        raise ValueError(f"bad URL {url!r}: encoding must be binary, ndjson or auto")
    enc = "binary" if enc == "auto" else enc
    if scheme == "unix":
        path = parts.netloc + parts.path
        if not path:
            raise ValueError(f"bad URL {url!r}: no socket path")
        return Url("unix", "", 0, path, enc)
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"bad URL {url!r}: the port is out of range") from None
    if not parts.hostname or not port:
        raise ValueError(f"bad URL {url!r}: HOST:PORT with a port 1..65535 is required")
    return Url(scheme, parts.hostname, port, "", enc, tls)
