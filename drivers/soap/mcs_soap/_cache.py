"""The parsed-WSDL cache (the ``cache`` capability), in memory and optionally on disk.

Keyed by content: the entry WSDL's location and bytes and the options that shape the
tools. An entry also records the digest of every document the WSDL imported; a hit is
used only when each of them still has that digest, so an edited import is seen.

* Memory: the parsed zeep document, the schema index and the tools, shared by drivers
  in one process (a small LRU).
* Disk (``cache_dir``): the tools as JSON, written atomically with owner-only
  permissions. A driver built from a disk hit lists and describes its tools at once and
  parses the WSDL with zeep on its first call (or in :meth:`SoapDriver.warmup`). JSON is
  read back as data only: the cache never holds code (no pickle). A file is read only when
  this process's user owns it and no one else may write it (:func:`_trusted_bytes`): an
  entry names each tool's operation, address and hints, so one planted in a shared folder
  could send calls, and their credentials, elsewhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

FORMAT = 2  # 2: descriptions without invisible format characters
MEMORY_ENTRIES = 16


@dataclass
class Parsed:
    """A WSDL as the driver uses it. ``document`` and ``index`` are ``None`` after a disk hit."""

    key: str
    dependencies: dict[str, str]
    tools: list[Any]
    document: Any = None
    source: str = "parsed"
    #: What zeep warned about while parsing (an unusable message part, a missing operation).
    warnings: list[str] = field(default_factory=list)


_memory: OrderedDict[str, Parsed] = OrderedDict()
_lock = threading.Lock()


def content_key(location: str, content: bytes, options: Mapping[str, Any]) -> str:
    sha = hashlib.sha256()
    sha.update(f"mcs-soap/{FORMAT}\0{location}\0".encode())
    sha.update(hashlib.sha256(content).digest())
    sha.update(json.dumps(options, sort_keys=True, default=str).encode())
    return sha.hexdigest()


def digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _fresh(entry: Parsed, read: Callable[[str], bytes]) -> bool:
    try:
        return all(digest(read(location)) == sha for location, sha in entry.dependencies.items())
    except Exception:
        return False


def from_memory(key: str, read: Callable[[str], bytes]) -> Parsed | None:
    with _lock:
        entry = _memory.get(key)
        if entry is not None:
            _memory.move_to_end(key)
    if entry is None or not _fresh(entry, read):
        return None
    return replace(entry, source="memory")


def to_memory(entry: Parsed) -> None:
    if entry.document is None:
        return
    with _lock:
        _memory[entry.key] = entry
        _memory.move_to_end(entry.key)
        while len(_memory) > MEMORY_ENTRIES:
            _memory.popitem(last=False)


def clear_memory() -> None:
    """Forget every WSDL parsed in this process."""
    with _lock:
        _memory.clear()


def _path(cache_dir: str | os.PathLike[str], key: str) -> Path:
    return Path(cache_dir) / f"wsdl-{key}.json"


def _trusted_bytes(path: Path) -> bytes | None:
    """The content of ``path`` if it is a regular file (not a link) that this process's user
    owns and that neither its group nor others may write; ``None`` otherwise."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(handle, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o022:
            return None
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            return None
        return file.read()


def from_disk(cache_dir: str | os.PathLike[str], key: str, read: Callable[[str], bytes],
              decode: Callable[[Mapping[str, Any]], Any]) -> Parsed | None:
    content = _trusted_bytes(_path(cache_dir, key))
    if content is None:
        return None
    try:
        data = json.loads(content)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
        return None
    try:
        entry = Parsed(key, dict(data["dependencies"]), [decode(t) for t in data["tools"]], source="disk")
    except (KeyError, TypeError, ValueError):
        return None
    return entry if _fresh(entry, read) else None


def to_disk(cache_dir: str | os.PathLike[str], entry: Parsed, encode: Callable[[Any], Mapping[str, Any]]) -> None:
    """Write ``entry`` (atomically); a cache that cannot be written is skipped silently."""
    folder = Path(cache_dir)
    with contextlib.suppress(OSError):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        payload = json.dumps({"format": FORMAT, "key": entry.key, "dependencies": entry.dependencies,
                              "tools": [encode(t) for t in entry.tools]}, separators=(",", ":"))
        handle, temp = tempfile.mkstemp(dir=folder, prefix=".wsdl-", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(payload)
            os.replace(temp, _path(folder, entry.key))
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)
