"""Helpers for writing policies that judge argument values (SECURITY.md F1).

A policy that allows paths under ``/srv/data/`` with ``value.startswith("/srv/data/")``
lets ``/srv/data/../../etc/passwd`` through, and ``/srv/data-secrets/x``, and a symlink
inside the folder that points out of it. :func:`path_within` decides on the path the
value will really reach:

* the value is refused outright when it could be read two ways: leading or trailing
  space or quotes, control characters or NUL;
* every reading of it must fall under a root: as given, percent-decoded (repeatedly,
  ``%252e`` too; a value still encoded after four rounds is refused),
  Unicode-normalised (NFC and NFKC, so a fullwidth solidus or full stop
  is judged as the ``/`` or ``.`` a later step may turn it into), and with ``~`` and
  ``$VARIABLE`` references expanded as this process would (``~/.ssh`` is judged as the home
  folder's, which a tool calling ``expanduser`` reads);
* each reading is made absolute (relative to ``base``, default the first root), ``.``
  and ``..`` are resolved and symlinks followed (``os.path.realpath``), and compared
  component by component, case-sensitively: ``/DATA/x`` is not under ``/data``.

:func:`path_policy` makes a ready policy of it for named arguments::

    driver.add_policy(path_policy(["/srv/data"], arguments=("path", "target")))

:func:`agents_policy` is a default-deny allow-list of agents and the tools each may call.
"""

from __future__ import annotations

import fnmatch
import os
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mcs.context import AgentContext, PolicyDecision

__all__ = ["agents_policy", "path_policy", "path_within", "resolved_path"]

_MAX_DECODES = 4


def _refusal(value: str) -> str | None:
    if not value:
        return "it is empty"
    if value != value.strip():
        return "it starts or ends with white space"
    if value[0] in "'\"`" or value[-1] in "'\"`":
        return "it starts or ends with a quote"
    if any(unicodedata.category(c) in ("Cc", "Cf") for c in value):
        return "it holds control or invisible characters"
    return None


def _readings(value: str) -> set[str] | None:
    """The value as given, percent-decoded until stable, in NFC and NFKC forms, and each
    with ``~`` and ``$VARIABLE`` references expanded;
    ``None`` when decoding has not settled after ``_MAX_DECODES`` rounds (a reading
    deeper down could not be judged)."""
    forms = {value}
    decoded = value
    for _ in range(_MAX_DECODES + 1):
        step = unquote(decoded)
        if step == decoded:
            break
        decoded = step
        forms.add(decoded)
    else:
        return None
    for form in list(forms):
        forms.add(unicodedata.normalize("NFC", form))
        forms.add(unicodedata.normalize("NFKC", form))
    for form in list(forms):  # what a tool that expands `~` or `$VAR` (many file tools do) would reach
        forms.add(os.path.expanduser(form))
        forms.add(os.path.expandvars(form))
        forms.add(os.path.expanduser(os.path.expandvars(form)))
    return forms


def resolved_path(value: str, base: str | os.PathLike[str]) -> Path:
    """``value`` as the absolute, symlink-free path it names (relative to ``base``).

    Raises:
        ValueError: the value is ambiguous (see the module doc); the message says why.
    """
    why = _refusal(value)
    if why is not None:
        raise ValueError(f"the path {value!r} is refused: {why}")
    joined = os.path.join(os.fspath(base), value)
    return Path(os.path.realpath(joined))


def path_within(value: str, roots: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                *, base: str | os.PathLike[str] | None = None) -> bool:
    """Whether every reading of ``value`` names a path under one of ``roots`` (see the module doc).

    ``roots`` are resolved the same way (symlinks followed). ``False`` for an ambiguous value.
    """
    root_list = [roots] if isinstance(roots, str | os.PathLike) else list(roots)
    if not root_list:
        return False
    resolved_roots = [Path(os.path.realpath(os.fspath(r))) for r in root_list]
    start = base if base is not None else resolved_roots[0]
    if _refusal(value) is not None:
        return False
    readings = _readings(value)
    if readings is None:
        return False
    for reading in readings:
        if _refusal(reading) is not None or "\x00" in reading:
            return False
        path = resolved_path(reading, start)
        if not any(path == root or path.is_relative_to(root) for root in resolved_roots):
            return False
    return True


def path_policy(
    roots: Sequence[str | os.PathLike[str]],
    *,
    arguments: Sequence[str] = ("path",),
    tools: Iterable[str] | None = None,
) -> Any:
    """A policy denying a call whose ``arguments`` (top-level names) hold a path outside ``roots``.

    ``tools`` limits it to those tool names (default: every tool). A value that is not a
    string (or a list of strings) where a path is expected is denied too.
    """
    names = tuple(arguments)
    only = frozenset(tools) if tools is not None else None
    shown = ", ".join(os.fspath(r) for r in roots)

    def policy(context: AgentContext, tool: str, args: Mapping[str, Any]) -> PolicyDecision:
        if only is not None and tool not in only:
            return PolicyDecision.allow()
        for name in names:
            if name not in args:
                continue
            value = args[name]
            values = value if isinstance(value, list) else [value]
            for item in values:
                if not isinstance(item, str) or not path_within(item, roots):
                    return PolicyDecision.deny(
                        f"argument {name!r} must name a path under {shown} (no '..', symlinks out, "
                        "encoded or padded forms)"
                    )
        return PolicyDecision.allow()

    return policy


def agents_policy(allowed: Mapping[str, Iterable[str]]) -> Any:
    """A default-deny policy: an agent id in ``allowed`` may call the tools its patterns
    match (``fnmatch``, ``"*"`` for all); any other agent, or tool, is denied.

    The agent id comes from the caller (``AgentContext.agent_id``): behind ``mcs serve``
    with OAuth it is the token's (its subject, else its client); elsewhere it is only as
    trustworthy as the caller.
    """
    table = {agent: tuple(patterns) for agent, patterns in allowed.items()}

    def policy(context: AgentContext, tool: str, args: Mapping[str, Any]) -> PolicyDecision:
        patterns = table.get(context.agent_id)
        if patterns is None:
            return PolicyDecision.deny(f"agent {context.agent_id!r} is not on the allow-list")
        if not any(fnmatch.fnmatchcase(tool, pattern) for pattern in patterns):
            return PolicyDecision.deny(f"agent {context.agent_id!r} may not call {tool}")
        return PolicyDecision.allow()

    return policy
