# SPDX-License-Identifier: MIT
# The blocking recd client: connects by URL (TCP, UDP, Unix), batches encoded messages, passes
# the auth token, reconnects a broken stream and takes its sessions back with resume opens
# (docs/wire.md section 5.3), and on close reads the server's error reply, if any. nats:// URLs
# publish each message as one binary frame to JetStream instead (nats.py, docs/fleet.md);
# tls:// URLs are TCP with TLS (tls.py).
import errno
import socket
import ssl
import time
from typing import Dict, Optional

from .formats import EncodeError
from .fleet_pack import DEFAULT_LINGER_MS, DEFAULT_PACK_BYTES, Pack
from .nats import DEFAULT_PARTITIONS, NatsPublisher, fleet_subject, parse_nats_url
from .tls import TlsSocket, make_context
from .wire import (DEFAULT_MAX_FRAME, check_session_key, decode_error_reply, encode_binary,
                   encode_ndjson, parse_url)

_MAX_DATAGRAM = 65507  # largest UDP payload over IPv4
_REPLY_MAX = 8192  # an error reply is one short frame or line
_NOSIGNAL = getattr(socket, "MSG_NOSIGNAL", 0)  # a closed peer is an error, never a SIGPIPE
# Errors that mean the connection is gone (worth a reconnect), not that the request was wrong.
_BROKEN = {errno.EPIPE, errno.ECONNRESET, errno.ECONNREFUSED, errno.ECONNABORTED,
           errno.ENOTCONN, errno.ETIMEDOUT, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ENOENT}


class ServerError(Exception):
    """The server refused the data and said why (its error reply)."""


class Client:
    """One connection (or one connected UDP socket) to recd; use it from one thread at a time.

    Messages are the dicts of docs/protocol.md. Queued bytes leave when a batch fills, on
    flush() or on close(): flush whenever samples must be on the wire (every server tick).
    With reconnect on, a stream that breaks is connected again and every session this client
    opened (and did not close) is opened again with "resume": its file goes on. The batch that
    was being written when the connection broke is sent again when none of it left; otherwise
    its messages are counted in messages_lost (part of it may have arrived).

    A nats://HOST:PORT/PREFIX URL publishes to NATS JetStream instead: a session's messages are
    packed into one JetStream message (docs/fleet.md, "Packed messages") until it holds
    pack_bytes (64 KiB; 0: one frame per message) or its first is linger (20 ms) old, checked at
    each send and flush, on the subject PREFIX.<partition>.<key token> (partitions must match
    recd's nats.partitions), with at most max_in_flight publishes waiting for their ack.
    flush() sends and reports the losses known so far, close() waits for every ack; both raise
    PublishError when JetStream did not confirm messages (they are counted in messages_lost).
    partitions, max_in_flight, ack_timeout, buffer_bytes, pack_bytes and linger may also be query
    options of the URL (?partitions=8&max_in_flight=1024&ack_timeout=10s&buffer=8MiB&
    pack_bytes=64KiB&linger=20ms, as rectool send takes them);
    TLS (tls_ca, tls_cert, tls_key) and credentials (creds, nkey, USER:PASSWORD@, TOKEN@) are
    described in NatsPublisher.

    A tls://HOST:PORT URL is TCP with TLS 1.2 or later (docs/wire.md, "TLS"):
    ?ca=FILE (PEM; default the system's trust store), cert=FILE and key=FILE (a client
    certificate), servername=NAME (the name the server's certificate must hold; default HOST).
    The server's certificate and name are always checked; a refused one raises
    ssl.SSLCertVerificationError before anything is sent.
    """

    def __init__(self, url: str, *, auth: Optional[str] = None, batch_bytes: int = 65536,
                 datagram_bytes: int = 1400, max_frame: int = DEFAULT_MAX_FRAME,
                 close_timeout: float = 5.0, connect_timeout: float = 5.0,
                 reconnect: bool = True, reconnect_attempts: int = 8,
                 reconnect_delay: float = 0.1, auto_seq: bool = False,
                 partitions: Optional[int] = None, max_in_flight: Optional[int] = None,
                 ack_timeout: Optional[float] = None, buffer_bytes: Optional[int] = None,
                 pack_bytes: Optional[int] = None, linger: Optional[float] = None,
                 tls_ca: Optional[str] = None, tls_cert: Optional[str] = None,
                 tls_key: Optional[str] = None, creds: Optional[str] = None,
                 nkey: Optional[str] = None):
        self._nats: Optional[NatsPublisher] = None
        if url.startswith("nats://"):
            self.url = parse_nats_url(url)
            # Each from the URL's query or the argument (not both), else the default.
            partitions = _nats_option(self.url, "partitions", partitions, DEFAULT_PARTITIONS)
            max_in_flight = _nats_option(self.url, "max_in_flight", max_in_flight, 1024)
            ack_timeout = _nats_option(self.url, "ack_timeout", ack_timeout, 10.0)
            buffer_bytes = _nats_option(self.url, "buffer_bytes", buffer_bytes, 8 << 20)
            pack_bytes = _nats_option(self.url, "pack_bytes", pack_bytes, DEFAULT_PACK_BYTES)
            linger = _nats_option(self.url, "linger", linger, DEFAULT_LINGER_MS / 1000.0)
            fleet_subject(self.url.prefix, "k", partitions)  # checks partitions before connecting
            self.partitions = partitions
            self.subjects = self.url.subjects or "partition"
            self.encoding = "binary"  # a stream message holds binary frames
            self.transport = "nats"
        else:
            if any(v is not None for v in (partitions, max_in_flight, ack_timeout, buffer_bytes,
                                           pack_bytes, linger, tls_ca, tls_cert, tls_key, creds, nkey)):
                raise ValueError("partitions, max_in_flight, ack_timeout, buffer_bytes, "
                                 "pack_bytes, linger, tls_*, "
                                 "creds and nkey are options of nats:// URLs")
            self.url = parse_url(url)
            self.encoding = self.url.encoding
            self.transport = self.url.transport
            self._tls_context = make_context(self.url.tls) if self.url.tls else None
        self.auth = auth
        self.batch_bytes = batch_bytes
        self.datagram_bytes = min(datagram_bytes, _MAX_DATAGRAM)
        self.max_frame = max_frame
        self.close_timeout = close_timeout
        self.connect_timeout = connect_timeout
        self.reconnect = reconnect
        self.reconnect_attempts = reconnect_attempts
        self.reconnect_delay = reconnect_delay
        self.auto_seq = auto_seq  # number each session's messages 0, 1, ... (recd counts UDP gaps)
        self._seq: Dict[str, int] = {}
        self.pack_bytes = pack_bytes or 0  # nats: a session's frames share a message up to this
        self.linger = linger or 0.0
        self.buffer_bytes = buffer_bytes or 0
        self._packs: Dict[str, Pack] = {}  # nats: session -> its pack, oldest first
        self._packed_bytes = 0
        self.bytes_sent = 0
        self.messages_sent = 0  # handed to the kernel
        self.messages_lost = 0  # in a batch or datagram that broke
        self.reconnects = 0
        self._formats: Dict[str, str] = {}  # session -> format, for binary payloads
        self._opens: Dict[str, dict] = {}  # session -> its open, resent as a resume
        self._udp_opens: Dict[str, bytes] = {}  # session -> resume open starting its datagrams
        self._queue = bytearray()
        self._queued = 0
        self._last_session: Optional[str] = None  # None at a batch start: batches stand alone
        self._dgram_open: Optional[str] = None  # session of the datagram's last open
        self._broken: Optional[Exception] = None
        self._reset_error: Optional[OSError] = None  # why the last _read_reply saw a reset
        self._sock = None  # a socket.socket, or a TlsSocket for tls://
        if self.transport == "nats":
            self._nats = NatsPublisher(self.url, max_in_flight=max_in_flight,
                                       ack_timeout=ack_timeout, connect_timeout=connect_timeout,
                                       buffer_bytes=buffer_bytes, batch_bytes=batch_bytes,
                                       reconnect_attempts=reconnect_attempts,
                                       reconnect_delay=reconnect_delay, tls_ca=tls_ca,
                                       tls_cert=tls_cert, tls_key=tls_key, creds=creds,
                                       nkey=nkey)
        else:
            self._sock = self._connect()

    # ---- public API ----

    def send(self, msg: dict) -> None:
        """Queues one message (its "session" is required); sends when a batch is full."""
        if self._broken:
            raise self._broken
        session = check_session_key(msg.get("session"))
        mtype = msg.get("type")
        if self.auto_seq and "seq" not in msg:
            msg = dict(msg, seq=self._seq.get(session, 0))
        if mtype == "open":
            if self.auth and "auth" not in msg:
                msg = dict(msg, auth=self.auth)
            fmt = msg.get("format")
            if not isinstance(fmt, str):
                raise EncodeError("open.format: required (a format name)")
            if fmt == "recap" and "start_time" not in msg and not (
                    isinstance(msg.get("recap"), dict) and "start_time" in msg["recap"]):
                # Otherwise the Recap header (and the file name) would say 1970.
                msg = dict(msg, start_time=int(time.time() * 1000))
        else:
            fmt = self._formats.get(session)
            if fmt is None and self.encoding == "binary":
                raise EncodeError(f"{mtype} for session {session!r}: no open seen for it")
        if self.transport == "nats":
            self._publish(msg, fmt, session)
        elif self.transport == "udp":
            self._queue_datagram(msg, fmt, session)
        else:
            omit = session == self._last_session
            self._queue += self._encode(msg, fmt, omit)
            self._queued += 1
            self._last_session = session
        if self.auto_seq:
            self._seq[session] = msg["seq"] + 1
        if mtype == "open":
            self._formats[session] = fmt
            self._opens[session] = dict(msg)  # the caller may reuse its dict
        elif mtype == "close":
            self._opens.pop(session, None)
            self._udp_opens.pop(session, None)
            self._seq.pop(session, None)
        if self.transport in ("tcp", "tls", "unix") and len(self._queue) >= self.batch_bytes:
            self.flush()

    def open(self, session: str, format: str, **fields) -> None:
        self.send(dict(fields, type="open", session=session, format=format))

    def state(self, session: str, **fields) -> None:
        self.send(dict(fields, type="state", session=session))

    def event(self, session: str, **fields) -> None:
        self.send(dict(fields, type="event", session=session))

    def end_member(self, session: str, end_tick: Optional[int] = None) -> None:
        """The flush message (Recap: the gzip member ends), not flush() of the queue."""
        m = {"type": "flush", "session": session}
        if end_tick is not None:
            m["end_tick"] = end_tick
        self.send(m)

    def save(self, session: str, last_ms: int, label: str) -> None:
        """Instant replay: the last last_ms of a session opened with ring=True, as LABEL.rec."""
        self.send({"type": "save", "session": session, "last_ms": last_ms, "label": label})

    def close_session(self, session: str, end_time: Optional[int] = None) -> None:
        m = {"type": "close", "session": session}
        if end_time is not None:
            m["end_time"] = end_time
        self.send(m)

    def flush(self) -> None:
        """Sends everything queued (nats: without waiting for the acks; losses known so far
        raise PublishError)."""
        if self._broken:
            raise self._broken
        if self._nats is not None:
            try:
                self._publish_packs(lambda p: True)
                self._nats.flush(wait_acks=False)
            finally:
                self.messages_lost = self._nats.lost
            return
        if not self._queue:
            return
        data, count = bytes(self._queue), self._queued
        self._queue.clear()
        self._queued = 0
        self._last_session = None
        self._dgram_open = None
        if self.transport == "udp":
            self._send_datagram(data, count)
        else:
            self._send_batch(data, count)

    def close(self) -> None:
        """Flushes, ends the connection and waits for the server to close it; raises ServerError
        when the server sent an error reply; over nats://, waits for every ack and raises
        PublishError naming how many messages JetStream did not confirm."""
        if self._nats is not None:
            try:
                try:
                    self._publish_packs(lambda p: True)
                finally:  # the connection ends even when a pack could not be kept
                    self._nats.close()
            finally:
                self.messages_lost = self._nats.lost
            return
        if self._sock is None:
            return
        try:
            if not self._broken:
                self.flush()
            if self.transport != "udp":
                self._sock.shutdown(socket.SHUT_WR)
                reply, end = self._read_reply(self.close_timeout)
                text = decode_error_reply(reply)
                if text is not None:
                    raise ServerError(text)
                if end == "timeout":
                    raise TimeoutError(f"recd did not close the connection within {self.close_timeout} s")
                if end == "reset" and isinstance(self._reset_error, ssl.SSLError):
                    raise self._reset_error  # the server's alert, e.g. certificate required
                if end == "reset" and not self._broken:
                    raise ConnectionResetError("the connection ended abnormally (reset): recd may "
                                               "not have read everything")
            if self._broken:
                raise self._broken
        finally:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        elif self._nats is not None:
            self._nats.abort()
        elif self._sock is not None:
            self._sock.close()
            self._sock = None

    # ---- encoding and batching ----

    def _encode(self, msg: dict, fmt: Optional[str], omit_session: bool) -> bytes:
        if self.encoding == "ndjson":
            return encode_ndjson(msg, omit_session, self.max_frame, fmt)
        return encode_binary(msg, fmt, omit_session, self.max_frame)

    def _publish(self, msg: dict, fmt: Optional[str], session: str) -> None:
        if self.pack_bytes:
            self._publish_packed(msg, fmt, session)
            return
        # The key is in every frame: a stream message stands alone.
        frame = self._encode(msg, fmt, False)
        try:
            self._nats.publish(fleet_subject(self.url.prefix, session, self.partitions, self.subjects), frame)
        finally:
            self.messages_lost = self._nats.lost
        self.messages_sent += 1
        self.bytes_sent += len(frame)

    def _publish_packed(self, msg: dict, fmt: Optional[str], session: str) -> None:
        """Into the session's pack (docs/fleet.md, "Packed messages"), published once it holds
        pack_bytes; packs whose first frame is linger old go at this send or the next flush (no
        timer thread: the client is single-threaded), the oldest too while all hold more than
        buffer_bytes."""
        pack = self._packs.get(session)
        # Only the first frame names the session: a pack is one session's stream.
        frame = self._encode(msg, fmt, pack is not None)
        if pack is None:
            pack = self._packs[session] = Pack(session, time.monotonic())
            self._packed_bytes += len(pack)
        before = len(pack)
        pack.add(frame, msg.get("seq"))
        self._packed_bytes += len(pack) - before
        if len(pack) >= self.pack_bytes:
            self._publish_pack(session)
        now = time.monotonic()
        self._publish_packs(lambda p: now - p.opened >= self.linger or
                            self._packed_bytes > self.buffer_bytes)

    def _publish_packs(self, which) -> None:
        """Publishes the packs, oldest first, while which(pack) holds."""
        while self._packs:
            session, pack = next(iter(self._packs.items()))
            if not which(pack):
                return
            self._publish_pack(session)

    def _publish_pack(self, session: str) -> None:
        pack = self._packs.pop(session)
        self._packed_bytes -= len(pack)
        data = pack.message()
        try:
            self._nats.publish(fleet_subject(self.url.prefix, session, self.partitions, self.subjects), data)
        finally:
            self.messages_lost = self._nats.lost
        self.messages_sent += pack.count
        self.bytes_sent += len(data)

    def _resume_of(self, open_msg: dict) -> bytes:
        resume = {k: v for k, v in open_msg.items() if k != "seq"}
        resume["resume"] = True
        return self._encode(resume, resume["format"], False)

    def _queue_datagram(self, msg: dict, fmt: Optional[str], session: str) -> None:
        frame = self._encode(msg, fmt, False)
        if len(frame) > _MAX_DATAGRAM:
            raise EncodeError(f"{msg['type']}: {len(frame)} bytes do not fit a datagram")
        if msg["type"] == "open":
            # With a token, every datagram of the session starts with its open as a resume.
            if msg.get("auth"):
                self._udp_opens[session] = self._resume_of(msg)
            else:
                self._udp_opens.pop(session, None)
        prefix = self._udp_prefix(msg, session)
        if self._queue and len(self._queue) + len(prefix) + len(frame) > self.datagram_bytes:
            self.flush()
            prefix = self._udp_prefix(msg, session)
        self._queue += prefix + frame
        self._queued += 1
        if prefix or msg["type"] == "open":
            self._dgram_open = session
        if len(self._queue) >= self.datagram_bytes:
            self.flush()

    def _udp_prefix(self, msg: dict, session: str) -> bytes:
        # recd lets a datagram's frames of a protected session follow the datagram's latest
        # open only, so the open is repeated whenever frames of another session came between.
        if msg["type"] == "open" or session == self._dgram_open:
            return b""
        return self._udp_opens.get(session, b"")

    # ---- sockets ----

    def _connect(self) -> socket.socket:
        u = self.url
        if u.transport == "unix":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(self.connect_timeout)
            try:
                s.connect(u.path)
            except OSError:
                s.close()
                raise
        else:
            kind = socket.SOCK_DGRAM if u.transport == "udp" else socket.SOCK_STREAM
            last = None
            s = None
            for family, stype, proto, _, addr in socket.getaddrinfo(u.host, u.port, 0, kind):
                s = socket.socket(family, stype, proto)
                s.settimeout(self.connect_timeout)
                try:
                    s.connect(addr)
                    break
                except OSError as e:
                    last = e
                    s.close()
                    s = None
            if s is None:
                raise last or OSError(errno.EHOSTUNREACH, f"cannot reach {u.host}")
            if u.transport != "udp":  # we batch ourselves; Nagle would only add latency
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if u.transport == "tls":
                try:
                    s = TlsSocket(s, self._tls_context, u.tls.servername or u.host)
                except (OSError, ValueError):
                    s.close()
                    raise
        s.settimeout(None)
        return s

    def _write(self, data: bytes) -> int:
        """Writes all of data; on an error returns how much had left (the error is re-raised
        with that count attached)."""
        view = memoryview(data)
        sent = 0
        while sent < len(data):
            try:
                sent += self._sock.send(view[sent:], _NOSIGNAL)
            except InterruptedError:
                continue
            except OSError as e:
                e.bytes_written = sent or int(getattr(e, "partial", False))
                raise
        self.bytes_sent += sent
        return sent

    def _send_batch(self, data: bytes, count: int) -> None:
        try:
            self._write(data)
            self.messages_sent += count
            return
        except OSError as e:
            if self.transport == "tls":  # a TLS alert (certificate required...) says why
                self._read_reply(0.05)
                if isinstance(self._reset_error, ssl.SSLError):
                    self._broken = self._reset_error
                    raise self._broken from e
            if not self.reconnect or e.errno not in _BROKEN:
                self._broken = e
                raise
            written = e.bytes_written
        # The connection broke. Did the server say why? Then it refused us: do not retry.
        text = decode_error_reply(self._read_reply(0.05)[0])
        if text is not None:
            self._broken = ServerError(text)
            raise self._broken
        if isinstance(self._reset_error, ssl.SSLError):  # a TLS alert: refused, not broken
            self._broken = self._reset_error
            raise self._broken
        self._reconnect_and_resume(data if written == 0 else b"", count if written == 0 else 0)
        if written:
            self.messages_lost += count

    def _reconnect_and_resume(self, pending: bytes, pending_count: int) -> None:
        delay = self.reconnect_delay
        last: Optional[Exception] = None
        for _ in range(self.reconnect_attempts):
            try:
                self._sock.close()
                self._sock = self._connect()
                resumes = b"".join(self._resume_of(o) for o in self._opens.values())
                self._write(resumes + pending)
                self.messages_sent += pending_count
                self.reconnects += 1
                return
            except OSError as e:
                last = e
                if e.errno not in _BROKEN and not isinstance(e, ConnectionError):
                    break
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
        self._broken = ConnectionError(f"reconnecting to recd failed: {last}")
        raise self._broken

    def _send_datagram(self, data: bytes, count: int) -> None:
        while True:
            try:
                self._sock.send(data, _NOSIGNAL)
                self.bytes_sent += len(data)
                self.messages_sent += count
                return
            except InterruptedError:
                continue
            except OSError as e:
                # A refused earlier datagram (ICMP) shows up on a later send; UDP has no
                # delivery promise, so with reconnect on the datagram counts as lost.
                if self.reconnect and e.errno in _BROKEN:
                    self.messages_lost += count
                    return
                self._broken = e
                raise

    def _read_reply(self, timeout: float):
        """Reads until the server closes, resets or the timeout passes; returns the first
        _REPLY_MAX bytes and how it ended: "closed", "reset" or "timeout"."""
        reply = bytearray()
        self._reset_error = None
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return bytes(reply), "timeout"
                self._sock.settimeout(left)
                try:
                    chunk = self._sock.recv(4096)
                except socket.timeout:
                    continue
                except OSError as e:  # a reset: the server did not read all we sent
                    self._reset_error = e
                    return bytes(reply), "reset"
                if not chunk:
                    return bytes(reply), "closed"
                reply += chunk[:max(0, _REPLY_MAX - len(reply))]
        finally:
            self._sock.settimeout(None)


def _nats_option(url, name, given, default):
    in_url = getattr(url, name)
    if given is not None and in_url is not None and given != in_url:
        raise ValueError(f"{name} is given both in the URL ({in_url}) and as an argument "
                         f"({given})")
    return given if given is not None else in_url if in_url is not None else default
