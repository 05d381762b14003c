# SPDX-License-Identifier: MIT
# TLS for tls:// URLs with the standard ssl module: an SSLObject over memory BIOs on a connected
# TCP socket, so that the client can send close_notify and still read the server's error reply
# (SSLSocket.shutdown drops the TLS layer), with the socket-like calls client.py makes. The
# server's certificate and name are always checked; nothing turns that off (docs/wire.md, "TLS").
import socket
import ssl

_CHUNK = 16384


def make_context(opts) -> ssl.SSLContext:
    """TLS 1.2 or later, trusting opts.ca (or the system's store), with the client certificate."""
    ctx = ssl.create_default_context(cafile=opts.ca or None)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if opts.cert:
        ctx.load_cert_chain(opts.cert, opts.key or None)
    return ctx


class TlsSocket:
    """A connected TCP socket with TLS on it; send, recv, settimeout, shutdown and close as a
    socket's (send takes all of data or raises, with partial=True once some of it left)."""

    def __init__(self, sock: socket.socket, ctx: ssl.SSLContext, server_name: str):
        self._sock = sock
        self._in, self._out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = ctx.wrap_bio(self._in, self._out, server_hostname=server_name)
        self._run(self._tls.do_handshake)

    def _flush(self) -> int:
        """Sends what TLS wrote; returns how many bytes left."""
        data = self._out.read()
        sent = 0
        while sent < len(data):
            try:
                sent += self._sock.send(data[sent:], getattr(socket, "MSG_NOSIGNAL", 0))
            except InterruptedError:
                continue
            except OSError as e:
                e.partial = sent > 0
                raise
        return sent

    def _run(self, step):
        """Runs step until it needs no more bytes from the server; b"" when the server closed."""
        while True:
            try:
                result = step()
                self._flush()
                return result
            except ssl.SSLWantReadError:
                self._flush()
                data = self._sock.recv(_CHUNK)
                if not data:
                    if step == self._tls.do_handshake:
                        raise ConnectionResetError("the server closed the connection during the "
                                                   "TLS handshake") from None
                    return b""
                self._in.write(data)
            except ssl.SSLZeroReturnError:
                return b""

    def send(self, data, flags: int = 0) -> int:
        self._tls.write(data)  # into memory: never waits
        self._flush()
        return len(data)

    def recv(self, n: int) -> bytes:
        return self._run(lambda: self._tls.read(min(n, _CHUNK)))

    def settimeout(self, t) -> None:
        self._sock.settimeout(t)

    def setsockopt(self, *args) -> None:
        self._sock.setsockopt(*args)

    def shutdown(self, how: int) -> None:
        """SHUT_WR: close_notify, then the TCP write side; replies can still be read."""
        try:
            self._tls.unwrap()
        except ssl.SSLWantReadError:  # the server's close_notify comes later, if at all
            pass
        try:
            self._flush()
            self._sock.shutdown(how)
        except OSError:  # the server is gone; reading its last bytes (an alert?) tells why
            pass

    def close(self) -> None:
        self._sock.close()
