"""Python's cyclic garbage collector, paused while a WSDL is loaded.

A load allocates tens of thousands of objects that all live on (zeep's model of the
WSDL, the schema index, the tools), and each burst of allocations makes the collector
walk every one of them again: on vboxweb's 1,158 operations that walking is about a fifth
of the CPU time zeep's parse takes. Nothing a load makes is garbage before it ends, and
reference counting still frees everything else at once, so the collector is paused for
the load.

:func:`paused` is re-entrant and thread-safe: the collector runs again when the last
load in the process ends, and only if it was running when the first began (an
application that turned it off keeps it off).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The collector paused inside the block (see the module doc)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
