"""Loading a CAN database (DBC, KCD, SYM, ARXML) with cantools, strictly or leniently.

Strict loading (the default) is cantools' own ``load_file``: a database cantools refuses
raises :class:`~mcs.errors.ConfigurationError` naming the file and cantools' reason
(which for a syntax error holds the line and column).

Lenient loading (``strict=False``) passes ``strict=False`` to cantools, which then accepts
overlapping signals and signals that do not fit their message. Two faults cantools refuses
even then are repaired for DBC files, each named in :attr:`Database.skipped`:

* a message whose frame id does not fit its identifier (more than 11 bits for a standard
  frame, 29 for an extended one) is left out, with the value tables that named it;
* a value table (``VAL_``) or value type (``SIG_VALTYPE_``) naming a signal its message
  does not have is left out.

Statements are located with cantools' own DBC grammar, so nothing here parses DBC by hand.
Every message of a leniently loaded database that fails cantools' strict checks is named
in :attr:`Database.unchecked`; the driver decodes it but offers no send tool for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cantools
from cantools.database.can import Database as CantoolsDatabase
from cantools.database.can import Message

from mcs.errors import ConfigurationError

#: File extensions cantools reads, and the format each names.
FORMATS = {"dbc": "dbc", "kcd": "kcd", "sym": "sym", "arxml": "arxml"}
_STANDARD_BITS, _EXTENDED_BITS = 11, 29
_EXTENDED_FLAG = 0x80000000
_VECTOR_INDEPENDENT = "VECTOR__INDEPENDENT_SIG_MSG"  # cantools discards this pseudo-message


@dataclass(frozen=True, slots=True)
class Database:
    """A loaded CAN database, and what lenient loading left out or did not check."""

    db: CantoolsDatabase
    source: str
    skipped: tuple[str, ...] = ()
    unchecked: dict[str, str] = field(default_factory=dict)

    @property
    def messages(self) -> Sequence[Message]:
        return self.db.messages


def load(
    source: str | os.PathLike[str] | CantoolsDatabase,
    *,
    database_format: str | None = None,
    encoding: str | None = None,
    strict: bool = True,
) -> Database:
    """Load ``source`` (a file path, or a cantools ``Database`` already in memory).

    Raises:
        ConfigurationError: the file is missing, of an unknown format, or refused by
            cantools (the message names the file and cantools' reason).
    """
    if isinstance(source, CantoolsDatabase):
        return _checked(Database(source, "<cantools Database>"), strict)
    path = Path(source)
    if not path.is_file():
        raise ConfigurationError(f"CAN database {str(path)!r} does not exist or is not a file")
    fmt = (database_format or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ConfigurationError(
            f"CAN database {str(path)!r}: unknown format {fmt!r}; use a .dbc, .kcd, .sym or .arxml "
            "file, or pass database_format="
        )
    text_encoding = encoding or ("cp1252" if fmt in ("dbc", "sym") else "utf-8")
    try:
        db = cantools.database.load_file(
            str(path), database_format=FORMATS[fmt], encoding=text_encoding, strict=strict
        )
    except Exception as exc:
        if strict:
            raise ConfigurationError(
                f"CAN database {str(path)!r}: cantools refused it: {_reason(exc)}. "
                "Pass strict=False to load it leniently; the driver then names what it left out."
            ) from None
        if fmt != "dbc":
            raise ConfigurationError(f"CAN database {str(path)!r}: cantools refused it: {_reason(exc)}") from None
        return _checked(_repaired(path, text_encoding, exc), strict)
    return _checked(Database(_can_database(db, path), str(path)), strict)


def _can_database(db: object, path: Path) -> CantoolsDatabase:
    if not isinstance(db, CantoolsDatabase):
        raise ConfigurationError(f"CAN database {str(path)!r} is not a CAN message database")
    return db


def _reason(exc: BaseException) -> str:
    return " ".join(str(exc).split()).rstrip(".") or type(exc).__name__


def _checked(database: Database, strict: bool) -> Database:
    """Name the messages of a lenient database that fail cantools' strict checks."""
    if strict:
        return database
    unchecked = dict(database.unchecked)
    for message in database.messages:
        try:
            message.refresh(strict=True)
        except Exception as exc:
            unchecked[message.name] = _reason(exc)
    skipped = database.skipped + tuple(
        f"message {name}: {reason}; decoded, but offered no send tool" for name, reason in unchecked.items()
    )
    return Database(database.db, database.source, skipped, unchecked)


# ---------------------------------------------------------------------- DBC repair


@dataclass(frozen=True, slots=True)
class _Statement:
    keyword: str
    tokens: list[Any]
    start: int
    end: int


def _statements(text: str) -> list[_Statement]:
    """Top-level DBC statements with their spans, from cantools' own DBC grammar."""
    from cantools.database.can.formats.dbc.dbc_loader import DbcParser

    tree: Any = DbcParser().parse(text, token_tree=True)
    found = sorted(
        ((statement[0].offset, str(statement[0].value), statement) for statements in tree.values()
         for statement in statements),
        key=lambda item: item[0],
    )
    out = []
    for index, (start, keyword, tokens) in enumerate(found):
        end = found[index + 1][0] if index + 1 < len(found) else len(text)
        out.append(_Statement(keyword, tokens, start, end))
    return out


def _frame_id_fault(raw_id: int) -> str | None:
    frame_id = raw_id & 0x7FFFFFFF
    if raw_id & _EXTENDED_FLAG:
        if frame_id.bit_length() > _EXTENDED_BITS:
            return f"extended frame id 0x{frame_id:x} does not fit 29 bits"
    elif frame_id.bit_length() > _STANDARD_BITS:
        return f"standard frame id 0x{frame_id:x} does not fit 11 bits"
    return None


def _signal_names(message_tokens: list[Any]) -> set[str]:
    return {str(signal[1][0].value) for signal in message_tokens[6]}


def _repairs(statements: list[_Statement]) -> Iterator[tuple[_Statement, str]]:
    """The statements lenient loading leaves out, each with the reason it names."""
    signals: dict[int, set[str]] = {}
    for statement in statements:
        if statement.keyword != "BO_":
            continue
        raw_id, name = int(statement.tokens[1].value), str(statement.tokens[2].value)
        fault = None if name == _VECTOR_INDEPENDENT else _frame_id_fault(raw_id)
        if fault is not None:
            yield statement, f"message {name} (BO_ {raw_id}): {fault}; left out"
        else:
            signals.setdefault(raw_id, set()).update(_signal_names(statement.tokens))
    for statement in statements:
        if statement.keyword == "VAL_" and statement.tokens[1]:
            raw_id, signal, what = int(statement.tokens[1][0].value), str(statement.tokens[2].value), "value table"
        elif statement.keyword == "SIG_VALTYPE_":
            raw_id, signal, what = int(statement.tokens[1].value), str(statement.tokens[2].value), "value type"
        else:
            continue
        if signal not in signals.get(raw_id, ()):
            yield statement, f"{statement.keyword} {raw_id} {signal}: message {raw_id} has no signal {signal}; {what} left out"


def _repaired(path: Path, encoding: str, first_error: BaseException) -> Database:
    try:
        text = path.read_text(encoding=encoding)
        statements = _statements(text)
    except Exception as exc:
        raise ConfigurationError(f"CAN database {str(path)!r}: cantools cannot parse it: {_reason(exc)}") from None
    repairs = list(_repairs(statements))
    if not repairs:
        raise ConfigurationError(f"CAN database {str(path)!r}: cantools refused it: {_reason(first_error)}")
    dropped = {id(statement) for statement, _ in repairs}
    kept = "".join(text[s.start:s.end] for s in statements if id(s) not in dropped)
    head = text[: statements[0].start] if statements else ""
    try:
        db = cantools.database.load_string(head + kept, database_format="dbc", strict=False)
    except Exception as exc:
        raise ConfigurationError(
            f"CAN database {str(path)!r}: cantools refused it even after leaving out "
            f"{len(repairs)} statement(s): {_reason(exc)}"
        ) from None
    return Database(_can_database(db, path), str(path), tuple(reason for _, reason in repairs))
