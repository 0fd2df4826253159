"""A real Nextcloud's php-fpm, spoken to directly: how many requests it is serving, and one PHP
script run inside it (FastCGI over its socket, as nginx sends a request; ADR 0107).

Both serve the reset of a running instance (`tests/real_nextcloud.py`): APCu lives in php-fpm's
shared memory, so only a script run by php-fpm's own workers can empty it, and nginx serves only
Nextcloud's own scripts (a file of ours in its tree would be one more page, and an extra file to
Nextcloud's integrity check). The client is the few records a request needs (FastCGI 1.0:
BEGIN_REQUEST, PARAMS, STDIN; STDOUT, STDERR, END_REQUEST), bounded in time and size.
"""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path

__all__ = ["PhpFpmError", "requests_in_flight", "run_script"]

_VERSION = 1
_BEGIN_REQUEST, _END_REQUEST, _PARAMS, _STDIN, _STDOUT, _STDERR = 1, 3, 4, 5, 6, 7
_RESPONDER = 1
_REQUEST_ID = 1
_HEADER = struct.Struct("!BBHHBx")
_MAX_ANSWER = 1 << 20  # bytes: the scripts run here answer a line
_CONNECTED = "03"  # /proc/net/unix's state of a connected socket (01: listening)


class PhpFpmError(RuntimeError):
    """php-fpm could not run the script, or it did not end well."""


def requests_in_flight(fpm_socket: Path) -> int:
    """Connections php-fpm holds on `fpm_socket` now: each is a request nginx passed it and it
    has not finished (nginx opens one per request, and does not keep it: no `fastcgi_keep_conn`)."""
    path = str(fpm_socket)
    with open("/proc/net/unix") as table:
        return sum(
            1 for line in table if line.rstrip("\n").endswith(" " + path) and line.split()[5] == _CONNECTED
        )


def run_script(fpm_socket: Path, script: Path, params: dict[str, str], *, timeout: float = 60.0) -> str:
    """Run `script` (a file the pool's user can read) in one of php-fpm's workers with `params` in
    its `$_SERVER`; return what it printed, headers left out. A PHP error or an answer without
    `ok` at its end raises: the script says it finished by printing `ok` last."""
    values = {
        "SCRIPT_FILENAME": str(script),
        "SCRIPT_NAME": "/" + script.name,
        "REQUEST_METHOD": "GET",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "GATEWAY_INTERFACE": "CGI/1.1",
        **params,
    }
    encoded = b"".join(_pair(name.encode(), value.encode()) for name, value in values.items())
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout)
        connection.connect(str(fpm_socket))
        connection.sendall(
            _record(_BEGIN_REQUEST, struct.pack("!HB5x", _RESPONDER, 0))
            + _record(_PARAMS, encoded)
            + _record(_PARAMS, b"")
            + _record(_STDIN, b"")
        )
        output, errors = _answer(connection, deadline)
    body = output.partition(b"\r\n\r\n")[2].decode(errors="replace")
    if errors or not body.rstrip().endswith("ok"):
        raise PhpFpmError(f"{script.name} in php-fpm: {(errors.decode(errors='replace') or body)[-2000:]}")
    return body


def _answer(connection: socket.socket, deadline: float) -> tuple[bytes, bytes]:
    streams = {_STDOUT: bytearray(), _STDERR: bytearray()}
    buffer = bytearray()
    while True:
        while len(buffer) >= _HEADER.size:
            _, kind, _, length, padding = _HEADER.unpack_from(buffer)
            end = _HEADER.size + length + padding
            if len(buffer) < end:
                break
            content = bytes(buffer[_HEADER.size : _HEADER.size + length])
            del buffer[:end]
            if kind == _END_REQUEST:
                return bytes(streams[_STDOUT]), bytes(streams[_STDERR])
            if kind in streams:
                streams[kind] += content
        if time.monotonic() > deadline or sum(map(len, streams.values())) + len(buffer) > _MAX_ANSWER:
            raise PhpFpmError("php-fpm's answer was too slow or too long")
        chunk = connection.recv(65536)
        if not chunk:
            raise PhpFpmError("php-fpm closed the connection before the end of the request")
        buffer += chunk


def _record(kind: int, content: bytes) -> bytes:
    padding = -len(content) % 8
    return _HEADER.pack(_VERSION, kind, _REQUEST_ID, len(content), padding) + content + bytes(padding)


def _pair(name: bytes, value: bytes) -> bytes:
    return _length(name) + _length(value) + name + value


def _length(data: bytes) -> bytes:
    return struct.pack("!B", len(data)) if len(data) < 128 else struct.pack("!I", len(data) | 1 << 31)
