"""Serving the review app: loopback only unless asked, on a port of the caller's choice (docs/review.md §9).

:func:`check_bind` refuses an address that is not loopback unless remote access was asked for
(``--allow-remote``); :func:`serve` binds the socket itself (port 0 picks a free one), says where the
app is once it listens, and runs uvicorn on it until Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any


def is_loopback(host: str) -> bool:
    """``host`` is ``localhost`` or a loopback IP address (``127.0.0.0/8``, ``::1``; docs/review.md §9).
    Any other name counts as not loopback, whatever it resolves to."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, allow_remote: bool) -> str | None:
    """Why the server must not bind ``host``, or ``None`` when it may (docs/review.md §9): an address that
    is not loopback needs ``allow_remote``."""
    if is_loopback(host) or allow_remote:
        return None
    return (
        f"{host!r} is not a loopback address: the review app has no login, so anyone who can reach it could "
        "change the reviews; give --allow-remote to serve it there anyway (behind a firewall or an "
        "authenticating proxy)"
    )


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (``port`` 0: a free port the system picks; docs/review.md §9).

    Raises:
        OSError: the address cannot be bound (in use, not an address of this machine).
    """
    name = "127.0.0.1" if host == "localhost" else host.strip("[]")
    family = socket.AF_INET6 if ":" in name else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((name, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://HOST:PORT/`` of a bound socket (an IPv6 address in brackets)."""
    address = sock.getsockname()
    host = f"[{address[0]}]" if sock.family == socket.AF_INET6 else address[0]
    return f"http://{host}:{address[1]}/"


def serve(app: Any, sock: socket.socket, on_ready: Callable[[str], None]) -> None:
    """Run ``app`` with uvicorn on the bound ``sock`` until Ctrl-C or SIGTERM (docs/review.md §9);
    ``on_ready(url)`` is called once it listens."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False)
    server = uvicorn.Server(config)
    on_ready(url_of(sock))
    server.run(sockets=[sock])


__all__ = ["bind_socket", "check_bind", "is_loopback", "serve", "url_of"]
