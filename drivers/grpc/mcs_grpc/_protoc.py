"""``.proto`` files compiled in-process by grpcio-tools' bundled ``protoc`` into a descriptor set.

Nothing is generated or executed: ``protoc`` writes a ``FileDescriptorSet`` (with imports
and source info, for comments) and the driver builds its own descriptor pool from that.
The well-known types (``google/protobuf/*.proto``) are always on the include path.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from google.protobuf import descriptor_pb2

from mcs.errors import ConfigurationError

# protoc reports errors on the process's stderr (file descriptor 2); one compile at a time
# borrows it so the message can be read back and reported as one clear error.
_STDERR_LOCK = threading.Lock()


def _well_known_include() -> Path:
    import grpc_tools  # type: ignore[import-untyped]

    return Path(grpc_tools.__file__).resolve().parent / "_proto"


def _relative_to_include(proto: Path, includes: Sequence[Path]) -> str:
    for include in includes:
        with contextlib.suppress(ValueError):
            return proto.relative_to(include).as_posix()
    folders = ", ".join(str(i) for i in includes)
    raise ConfigurationError(
        f"{proto}: the file is not under any include path ({folders}); add its root folder to include_paths"
    )


@contextlib.contextmanager
def _captured_stderr() -> Iterator[Path]:
    """Point file descriptor 2 at a temporary file for the block; yields that file's path."""
    with _STDERR_LOCK, tempfile.TemporaryDirectory(prefix="mcs-grpc-") as folder:
        log = Path(folder) / "protoc.log"
        saved = os.dup(2)
        try:
            with open(log, "wb") as sink:
                os.dup2(sink.fileno(), 2)
                try:
                    yield log
                finally:
                    os.dup2(saved, 2)
        finally:
            os.close(saved)


def compile_protos(
    protos: Sequence[str | os.PathLike[str]], include_paths: Sequence[str | os.PathLike[str]] = ()
) -> descriptor_pb2.FileDescriptorSet:
    """Compile ``protos`` (and everything they import) into one descriptor set.

    Without ``include_paths``, each file's own folder is its include path.

    Raises:
        ConfigurationError: a file is missing, outside the include paths, or does not
            compile; the message is protoc's (``file.proto:3:26: "strin" is not defined.``).
    """
    from grpc_tools import _protoc_compiler

    files = [Path(p).resolve() for p in protos]
    if not files:
        raise ConfigurationError("proto names no file; give one .proto path or a list of them")
    for path in files:
        if not path.is_file():
            raise ConfigurationError(f"{path}: no such .proto file")
    includes = [Path(p).resolve() for p in include_paths] or list(dict.fromkeys(p.parent for p in files))
    for folder in includes:
        if not folder.is_dir():
            raise ConfigurationError(f"include path {folder} is not a folder")
    names = [_relative_to_include(path, includes) for path in files]
    with tempfile.TemporaryDirectory(prefix="mcs-grpc-") as out:
        target = Path(out) / "descriptors.pb"
        argv = [
            "protoc",
            *(f"--proto_path={folder}" for folder in [*includes, _well_known_include()]),
            f"--descriptor_set_out={target}",
            "--include_imports",
            "--include_source_info",
            *names,
        ]
        with _captured_stderr() as log:
            code = _protoc_compiler.run_main([arg.encode() for arg in argv])
            report = log.read_text(errors="replace").strip()
        if code != 0 or not target.is_file():
            lines = [line for line in report.splitlines() if line.strip()]
            shown = "; ".join(lines[:5]) + (f" (and {len(lines) - 5} more)" if len(lines) > 5 else "")
            raise ConfigurationError(f"the .proto files do not compile: {shown or f'protoc exited with {code}'}")
        return descriptor_pb2.FileDescriptorSet.FromString(target.read_bytes())


def read_descriptor_set(source: str | os.PathLike[str] | bytes) -> descriptor_pb2.FileDescriptorSet:
    """A serialized ``FileDescriptorSet`` (``protoc --descriptor_set_out``), from a path or bytes.

    Raises:
        ConfigurationError: the file is missing or is not a descriptor set.
    """
    where = "descriptor_set" if isinstance(source, bytes) else str(source)
    if isinstance(source, bytes):
        data = source
    else:
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            raise ConfigurationError(f"{where}: cannot read the descriptor set ({exc.strerror})") from None
    try:
        parsed = descriptor_pb2.FileDescriptorSet.FromString(data)
    except Exception:
        raise ConfigurationError(f"{where}: not a serialized FileDescriptorSet") from None
    if not parsed.file:
        raise ConfigurationError(f"{where}: the descriptor set holds no file")
    return parsed
