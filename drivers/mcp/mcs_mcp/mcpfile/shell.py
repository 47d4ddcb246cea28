"""Just enough of bash's lexer to know, for each placeholder, how bash would read it there.

gen-mcp pastes values into a ``bash -c`` string. MCS keeps the author's script as bash
source but puts a *reference* to each value where the placeholder was; what that
reference looks like depends on the quoting around it:

=============  ======================================  ==========================
context        example                                 reference written
=============  ======================================  ==========================
``word``       ``git clone {url}``                     ``"${__MCS_ARGS[@]:3:1}"``
``dq``         ``echo "Hello {name}"``                 ``${__MCS_ARGS[3]}``
``sq``         ``echo 'id={id}'``                      ``'"${__MCS_ARGS[3]}"'``
``ansi``       ``printf $'{x}\\n'``                    ``'"${__MCS_ARGS[3]}"$'``
``heredoc``    an unquoted here-document body          ``${__MCS_ARGS[3]}``
``arith``      ``$(( {n} + 1 ))``                      ``${__MCS_ARGS[3]}`` (numbers only)
=============  ======================================  ==========================

Bash expands a variable reference exactly once and never parses its value as code
(except in arithmetic, hence numbers only there), so no value can run as a command.
The lexer also records whether a placeholder starts a word (where a leading ``-`` would
read as an option) and whether ``--`` came earlier in the same simple command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from mcs.errors import ConfigurationError

Context = Literal["word", "dq", "sq", "ansi", "heredoc", "heredoc_literal", "arith", "comment"]

_BOUNDARY = frozenset(" \t\n;&|()<>")
_SEPARATORS = frozenset(";&|\n()")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash"})
_ARITH_COMPARE = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


@dataclass(frozen=True, slots=True)
class Slot:
    """A token the lexer treats as a value: ``index`` identifies it to the caller."""

    index: int


@dataclass(frozen=True, slots=True)
class Occurrence:
    """How bash reads the value at one slot."""

    context: Context
    word_start: bool  # nothing literal precedes it in its word
    after_double_dash: bool  # a "--" word came earlier in the same simple command
    evaluated: bool  # an argument of eval / sh -c: bash would run it as code
    arithmetic_operand: bool  # next to -eq/-lt/...: bash evaluates it as arithmetic
    command_position: bool  # it would name the program to run


@dataclass
class _Frame:
    kind: str  # normal, dq, sq, ansi, backtick, cmdsub, arith, heredoc
    depth: int = 0


class ShellLexer:
    """Feed literal text and slots in order; read :attr:`occurrences` and :meth:`state`."""

    def __init__(self) -> None:
        self.stack: list[_Frame] = [_Frame("normal")]
        self.occurrences: dict[int, Occurrence] = {}
        self._word_literal = False  # the current word has literal content
        self._in_word = False
        self._word_chars: list[str] = []
        self._words: list[str] = []  # completed words of the current simple command
        self._double_dash = False
        self._pending_heredocs: list[tuple[str, bool, bool]] = []  # (delimiter, quoted, strip tabs)
        self._heredoc: tuple[str, bool, bool] | None = None
        self._line: list[str] = []
        self._skip = 0

    # ------------------------------------------------------------------ public

    def state(self) -> tuple[tuple[str, int], ...]:
        """The quoting state (to check that a format leaves it as it found it)."""
        return tuple((f.kind, f.depth) for f in self.stack) + (("heredoc", 1),) * (self._heredoc is not None)

    def feed(self, items: Sequence[str | Slot]) -> None:
        for item in items:
            if isinstance(item, Slot):
                self._slot(item)
            else:
                text = item
                i = 0
                while i < len(text):
                    i = self._char(text, i)

    def finish(self) -> None:
        """Raise if a quote or substitution is left open."""
        self._end_word()
        if self.stack[-1].kind == "comment":
            self.stack.pop()
        top = self.stack[-1].kind
        if len(self.stack) > 1 or self._heredoc is not None:
            what = {"dq": "double quote", "sq": "single quote", "ansi": "$'...' quote",
                    "backtick": "backquote", "cmdsub": "$( ... )", "arith": "arithmetic expression"}.get(top, top)
            if self._heredoc is not None:
                return  # a here-document may run to the end of the script
            raise ConfigurationError(f"the command leaves a {what} open")

    # ------------------------------------------------------------------ internals

    def _context(self) -> Context:
        if self._heredoc is not None:
            return "heredoc" if not self._heredoc[1] else "heredoc_literal"
        kind = self.stack[-1].kind
        if kind in ("dq", "sq", "ansi", "arith", "comment"):
            return kind  # type: ignore[return-value]
        return "word"

    def _slot(self, slot: Slot) -> None:
        context = self._context()
        if context in ("heredoc", "heredoc_literal"):
            self._line.append("\0")
        words = [w.rsplit("/", 1)[-1] for w in self._words]
        evaluated = "eval" in words or any(
            word in _SHELLS and "-c" in words[i + 1 :] for i, word in enumerate(words)
        )
        previous = self._words[-1] if self._words and not self._in_word else ""
        self.occurrences[slot.index] = Occurrence(
            context=context,
            word_start=not self._word_literal and context in ("word", "dq", "sq", "ansi"),
            after_double_dash=self._double_dash,
            evaluated=evaluated,
            arithmetic_operand=previous in _ARITH_COMPARE,
            command_position=not self._words and not self._word_literal and context in ("word", "dq", "sq", "ansi"),
        )
        if context in ("word", "dq", "sq", "ansi"):
            self._in_word = True

    def _literal(self, ch: str) -> None:
        self._in_word = True
        self._word_literal = True
        self._word_chars.append(ch)

    def _end_word(self) -> None:
        if self._in_word:
            word = "".join(self._word_chars)
            if self._word_literal:
                self._words.append(word)
                if word == "--":
                    self._double_dash = True
            else:
                self._words.append("\0")  # a word made of values only
        self._in_word = False
        self._word_literal = False
        self._word_chars = []

    def _end_command(self) -> None:
        self._end_word()
        self._words = []
        self._double_dash = False

    def _char(self, text: str, i: int) -> int:
        ch = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if self._heredoc is not None:
            return self._heredoc_char(text, i)
        frame = self.stack[-1]
        kind = frame.kind
        if kind == "comment":
            if ch == "\n":
                self.stack.pop()
                return i  # the newline ends the command in the enclosing context
            return i + 1
        if kind == "sq":
            if ch == "'":
                self.stack.pop()
            else:
                self._literal(ch)
            return i + 1
        if kind == "ansi":
            if ch == "\\" and nxt:
                self._literal(nxt)
                return i + 2
            if ch == "'":
                self.stack.pop()
            else:
                self._literal(ch)
            return i + 1
        if kind == "dq":
            if ch == "\\" and nxt:
                self._literal(nxt)
                return i + 2
            if ch == '"':
                self.stack.pop()
                return i + 1
            if ch == "`":
                self.stack.append(_Frame("backtick"))
                return i + 1
            if ch == "$" and nxt == "(":
                return self._open_dollar_paren(text, i)
            self._literal(ch)
            return i + 1
        if kind == "arith":
            if ch == "(":
                frame.depth += 1
            elif ch == ")":
                if frame.depth == 0:
                    self.stack.pop()
                    return i + 2 if nxt == ")" else i + 1
                frame.depth -= 1
            elif ch == "]" and frame.depth == -1:
                self.stack.pop()
            self._literal(ch)
            return i + 1
        # normal, cmdsub, backtick: unquoted shell text
        if ch == "\\" and nxt:
            self._literal(nxt)
            return i + 2
        if kind == "backtick" and ch == "`":
            self.stack.pop()
            return i + 1
        if kind == "cmdsub" and ch == ")" and frame.depth == 0:
            self.stack.pop()
            self._end_command()
            return i + 1
        if kind == "cmdsub" and ch == "(":
            frame.depth += 1
        elif kind == "cmdsub" and ch == ")":
            frame.depth -= 1
        if ch == "'":
            self.stack.append(_Frame("sq"))
            self._in_word = True
            return i + 1
        if ch == '"':
            self.stack.append(_Frame("dq"))
            self._in_word = True
            return i + 1
        if ch == "`":
            self.stack.append(_Frame("backtick"))
            self._in_word = True
            return i + 1
        if ch == "$" and nxt == "'":
            self.stack.append(_Frame("ansi"))
            self._in_word = True
            return i + 2
        if ch == "$" and nxt == "(":
            self._in_word = True
            return self._open_dollar_paren(text, i)
        if ch == "$" and nxt == "[":
            self.stack.append(_Frame("arith", depth=-1))
            return i + 2
        if ch == "(" and nxt == "(" and not self._in_word:
            self.stack.append(_Frame("arith"))
            return i + 2
        if ch == "#" and not self._in_word:
            self.stack.append(_Frame("comment"))
            return i + 1
        if ch == "<" and text.startswith("<<", i) and not text.startswith("<<<", i):
            return self._heredoc_operator(text, i)
        if ch in _BOUNDARY:
            if ch == "\n" and self._pending_heredocs:
                self._end_command()
                self._heredoc = self._pending_heredocs.pop(0)
                self._line = []
                return i + 1
            if ch in _SEPARATORS:
                self._end_command()
            else:
                self._end_word()
            return i + 1
        self._literal(ch)
        return i + 1

    def _open_dollar_paren(self, text: str, i: int) -> int:
        if text.startswith("$((", i):
            self.stack.append(_Frame("arith"))
            return i + 3
        self.stack.append(_Frame("cmdsub"))
        return i + 2

    def _heredoc_operator(self, text: str, i: int) -> int:
        j = i + 2
        strip = False
        if j < len(text) and text[j] == "-":
            strip = True
            j += 1
        while j < len(text) and text[j] in " \t":
            j += 1
        start = j
        while j < len(text) and text[j] not in " \t\n;&|<>()":
            j += 1
        raw = text[start:j]
        quoted = any(q in raw for q in "'\"\\")
        delimiter = raw.replace("'", "").replace('"', "").replace("\\", "")
        if not delimiter:
            raise ConfigurationError("a here-document (<<) needs a delimiter word written in the command")
        self._pending_heredocs.append((delimiter, quoted, strip))
        self._end_word()
        return j

    def _heredoc_char(self, text: str, i: int) -> int:
        assert self._heredoc is not None
        ch = text[i]
        if ch == "\n":
            line = "".join(self._line)
            delimiter, _quoted, strip = self._heredoc
            if (line.lstrip("\t") if strip else line) == delimiter:
                self._heredoc = self._pending_heredocs.pop(0) if self._pending_heredocs else None
            self._line = []
            return i + 1
        self._line.append(ch)
        if not self._heredoc[1] and ch == "\\" and i + 1 < len(text):
            self._line.append(text[i + 1])
            return i + 2
        return i + 1
