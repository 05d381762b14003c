# SPDX-License-Identifier: MIT
# Publishing wire frames to NATS JetStream on the plain NATS text protocol (no nats-py: the module
# stays standard library only). The subject of a session is the one recd/fleet.h computes
# (PREFIX.<partition>.~, or PREFIX.<partition>.<key token> with subjects=session; docs/fleet.md);
# every publish waits for JetStream's ack with a
# bounded number in flight, and a publish that is never confirmed is counted and reported.
import json
import os
import re
import selectors
import socket
import ssl
import time
from dataclasses import dataclass, field
from typing import Dict, Optional
from urllib.parse import unquote, urlsplit

from .fleet_pack import LINGER_MAX_MS, PACK_BYTES_MAX, PACK_BYTES_MIN
from .nkeys import Credentials, load_creds, load_nkey

DEFAULT_PORT = 4222
SUBJECT_LAYOUTS = ("partition", "session")  # ?subjects=: PREFIX.<p>.~ (default), PREFIX.<p>.<key>
DEFAULT_PARTITIONS = 8
PARTITIONS_MAX = 1024
PREFIX_MAX = 128
_PREFIX = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\Z")
_LINE_MAX = 64 * 1024  # a protocol line (INFO is the longest) never comes near this
_ACK_MAX = 64 * 1024  # an ack is a short JSON object
_NOSIGNAL = getattr(socket, "MSG_NOSIGNAL", 0)
_TLS_CHUNK = 16384  # one TLS record a send
_WOULD_BLOCK = (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError)


class PublishError(Exception):
    """Publishes JetStream did not confirm: the count and the first reason."""

    def __init__(self, lost: int, first: str, last: str = ""):
        why = f"first: {first}" + (f"; last: {last}" if last and last != first else "")
        super().__init__(f"{lost} messages were not confirmed by JetStream ({why})")
        self.lost = lost
        self.first = first
        self.last = last or first


_OPTIONS = ("partitions", "max_in_flight", "buffer", "ack_timeout", "pack_bytes", "linger",
            "encoding", "subjects",
            "tls_ca", "tls_cert", "tls_key", "creds", "nkey")
_SIZE = re.compile(r"(\d{1,19}) ?(B|KiB|MiB|GiB|TiB)?\Z")
_SIZE_UNITS = {None: 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_DURATION = re.compile(r"(\d{1,12})(ms|d|h|m|s)")
_DURATION_UNITS = ("d", "h", "m", "s", "ms")
_DURATION_MS = {"d": 86400000, "h": 3600000, "m": 60000, "s": 1000, "ms": 1}


@dataclass(frozen=True)
class NatsUrl:
    host: str
    port: int
    prefix: str
    # nats://USER:PASSWORD@HOST or nats://TOKEN@HOST (percent-decoded)
    user: Optional[str] = None
    password: Optional[str] = field(default=None, repr=False)
    token: Optional[str] = field(default=None, repr=False)
    # The query options (None when absent): those of recd_client_connect() in C...
    partitions: Optional[int] = None
    max_in_flight: Optional[int] = None
    buffer_bytes: Optional[int] = None
    ack_timeout: Optional[float] = None  # seconds
    pack_bytes: Optional[int] = None  # 0: one frame per message
    linger: Optional[float] = None  # seconds
    subjects: Optional[str] = None  # "partition" (PREFIX.<p>.~) or "session" (PREFIX.<p>.<key>)
    # ... and TLS and credentials files, named like recd's nats.* options.
    tls_ca: Optional[str] = None
    tls_cert: Optional[str] = None
    tls_key: Optional[str] = None
    creds: Optional[str] = None
    nkey: Optional[str] = None  # a file holding a user's nkey seed


def _parse_size(v: str) -> int:
    m = _SIZE.match(v)
    if not m:
        raise ValueError
    return int(m.group(1)) * _SIZE_UNITS[m.group(2)]


def _parse_duration_ms(v: str) -> int:
    """recd's durations: numbers with units from d down to ms, each unit once (1m30s)."""
    total, at, order = 0, 0, -1
    while at < len(v):
        m = _DURATION.match(v, at)
        if not m:
            raise ValueError
        unit = _DURATION_UNITS.index(m.group(2))
        if unit <= order:
            raise ValueError
        order = unit
        total += int(m.group(1)) * _DURATION_MS[m.group(2)]
        at = m.end()
    if not v:
        raise ValueError
    return total


_RANGES = {"partitions": "a number from 1 to 1024", "max_in_flight": "a number from 1 to 1000000",
           "buffer": "a size from 1KiB to 1GiB (e.g. 8MiB)",
           "ack_timeout": "a duration from 1ms to 1h (e.g. 10s)",
           "pack_bytes": "0 (one frame per message) or a size from 256 to 512KiB (e.g. 64KiB)",
           "linger": "a duration from 1ms to 10s (e.g. 20ms)", "encoding": "binary",
           "subjects": "partition (PREFIX.<p>.~) or session (PREFIX.<p>.<key>)"}


def _option(url: str, name: str, v: str):
    """The typed value of one query option; ValueError naming the URL."""
    try:
        if name in ("tls_ca", "tls_cert", "tls_key", "creds", "nkey"):
            if not v or "\0" in v:
                raise ValueError
            return v
        if name == "partitions" and v.isdigit() and 1 <= int(v) <= PARTITIONS_MAX:
            return int(v)
        if name == "max_in_flight" and v.isdigit() and 1 <= int(v) <= 1000000:
            return int(v)
        if name == "buffer" and (1 << 10) <= _parse_size(v) <= (1 << 30):
            return _parse_size(v)
        if name == "ack_timeout" and 1 <= _parse_duration_ms(v) <= 3600000:
            return _parse_duration_ms(v) / 1000.0
        if name == "pack_bytes" and (_parse_size(v) == 0 or
                                     PACK_BYTES_MIN <= _parse_size(v) <= PACK_BYTES_MAX):
            return _parse_size(v)
        if name == "linger" and 1 <= _parse_duration_ms(v) <= LINGER_MAX_MS:
            return _parse_duration_ms(v) / 1000.0
        if name == "encoding" and v == "binary":
            return v
        if name == "subjects" and v in SUBJECT_LAYOUTS:
            return v
    except ValueError:
        pass
    want = _RANGES.get(name, "a file path")
    raise ValueError(f"bad URL {url!r}: {name}={v}: expected {want}")


def parse_nats_url(url: str) -> NatsUrl:
    """nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT]/PREFIX[?OPTION=VALUE&...] (IPv6 as [::1]): the
    rules of recd_fleet_url_parse() and the query options of recd_client_connect(), plus
    tls_ca, tls_cert, tls_key, creds and nkey (file paths, percent-encoded)."""
    parts = urlsplit(url)
    if parts.scheme != "nats":
        raise ValueError(f"bad URL {url!r}: not a nats:// URL")
    if parts.fragment:
        raise ValueError(f"bad URL {url!r}: a nats:// URL takes no #fragment")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"bad URL {url!r}: the port must be 1..65535") from None
    if not parts.hostname:
        raise ValueError(f"bad URL {url!r}: the host is empty")
    if parts.netloc.endswith(":") or port == 0:
        raise ValueError(f"bad URL {url!r}: the port must be 1..65535")
    prefix = parts.path[1:] if parts.path.startswith("/") else ""
    if not prefix:
        raise ValueError(f"bad URL {url!r}: a subject prefix is needed: nats://HOST:PORT/PREFIX")
    if len(prefix) > PREFIX_MAX:
        raise ValueError(f"bad URL {url!r}: the subject prefix is longer than {PREFIX_MAX} bytes")
    if not _PREFIX.match(prefix):
        raise ValueError(f"bad URL {url!r}: the subject prefix must be tokens of [A-Za-z0-9_-] "
                         "joined by '.' (e.g. recd.eu)")
    opts = {}
    for item in parts.query.split("&") if parts.query else ():
        name, eq, value = item.partition("=")
        if name not in _OPTIONS:
            raise ValueError(f"bad URL {url!r}: unknown option {name[:40]!r} "
                             f"({', '.join(_OPTIONS)})")
        if name in opts:
            raise ValueError(f"bad URL {url!r}: {name} is given twice")
        opts[name] = _option(url, name, unquote(value) if eq else "")
    opts.pop("encoding", None)
    if "buffer" in opts:
        opts["buffer_bytes"] = opts.pop("buffer")
    user = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    if user is not None and not user:
        raise ValueError(f"bad URL {url!r}: the user (or token) before '@' is empty")
    token = None
    if user is not None and password is None:
        token, user = user, None  # nats://TOKEN@HOST
    return NatsUrl(parts.hostname, port or DEFAULT_PORT, prefix, user, password, token, **opts)


def fleet_partition(key: str, partitions: int) -> int:
    """FNV-1a (32 bit) of the key's bytes modulo partitions: recd_fleet_partition()."""
    h = 2166136261
    for b in key.encode("ascii"):
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h % partitions if partitions else 0


def fleet_subject(prefix: str, key: str, partitions: int, subjects: str = "partition") -> str:
    """PREFIX.<partition>.~ (recd_fleet_subject()), or with subjects="session" the earlier
    PREFIX.<partition>.<key with '.' as '~'>. The key must already be a valid session key
    (wire.check_session_key)."""
    if not 1 <= partitions <= PARTITIONS_MAX:
        raise ValueError(f"partitions: {partitions} is not 1..{PARTITIONS_MAX}")
    if subjects not in SUBJECT_LAYOUTS:
        raise ValueError(f"subjects: {subjects!r} is not one of {', '.join(SUBJECT_LAYOUTS)}")
    token = key.replace(".", "~") if subjects == "session" else "~"
    return f"{prefix}.{fleet_partition(key, partitions)}.{token}"


class NatsPublisher:
    """One connection to a NATS server with JetStream; publish() queues a payload on a subject
    and waits for acks once max_in_flight are outstanding; flush() waits for every ack.

    When the server goes away, the publishes written to it and not confirmed are counted as lost
    (they may or may not be stored); those not written yet and later ones are kept, up to
    buffer_bytes, while the publisher tries to connect again, and are sent when it does. Whatever
    does not fit, or is still kept when the reconnect attempts run out, is lost too. Losses are
    never silent: publish() (a full buffer), flush() and close() raise PublishError naming how
    many were not confirmed.

    TLS: tls_ca (CA certificates, PEM) turns it on and is what the server's certificate must
    chain to, for the URL's host name; tls_cert and tls_key are a client certificate for servers
    that verify clients. A server that says tls_required gets TLS too (checked against the
    system's CAs without tls_ca). Asking for TLS of a server that does not offer it fails: never
    clear text. Credentials: creds (a .creds file: user JWT and nkey seed), nkey (a file with a
    user's nkey seed, SU...), or the URL's USER:PASSWORD@ or TOKEN@. Each of these may be given
    here or as a query option of the URL, not both.
    """

    def __init__(self, url: NatsUrl, *, max_in_flight: int = 1024, ack_timeout: float = 10.0,
                 connect_timeout: float = 5.0, buffer_bytes: int = 8 << 20,
                 batch_bytes: int = 65536, reconnect_attempts: int = 8,
                 reconnect_delay: float = 0.1, name: str = "recd_client.py",
                 tls_ca: Optional[str] = None, tls_cert: Optional[str] = None,
                 tls_key: Optional[str] = None, creds: Optional[str] = None,
                 nkey: Optional[str] = None):
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.url = url
        tls_ca = _one_of(url, "tls_ca", tls_ca)
        tls_cert = _one_of(url, "tls_cert", tls_cert)
        tls_key = _one_of(url, "tls_key", tls_key)
        creds = _one_of(url, "creds", creds)
        nkey = _one_of(url, "nkey", nkey)
        self._tls = _tls_context(tls_ca, tls_cert, tls_key)
        self._tls_ca = tls_ca
        self._tls_cert = tls_cert
        self._creds = _credentials(url, creds, nkey)
        self.max_in_flight = max_in_flight
        self.ack_timeout = ack_timeout
        self.connect_timeout = connect_timeout
        self.buffer_bytes = buffer_bytes
        self.batch_bytes = batch_bytes
        self.reconnect_attempts = reconnect_attempts
        self.reconnect_delay = reconnect_delay
        self.name = name
        self.published = 0  # PUBs queued for the server (again after a reconnect)
        self.acked = 0
        self.lost = 0  # refused, unconfirmed when the server went away, or over the buffer
        self.reconnects = 0
        self._reported = 0  # lost publishes already raised as PublishError
        self.first_error = ""
        self.last_error = ""
        self.max_payload = 1 << 20
        self._inbox = "_INBOX." + os.urandom(11).hex()
        self._next_id = 0
        self._inflight: Dict[int, int] = {}  # ack token -> payload size, awaiting their ack
        self._out = bytearray()  # PUB commands not yet written
        self._out_msgs = []  # (token, subject, payload) of those, kept if none of it leaves
        self._unwritten = []  # the same for the data being written, while none of it has left
        self._next_try = 0  # backlog size at which publish() tries to reconnect once
        self._down_why = ""
        self._backlog = []  # (subject, payload) kept while disconnected
        self._backlog_bytes = 0
        self._rx = bytearray()
        self._sock: Optional[socket.socket] = None
        self._closed = False
        self._writing = False
        self._pongs = 0  # PINGs read, to answer after the data being written
        self._connect()

    # ---- public API ----

    def publish(self, subject: str, payload: bytes) -> None:
        if self._closed:
            raise ValueError("publish on a closed NatsPublisher")
        if len(payload) > self.max_payload:
            raise ValueError(f"a {len(payload)}-byte message is over the server's max_payload "
                             f"{self.max_payload}")
        if self._sock is None:
            self._keep(subject, payload)
            return
        self._queue_pub(subject, payload)
        if len(self._out) >= self.batch_bytes:
            self._write_out()
        if len(self._inflight) >= self.max_in_flight:
            self._wait_acks(self.max_in_flight - 1)

    def flush(self, wait_acks: bool = True) -> None:
        """Sends everything queued and, with wait_acks, waits until every publish is confirmed
        or counted lost (ack_timeout); raises PublishError for losses not reported before."""
        if self._sock is not None:
            self._write_out()
        if self._sock is None and self._backlog and wait_acks:
            self._reconnect(self.reconnect_attempts, True)
        if self._sock is not None:
            if wait_acks:
                self._wait_acks(0)
            else:
                self._poll()
        self._report()

    def close(self) -> None:
        """Waits for every ack (flush) and ends the connection; raises PublishError for every
        publish never confirmed, including those reported before. Only the first call acts."""
        if self._closed:
            return
        self._closed = True
        try:
            self.flush()
        except PublishError:
            pass
        finally:
            self._drop_socket()
            self._lose(len(self._inflight), "the publisher closed before their ack")
            self._inflight.clear()
            self._out.clear()
            self._out_msgs = []
            self._lose(len(self._backlog), f"{self._where()} was still unreachable at close")
            self._backlog, self._backlog_bytes = [], 0
        if self.lost:
            self._reported = self.lost
            raise PublishError(self.lost, self.first_error, self.last_error)

    def abort(self) -> None:
        """Ends the connection without waiting (after an exception in the caller)."""
        self._closed = True
        self._drop_socket()

    @property
    def in_flight(self) -> int:
        return len(self._inflight)

    # ---- connection ----

    def _connect(self) -> None:
        s = socket.create_connection((self.url.host, self.url.port), timeout=self.connect_timeout)
        try:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sock = s
            self._rx.clear()
            deadline = time.monotonic() + self.connect_timeout
            line = self._read_line(deadline)
            if not line.startswith(b"INFO "):
                raise ConnectionError(f"{self._where()}: not a NATS server (it said {line[:60]!r})")
            try:
                info = json.loads(line[5:])
            except ValueError:
                info = None
            if not isinstance(info, dict):
                raise ConnectionError(f"{self._where()}: a malformed INFO line: {line[:80]!r}")
            tls = bool(info.get("tls_required") or (self._tls and info.get("tls_available")))
            if self._tls and not tls:
                raise ConnectionError(f"{self._where()}: TLS was asked for (tls_ca/tls_cert) "
                                      "but the server does not offer it; not connecting in "
                                      "clear text")
            if tls:
                s = self._sock = self._start_tls(s, deadline)
            if info.get("auth_required") and self._creds is None:
                raise ConnectionError(f"{self._where()}: the server requires authentication: "
                                      "give creds= (a .creds file), nkey= (a user's nkey seed "
                                      "file) or USER:PASSWORD@ / TOKEN@ in the URL")
            if not info.get("jetstream", True):
                raise ConnectionError(f"{self._where()}: JetStream is off (nats-server -js)")
            self.max_payload = int(info.get("max_payload", self.max_payload))
            connect = {"verbose": False, "pedantic": False, "headers": False, "lang": "python",
                       "version": "0.1.0", "name": self.name, "protocol": 1,
                       "tls_required": tls}
            if self._creds is not None:
                nonce = info.get("nonce")
                connect.update(self._creds.connect_fields(nonce if isinstance(nonce, str)
                                                          else None))
            self._sendall(b"CONNECT " + json.dumps(connect).encode() + b"\r\n" +
                          f"SUB {self._inbox}.* 1\r\nPING\r\n".encode())
            while True:  # the PONG says CONNECT and SUB were taken
                line = self._read_line(deadline)
                if line == b"PONG":
                    break
                if line.startswith(b"-ERR"):
                    err = line.decode("ascii", "replace")
                    if "authorization" in err.lower() or "authentication" in err.lower():
                        raise ConnectionError(f"{self._where()}: the server refused "
                                              f"{self._who()}: {err}")
                    raise ConnectionError(f"{self._where()}: {err}")
                if line == b"PING":
                    self._sendall(b"PONG\r\n")
            if isinstance(s, ssl.SSLSocket):
                s.setblocking(False)  # a TLS record may be no data: never block in recv
            else:
                s.settimeout(None)
            self._sel = selectors.DefaultSelector()
            self._sel.register(s, selectors.EVENT_READ)
        except BaseException:
            self._sock = None
            s.close()
            raise

    def _start_tls(self, s: socket.socket, deadline: float) -> ssl.SSLSocket:
        """The TLS handshake right after INFO (the NATS upgrade), checking the certificate."""
        if self._rx:
            raise ConnectionError(f"{self._where()}: the server sent data before the TLS "
                                  "handshake")
        ctx = self._tls or _tls_context(None, None, None, True)
        try:
            t = ctx.wrap_socket(s, server_hostname=self.url.host, do_handshake_on_connect=False)
        except (ssl.SSLError, ValueError) as e:
            raise ConnectionError(f"{self._where()}: TLS: {e}") from None
        try:
            t.settimeout(max(deadline - time.monotonic(), 0.001))
            t.do_handshake()
        except ssl.SSLCertVerificationError as e:
            ca = f"tls_ca {self._tls_ca}" if self._tls_ca else "the system's CAs (no tls_ca)"
            t.close()
            raise ConnectionError(f"{self._where()}: TLS: the server's certificate was refused: "
                                  f"{e.verify_message} (checked against {ca} for the host "
                                  f"name {self.url.host})") from None
        except ssl.SSLError as e:
            t.close()
            raise ConnectionError(f"{self._where()}: TLS handshake failed: "
                                  f"{e.reason or e}{self._cert_hint(e)}") from None
        except BaseException:
            t.close()
            raise
        return t

    def _cert_hint(self, e: ssl.SSLError) -> str:
        if "CERTIFICATE" in str(e).upper() and not self._tls_cert:
            return " (does the server want a client certificate? tls_cert, tls_key)"
        return ""

    def _who(self) -> str:
        c = self._creds
        if c.jwt:
            return f"the credentials of user nkey {c.nkey}"
        if c.seed is not None:
            return f"user nkey {c.nkey}"
        if c.user is not None:
            return f"user {c.user!r} with its password"
        return "the token"

    def _reconnect(self, attempts: int, give_up: bool) -> bool:
        """Connects again and publishes the kept messages (what never left stays kept if the
        connection fails again); when every attempt fails and give_up is set, they are lost."""
        delay = self.reconnect_delay
        last = None
        for i in range(attempts):
            if i:
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
            try:
                self._connect()
            except (OSError, ValueError) as e:
                last = e
                continue
            self.reconnects += 1
            backlog, self._backlog, self._backlog_bytes = self._backlog, [], 0
            for n, (subject, payload) in enumerate(backlog):
                if self._sock is None:  # lost again: keep the rest, behind what never left
                    self._backlog.extend(backlog[n:])
                    self._backlog_bytes += sum(len(p) for _, p in backlog[n:])
                    break
                self._queue_pub(subject, payload)
                if len(self._out) >= self.batch_bytes:
                    self._write_out()
                if len(self._inflight) >= self.max_in_flight:
                    self._wait_acks(self.max_in_flight - 1)
            if self._sock is not None:
                self._write_out()
            if self._sock is not None:
                return True
            last = self._down_why
        self._next_try = self._backlog_bytes + self.batch_bytes
        if give_up:
            self._lose(len(self._backlog), f"reconnecting to {self._where()} failed: {last}")
            self._backlog, self._backlog_bytes = [], 0
        return False

    def _drop_socket(self) -> None:
        if self._sock is not None:
            self._sel.close()
            self._sock.close()
            self._sock = None

    def _connection_lost(self, why: str) -> None:
        """The server went away: what was written and not confirmed is lost (it may or may not
        be stored); what never left is kept, like the publishes that follow."""
        self._drop_socket()
        for token, subject, payload in self._unwritten + self._out_msgs:
            self._inflight.pop(token, None)
            self._backlog.append((subject, payload))
            self._backlog_bytes += len(payload)
        self._unwritten, self._out_msgs = [], []
        self._out.clear()
        self._next_try = 0
        unconfirmed = len(self._inflight)
        self._inflight.clear()
        self._lose(unconfirmed, f"{self._where()}: {why}")
        self._down_why = f"{self._where()}: {why}"

    def _where(self) -> str:
        host = f"[{self.url.host}]" if ":" in self.url.host else self.url.host
        return f"nats://{host}:{self.url.port}"

    # ---- publishing and acks ----

    def _queue_pub(self, subject: str, payload: bytes) -> None:
        token = self._next_id
        self._next_id += 1
        self._out += f"PUB {subject} {self._inbox}.{token} {len(payload)}\r\n".encode("ascii")
        self._out += payload
        self._out += b"\r\n"
        self._out_msgs.append((token, subject, payload))
        self._inflight[token] = len(payload)
        self.published += 1

    def _keep(self, subject: str, payload: bytes) -> None:
        if self._backlog_bytes + len(payload) > self.buffer_bytes:
            self._lose(1, f"{self._where()} is unreachable and the {self.buffer_bytes}-byte "
                          "buffer is full")
            self._report()
            return
        self._backlog.append((subject, payload))
        self._backlog_bytes += len(payload)
        if self._backlog_bytes >= self._next_try:
            self._reconnect(1, False)  # one quick attempt now and then; flush() tries in full

    def _lose(self, count: int, why: str) -> None:
        if count <= 0:
            return
        if not self.first_error:
            self.first_error = why
        self.last_error = why
        self.lost += count

    def _report(self) -> None:
        if self.lost > self._reported:
            self._reported = self.lost
            raise PublishError(self.lost, self.first_error, self.last_error)

    def _sendall(self, data: bytes) -> None:
        if isinstance(self._sock, ssl.SSLSocket):
            self._sock.sendall(data)  # no flags on SSL sockets; Python ignores SIGPIPE
        else:
            self._sock.sendall(data, _NOSIGNAL)

    def _ready(self, want_write: bool, timeout: float):
        """(readable, writable) within timeout; selectors, so any fd number works. Bytes TLS
        already decrypted count as readable: the socket itself may have nothing more."""
        if isinstance(self._sock, ssl.SSLSocket) and self._sock.pending():
            return True, False
        self._sel.modify(self._sock, selectors.EVENT_READ |
                         (selectors.EVENT_WRITE if want_write else 0))
        events = self._sel.select(timeout)
        mask = events[0][1] if events else 0
        return bool(mask & selectors.EVENT_READ), bool(mask & selectors.EVENT_WRITE)

    def _write_out(self) -> None:
        """Writes the queued PUBs and the PONGs due, reading acks whenever the socket would
        block (the server stops reading from a client that never reads). A PING read in the
        middle is answered after the data, never inside a PUB."""
        if self._writing:
            return
        self._writing = True
        try:
            while self._sock is not None and (self._out or self._pongs):
                data = bytes(self._out) + b"PONG\r\n" * self._pongs
                self._unwritten, self._out_msgs = self._out_msgs, []
                self._out.clear()
                self._pongs = 0
                view = memoryview(data)
                sent = 0
                while sent < len(data) and self._sock is not None:
                    # Reading first notices a server that went away before we write to it.
                    r, w = self._ready(True, self.ack_timeout)
                    if not r and not w:
                        raise socket.timeout(f"the server took nothing for {self.ack_timeout} s")
                    if r:
                        self._read_available()
                    if w and self._sock is not None:
                        n = self._send(view[sent:sent + 262144])
                        sent += n
                        if n:
                            self._unwritten = []
                self._unwritten = []
        except OSError as e:
            self._connection_lost(f"writing failed: {e}")
        finally:
            self._unwritten = []
            self._writing = False

    def _send(self, data) -> int:
        if not isinstance(self._sock, ssl.SSLSocket):
            return self._sock.send(data, _NOSIGNAL)
        try:  # non-blocking: a refused write is tried again with the same bytes
            return self._sock.send(data[:_TLS_CHUNK])
        except _WOULD_BLOCK:
            return 0

    def _poll(self) -> None:
        """Reads the acks that already arrived, without waiting."""
        if self._sock is None:
            return
        try:
            while self._sock is not None and self._ready(False, 0)[0]:
                if not self._read_available():
                    break
        except OSError as e:
            self._connection_lost(f"reading failed: {e}")

    def _wait_acks(self, most: int) -> None:
        """Writes what is queued and reads until at most `most` publishes wait for their ack;
        those still unconfirmed after ack_timeout are counted lost."""
        self._write_out()
        deadline = time.monotonic() + self.ack_timeout
        try:
            while self._sock is not None and len(self._inflight) > most:
                left = deadline - time.monotonic()
                if left <= 0:
                    stale = sorted(self._inflight)[:len(self._inflight) - most]
                    for t in stale:
                        del self._inflight[t]
                    self._lose(len(stale), f"no ack within {self.ack_timeout} s (is there a "
                                           f"stream on these subjects?)")
                    return
                if self._ready(False, left)[0]:
                    self._read_available()
        except OSError as e:
            self._connection_lost(f"reading failed: {e}")

    def _read_available(self) -> bool:
        """One recv and the messages it completes; False when the server closed."""
        try:
            chunk = self._sock.recv(65536)
        except _WOULD_BLOCK:  # TLS: a record that was no data (a session ticket), or a part
            return True
        if not chunk:
            self._connection_lost("the server closed the connection")
            return False
        self._rx += chunk
        self._parse()
        if self._pongs and not self._writing:
            self._write_out()
        return True

    def _parse(self) -> None:
        while self._sock is not None:
            end = self._rx.find(b"\r\n")
            if end < 0:
                if len(self._rx) > _LINE_MAX:
                    self._connection_lost(f"a protocol line over {_LINE_MAX} bytes")
                return
            line = bytes(self._rx[:end])
            if line.startswith(b"MSG "):
                head = line.split(b" ")
                if len(head) not in (4, 5) or not head[-1].isdigit() or int(head[-1]) > _ACK_MAX:
                    self._connection_lost(f"a malformed MSG line: {line[:80]!r}")
                    return
                size = int(head[-1])
                if len(self._rx) < end + 2 + size + 2:
                    return  # the payload is not all here yet
                payload = bytes(self._rx[end + 2:end + 2 + size])
                del self._rx[:end + 2 + size + 2]
                self._on_ack(head[1].decode("ascii", "replace"), payload)
                continue
            del self._rx[:end + 2]
            if line == b"PING":
                self._pongs += 1
            elif line.startswith(b"-ERR"):
                # The server closes the connection after most errors; remember why.
                if not self.first_error:
                    self.first_error = line.decode("ascii", "replace")
            elif not (line in (b"PONG", b"+OK") or line.startswith(b"INFO ")):
                # HMSG or anything else would leave us reading payload bytes as lines.
                self._connection_lost(f"an unexpected protocol line: {line[:80]!r}")
                return

    def _on_ack(self, subject: str, payload: bytes) -> None:
        token = subject.rsplit(".", 1)[-1]
        if not token.isdigit() or int(token) not in self._inflight:
            return  # an ack already counted as lost after a timeout
        del self._inflight[int(token)]
        try:
            ack = json.loads(payload)
        except ValueError:
            ack = None
        if isinstance(ack, dict) and "seq" in ack and "error" not in ack:
            self.acked += 1
            return
        err = ack.get("error") if isinstance(ack, dict) else None
        if isinstance(err, dict):
            why = f"{err.get('description', 'refused')} (code {err.get('code')})"
        else:
            why = f"an unexpected reply: {payload[:80]!r}"
        self._lose(1, why)

    def _read_line(self, deadline: float) -> bytes:
        while True:
            end = self._rx.find(b"\r\n")
            if end >= 0:
                line = bytes(self._rx[:end])
                del self._rx[:end + 2]
                return line
            if len(self._rx) > _LINE_MAX:
                raise ConnectionError(f"{self._where()}: a protocol line over {_LINE_MAX} bytes")
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout(f"{self._where()}: no answer within {self.connect_timeout} s")
            self._sock.settimeout(left)
            try:
                chunk = self._sock.recv(65536)
            except ssl.SSLError as e:  # TLS 1.3 reports a refused client certificate here
                raise ConnectionError(f"{self._where()}: TLS: the server ended the session: "
                                      f"{e.reason or e}{self._cert_hint(e)}") from None
            if not chunk:
                raise ConnectionError(f"{self._where()}: the server closed the connection")
            self._rx += chunk


def _one_of(url: NatsUrl, name: str, given: Optional[str]) -> Optional[str]:
    in_url = getattr(url, name)
    if given is not None and in_url is not None and given != in_url:
        raise ValueError(f"{name} is given both in the URL ({in_url}) and as an argument "
                         f"({given})")
    return given if given is not None else in_url


def _tls_context(ca: Optional[str], cert: Optional[str], key: Optional[str],
                 required: bool = False) -> Optional[ssl.SSLContext]:
    """A client context checking the server's certificate and host name; None when TLS is not
    asked for. ValueError naming the file that cannot be used."""
    if not (ca or cert or key or required):
        return None
    if key and not cert:
        raise ValueError("tls_key needs tls_cert (the client certificate it belongs to)")
    try:
        ctx = ssl.create_default_context(cafile=ca) if ca else ssl.create_default_context()
    except (OSError, ssl.SSLError) as e:
        raise ValueError(f"tls_ca {ca}: cannot load CA certificates: "
                         f"{getattr(e, 'strerror', None) or e}") from None
    if cert:
        try:
            ctx.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as e:
            raise ValueError(f"tls_cert {cert}" + (f", tls_key {key}" if key else "") +
                             f": cannot load the client certificate and key: "
                             f"{getattr(e, 'strerror', None) or e}") from None
    return ctx


def _credentials(url: NatsUrl, creds: Optional[str], nkey: Optional[str]):
    """What answers auth_required, from at most one source; None for none."""
    given = [n for n, v in (("creds", creds), ("nkey", nkey),
                            ("USER:PASSWORD@", url.user), ("TOKEN@", url.token)) if v]
    if len(given) > 1:
        raise ValueError(f"credentials: give one of {', '.join(given)}, not several")
    if creds:
        return load_creds(creds)
    if nkey:
        return load_nkey(nkey)
    if url.user is not None:
        return Credentials(user=url.user, password=url.password)
    if url.token is not None:
        return Credentials(token=url.token)
    return None
