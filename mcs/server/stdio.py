"""The STDIO transport: one JSON frame per line in, one reply per line out.

Frames and replies are those of :mod:`mcs.server.frames` (the WebSocket framing), so a
call gives the same ``status`` and ``body`` as over HTTP. Requests are answered in
order, one at a time. Nothing but replies is written to stdout (logs go to stderr);
a line longer than the body limit gets a 413 reply and the server keeps reading.
The loop ends at end of input.

Serving the process's own streams, the frames and replies go through private copies of
file descriptors 0 and 1; while it serves, descriptor 1 and ``sys.stdout`` write to
stderr and descriptor 0 and ``sys.stdin`` read nothing. A tool that prints, reads
``input()`` or runs a program that does can then neither put a line among the replies
(a forged reply) nor take a frame meant for the server.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import IO

from mcs.errors import ErrorCode
from mcs.server import frames
from mcs.server.backend import Backend


def serve_stdio(backend: Backend, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """Answer frames from ``stdin`` and ``stdout`` (default: the process's, see the module
    doc) until end of input."""
    if stdin is not None and stdout is not None:
        _serve(backend, stdin, stdout)
        return
    with _private_streams() as (reader, writer):
        _serve(backend, stdin or reader, stdout or writer)


@contextlib.contextmanager
def _private_streams() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """The process's stdin and stdout, kept for the transport alone (see the module doc);
    both are given back as they were on exit."""
    sys.stdout.flush()
    saved_in, saved_out = os.dup(0), os.dup(1)
    reader = os.fdopen(os.dup(0), "rb")
    writer = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    old_stdin, old_stdout = sys.stdin, sys.stdout
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - closed below
    sys.stdout = sys.stderr
    try:
        yield reader, writer
    finally:
        sys.stdin.close()
        sys.stdin, sys.stdout = old_stdin, old_stdout
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (saved_in, saved_out):
            os.close(fd)
        reader.close()
        writer.close()


def _serve(backend: Backend, reader: IO[bytes], writer: IO[bytes]) -> None:
    limit = backend.max_body_bytes
    while True:
        line = reader.readline(limit + 2)
        if not line:
            return
        if not line.endswith(b"\n") and len(line) > limit:
            # Too long: answer once, then drop the rest of the line.
            while line and not line.endswith(b"\n"):
                line = reader.readline(65536)
            reply = frames.error_reply(None, 413, ErrorCode.INVALID_INPUT,
                                       f"The frame exceeds {limit} bytes.")
        elif not line.strip():
            continue
        else:
            reply = frames.handle_frame(backend, line.rstrip(b"\r\n"))
        writer.write(reply.encode() + b"\n")
        writer.flush()
