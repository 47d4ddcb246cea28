"""The STDIO transport: one JSON frame per line in, one reply per line out.

Frames and replies are those of :mod:`mcs.server.frames` (the WebSocket framing), so a
call gives the same ``status`` and ``body`` as over HTTP. Requests are answered in
order, one at a time. Nothing but replies is written to stdout (logs go to stderr);
a line longer than the body limit gets a 413 reply and the server keeps reading.
The loop ends at end of input.
"""

from __future__ import annotations

import sys
from typing import IO

from mcs.errors import ErrorCode
from mcs.server import frames
from mcs.server.backend import Backend


def serve_stdio(backend: Backend, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """Answer frames from ``stdin`` (default: the process's) until end of input."""
    reader = stdin if stdin is not None else sys.stdin.buffer
    writer = stdout if stdout is not None else sys.stdout.buffer
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
