"""A TCP proxy on loopback between a store and the test server, that a test can break.

    with TcpProxy("127.0.0.1", 5432) as proxy:
        url = proxy.url(server_url)         # the same URL, through the proxy
        proxy.cut()                         # every connection dies; new ones are refused
        proxy.restore()                     # the server is back
        proxy.cut(back_after_refusal=True)  # back as soon as one new connection was refused
        proxy.drop_at(b"COMMIT", deliver=True)   # the next COMMIT reaches the server,
                                                 # its answer never comes back

What a server going away looks like to a client (a network, a restart), without
stopping the one server every test shares.
"""

from __future__ import annotations

import selectors
import socket
import threading
from urllib.parse import urlsplit, urlunsplit


class TcpProxy:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._pairs: dict[socket.socket, socket.socket] = {}  # each side -> the other
        self._client_side: set[socket.socket] = set()
        self._refusing = False
        self._back_after_refusal = False
        self.refusals = 0  # connections refused while cut
        self._armed: tuple[bytes, bool] | None = None
        self._swallow: set[socket.socket] = set()  # server sides whose next answer is dropped
        self.fired = threading.Event()
        self.connections = 0
        self._wake_r, self._wake_w = socket.socketpair()
        self._stop = False
        self._thread = threading.Thread(target=self._loop, name="tcp-proxy", daemon=True)
        self._thread.start()

    @classmethod
    def to_url(cls, url: str) -> TcpProxy:
        parts = urlsplit(url)
        return cls(parts.hostname or "127.0.0.1", parts.port or 5432)

    def url(self, url: str) -> str:
        parts = urlsplit(url)
        auth = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        return urlunsplit(parts._replace(netloc=f"{auth}127.0.0.1:{self.port}"))

    # ---------------------------------------------------------------- what a test does
    def cut(self, *, back_after_refusal: bool = False) -> None:
        """Every open connection dies now, and new ones are refused until `restore`; with
        `back_after_refusal`, until one has been refused: the server is back once a client
        has met the outage, where a timer had to guess how long a loaded machine takes to
        get there (and made every run wait that long)."""
        with self._lock:
            self._refusing = True
            self._back_after_refusal = back_after_refusal
            self._close_all()
        self._wake()

    def restore(self) -> None:
        with self._lock:
            self._refusing = self._back_after_refusal = False
        self._wake()

    def drop_at(self, marker: bytes, *, deliver: bool) -> None:
        """The next client message holding `marker` kills its connection: delivered to the
        server first (`deliver`: the server acts on it, its answer is lost) or not."""
        with self._lock:
            self._armed = (marker, deliver)
            self.fired.clear()

    def close(self) -> None:
        self._stop = True
        self._wake()
        self._thread.join(timeout=5)
        with self._lock:
            self._close_all()
        self._listener.close()
        self._wake_r.close()
        self._wake_w.close()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ---------------------------------------------------------------- the pump
    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def _close_pair(self, sock: socket.socket) -> None:
        other = self._pairs.pop(sock, None)
        self._client_side.discard(sock)
        self._swallow.discard(sock)
        for s in (sock, other):
            if s is None:
                continue
            self._pairs.pop(s, None)
            self._client_side.discard(s)
            self._swallow.discard(s)
            try:
                s.close()
            except OSError:
                pass

    def _close_all(self) -> None:
        for sock in list(self._pairs):
            self._close_pair(sock)

    def _accept(self) -> None:
        try:
            client, _ = self._listener.accept()
        except OSError:
            return
        with self._lock:
            if self._refusing:
                client.close()
                self.refusals += 1
                if self._back_after_refusal:
                    self._refusing = self._back_after_refusal = False
                return
        try:
            server = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        with self._lock:
            self._pairs[client] = server
            self._pairs[server] = client
            self._client_side.add(client)
            self.connections += 1

    def _pump(self, sock: socket.socket) -> None:
        with self._lock:
            if sock not in self._pairs:
                return
            other = self._pairs[sock]
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                self._close_pair(sock)
                return
            if sock in self._swallow:  # the answer to the delivered message: lost
                self._close_pair(sock)
                self.fired.set()
                return
            if sock in self._client_side and self._armed and self._armed[0] in data:
                _, deliver = self._armed
                self._armed = None
                if deliver:
                    try:
                        other.sendall(data)
                    except OSError:
                        pass
                    self._swallow.add(other)  # close once the server has answered
                else:
                    self._close_pair(sock)
                    self.fired.set()
                return
            try:
                other.sendall(data)
            except OSError:
                self._close_pair(sock)

    def _loop(self) -> None:
        selector = selectors.DefaultSelector()
        while not self._stop:
            selector.close()
            selector = selectors.DefaultSelector()
            selector.register(self._listener, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            # Registered under the lock: a cut() closing them in between made register()
            # raise (a closed socket has no file descriptor), and the pump thread died.
            with self._lock:
                for s in self._pairs:
                    if s.fileno() >= 0:
                        selector.register(s, selectors.EVENT_READ)
            for key, _ in selector.select(timeout=0.5):
                sock = key.fileobj
                if sock is self._listener:
                    self._accept()
                elif sock is self._wake_r:
                    try:
                        self._wake_r.recv(4096)
                    except OSError:
                        pass
                else:
                    self._pump(sock)  # type: ignore[arg-type]
        selector.close()


__all__ = ["TcpProxy"]
