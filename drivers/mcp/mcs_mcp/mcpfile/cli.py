"""CLI invocations: the author's bash, with every value passed as data.

gen-mcp runs ``bash -c`` on a string with the values pasted in, so any argument can
inject shell code. Here the command stays bash (pipes, ``||``, redirections, multi-line
scripts, ``"{param}"`` inside quotes all keep their meaning) but each placeholder becomes
a reference to a positional parameter (see :mod:`.shell`), and the values travel in argv:
``bash -c SCRIPT tool v1 v2 ...``. Bash never parses a value as source.

Where a placeholder may stand is decided at load by :mod:`.shell` with a real bash parser:
only positions proven to keep the value data, as an argument or the input of a program on
its allow-list (or one the operator trusts, :attr:`CliOptions.trusted_programs`), are
allowed; everything else is a ``ConfigurationError`` naming the line and the position.

What is refused at call time (``INVALID_INPUT``, nothing spawned): a value with a NUL byte
(or other control characters, unless allowed), a value beginning with ``-`` (numbers too)
where it starts a word (also each item of a list after the first, and after text bash may
expand to nothing, ``"$X"{x}``) and no ``--`` came before it in the command (it would be read
as an option), and arguments no placeholder uses when the command's end is no safe place for them.

Where git contacts a repository a value chose (:attr:`.shell.GitRemote`: the first operand
of ``clone``, ``fetch``, ``pull``, ``ls-remote`` that is present at the call), the word git
will read must be an http(s) URL the driver's egress policy allows (``POLICY_DENIED``
otherwise, nothing spawned), and git runs pinned to the checked addresses, following no
redirect, with no transport but http(s) and those only for the command itself (see
:meth:`CliInvoker.environment`). A ``git clone`` whose repository a value may choose is given
the same settings as ``--config`` options, so the clone keeps them in its ``.git/config`` for
every later fetch or pull of that URL, also one no value reaches (see :data:`CLONE_PINS`).

Where a value may be the process ``kill`` signals (:class:`.shell.SignalTarget`), it must be
one process id (``INVALID_INPUT`` otherwise) outside the server's process, parents, children
(and theirs), group and session (``POLICY_DENIED``); see :func:`check_signalled`.

Where a program writes, replaces or deletes at a path a value chose (:class:`.shell.WriteTarget`:
the operands of ``cp``, ``mv``, ``ln``, ``rm``, ``touch``, ``mkdir``..., ``sort -o``, ``git
clone``'s directory, git's ``--output``...), the path as the program will read it (joined with
the literal text of its word, resolved from the working directory with ``..`` and the
symlinks of its existing part, from each directory a literal ``cd`` of the script names) must
be inside the working directory or one of :attr:`CliOptions.write_roots` (``POLICY_DENIED``
otherwise, nothing spawned); without :attr:`CliOptions.cwd`, a server whose own working
directory is the home directory, ``/`` or above the home directory refuses every such write.
A path the command itself writes inside those directories (:class:`.shell.LiteralWrite`: ``>
out.txt``, ``cp -- {src} copy``) must still resolve inside them at each call, since a link an
earlier call left may lead it out. Where a program reads at a path a value chose (:class:`.shell.ReadTarget`:
``cat {file}``, ``grep -f``, ``jq --rawfile``, ``git diff``, ``< {file}``...), the path must
resolve the same way inside the working directory, :attr:`CliOptions.write_roots` or
:attr:`CliOptions.read_roots`, and never into ``/proc``, ``/sys`` or ``/dev`` unless a read
root is there (``POLICY_DENIED``, naming ``cli_read_roots``). A path the command names whose text
bash knows only when it runs (``x=$(cat list); cat -- "$x"``, an unquoted ``$p``), or that a link
the command makes on the way may lead elsewhere (``ln -s -- . x; echo hi > out.txt``), is refused
at load where a model's value reaches the file's commands (:attr:`.shell.Findings.unknown_paths`,
:attr:`.shell.Findings.linked_paths`). The checks are not atomic with the write: a symlink a
concurrent process puts in the path between the two is not seen (a server that must hold
against that runs as a user of its own, or in a container, that reaches only its directories).

A git command whose repository a value chose reads no git configuration of the server's
user, of the system or of the environment (``GIT_CONFIG_GLOBAL=/dev/null``,
``GIT_CONFIG_NOSYSTEM=1``): only the pins and the repository's own apply.

Running: a new process group; at the deadline (or the output cap, or a cancellation) the
whole group is killed, and a deadline fails the call with ``TIMEOUT``. Processes the
command itself sends to the background (``nohup server &``) outlive it, as in gen-mcp. Output (stdout and stderr, combined as in gen-mcp) is capped with
an explicit ``[truncated ...]`` marker; a non-zero exit is an error with the exit status.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import select
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from mcs.errors import (
    ConfigurationError,
    ExecutionError,
    InvalidInputError,
    PolicyDeniedError,
    ToolTimeoutError,
)
from mcs.urls import EgressPolicy
from mcs_mcp.mcpfile import shell
from mcs_mcp.mcpfile.results import CREDENTIAL_HEADERS, InvokeResult, env_value, incoming_header
from mcs_mcp.mcpfile.shell import Occurrence
from mcs_mcp.mcpfile.templates import (
    MISSING,
    Placeholder,
    Template,
    check_params,
    format_scalar,
    lookup,
    parse_template,
    property_schema,
    schema_types,
)

ARGS = "__MCS_ARGS"
#: A templateVariables entry with this key set to true lets its value reach a program that
#: runs its arguments as code (``bash -c``, ``ssh host CMD``...): the author's explicit choice.
RUNS_AS_CODE = "x-mcs-runsAsCode"
PRELUDE = f'{ARGS}=("$@"); set --\n'
#: The bash array of the ``--config`` options a model-chosen clone is given (the last
#: positional values of a call; empty when no value chose a repository).
CLONE_PINS = "__MCS_CLONE_PINS"
#: How many files and directories below a directory ``cp`` writes into are checked for
#: symlinks at a call; a larger tree is refused rather than walked.
TREE_ENTRIES = 10_000
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@dataclass(frozen=True)
class CliOptions:
    """Driver-wide settings for commands."""

    max_output_bytes: int = 1024 * 1024
    allow_control_characters: bool = False
    cwd: str | None = None
    shell: str = "bash"
    #: Programs the operator vouches keep their arguments and input as data, added to
    #: :data:`.shell.DATA_PROGRAMS` (configuration only: a file cannot grant it).
    trusted_programs: frozenset[str] = frozenset()
    #: Where a git repository a value names may be (the driver's ``egress_allow``/``egress``).
    egress: EgressPolicy = field(default_factory=EgressPolicy)
    #: Absolute directories, besides the working directory, where a path a value names may be
    #: written, replaced or deleted (configuration only: a file cannot grant it).
    write_roots: tuple[str, ...] = ()
    #: Absolute directories, besides the working directory and :attr:`write_roots`, where a
    #: path a value names may be read (configuration only: a file cannot grant it). ``/proc``,
    #: ``/sys`` and ``/dev`` are read only where a root is one of them or inside one.
    read_roots: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Group:
    """One use of a ``templateVariables`` entry in the command."""

    key: str
    template: Template
    omit_if_false: bool
    key_is_property: bool


@dataclass(frozen=True, slots=True)
class _ClonePins:
    """Where a ``git clone`` whose repository a value may choose takes the pins as
    ``--config`` options (just after its subcommand word)."""


@dataclass(frozen=True, slots=True)
class _Item:
    """A piece of the expanded command: literal text, a placeholder or the place of a
    clone's pins, maybe in a group."""

    part: str | Placeholder | _ClonePins
    group: int | None
    slot: int | None = None


@dataclass(frozen=True, slots=True)
class _Operand:
    """One operand word of a git command that may be the repository it contacts: its
    pieces, literal text (quotes removed) or a slot, each with its group."""

    pieces: tuple[tuple[str | int, int | None], ...]
    trusted: frozenset[int]  # slots holding the server's environment, not a model's value


@dataclass(frozen=True, slots=True)
class _Remote:
    """A git command whose repository a value may be (see :class:`.shell.GitRemote`)."""

    subcommand: str
    operands: tuple[_Operand, ...]
    multiple: bool
    options_at: int  # the byte offset in the sentinel script just after the subcommand word


@dataclass(frozen=True, slots=True)
class _Target:
    """A command that writes where a value may say (see :class:`.shell.WriteTarget`): each
    candidate word as pieces of the rendered command; ``home`` marks a word that starts with
    an unquoted ``~/`` (bash puts ``$HOME`` there; the piece holds the rest)."""

    program: str
    words: tuple[_Operand, ...]
    home: tuple[bool, ...]
    clone: bool
    bases: tuple[str, ...] = ("",)  # where the program may run, relative to the working directory
    after_first: bool = False  # uniq: every word present after the first is written
    #: for each word, the variable of the server's environment it starts with, or ""
    variables: tuple[str, ...] = ()


#: Environment variables (any case) that would let git reach past the pin: proxies (the
#: proxy resolves the name again; the HTTP tools' transport ignores them too) and settings
#: that override ``protocol.*.allow``.
_UNPINNED_ENVIRONMENT = frozenset({"http_proxy", "https_proxy", "all_proxy", "git_allow_protocol",
                                   "git_protocol_from_user"})
#: Configuration git takes from the environment (``git -c`` passes it down as GIT_CONFIG_PARAMETERS).
_CONFIG_FROM_ENVIRONMENT = re.compile(r"^GIT_CONFIG(?:_PARAMETERS|_COUNT|_KEY_\d+|_VALUE_\d+|_SYSTEM|_GLOBAL)?$")
#: Where a git repository a value names may be: the schemes git reaches through curl, which
#: can be pinned to the checked address (ssh, git://, file, paths and helpers cannot).
GIT_REMOTE_SCHEMES = frozenset({"http", "https"})
_REMOTE_HOST = re.compile(r"^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|[0-9a-f:.]*:[0-9a-f:.]*)$")
#: A read path's leading ``"$NAME"``, ``$NAME`` or ``${NAME}`` (quotes already removed from the literal).
_LEADING_VARIABLE = re.compile(r'^"?\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})"?')
_REMOTE_LITERAL = re.compile(r"^[A-Za-z0-9._:/@%+,=~\"'-]*$")


class CliInvoker:
    """One compiled ``cli`` invocation. Build with :func:`compile_cli`."""

    def __init__(
        self,
        *,
        tool: str,
        command: str,
        items: list[_Item],
        groups: list[_Group],
        occurrences: Mapping[int, Occurrence],
        referenced: frozenset[str],
        property_order: tuple[str, ...],
        options: CliOptions,
        input_schema: Mapping[str, Any] | None = None,
        extras_refused: str | None = None,
        remotes: tuple[_Remote, ...] = (),
        takes_values: bool = False,
        unlisted: tuple[shell.Unlisted, ...] = (),
        writers: tuple[shell.Effect, ...] = (),
        config_readers: tuple[shell.Effect, ...] = (),
        targets: tuple[_Target, ...] = (),
        appended_targets: tuple[tuple[str, str, tuple[str, ...]], ...] = (),
        assigned: frozenset[str] = frozenset(),
        signalled: tuple[_Operand, ...] = (),
        literal_writes: tuple[shell.LiteralWrite, ...] = (),
        reads: tuple[_Target, ...] = (),
        appended_reads: tuple[tuple[str, str, tuple[str, ...]], ...] = (),
        literal_reads: tuple[shell.LiteralRead, ...] = (),
        followers: tuple[shell.Unlisted, ...] = (),
        unknown_paths: tuple[shell.Unlisted, ...] = (),
        linked_paths: tuple[shell.Unlisted, ...] = (),
    ) -> None:
        self.tool = tool
        self.command = command
        self.items = items
        self._clone_pins = any(isinstance(item.part, _ClonePins) for item in items)
        self.groups = groups
        self.occurrences = dict(occurrences)
        self.referenced = referenced
        self.property_order = property_order
        self.options = options
        self.input_schema = input_schema
        self.extras_refused = extras_refused
        self.remotes = remotes
        #: Whether a call passes a model's value to bash (a placeholder that is not
        #: ``{env.X}``, or an argument appended to the command's end).
        self.takes_values = takes_values
        #: The programs of the command off the allow-list (not trusted, not builtins that run
        #: nothing); the loader refuses them when another command of the file takes a model's
        #: values. Empty when the file marks one of this command's values x-mcs-runsAsCode.
        self.unlisted = unlisted
        #: Where the command writes files (:attr:`.shell.Findings.writers`); empty when it takes
        #: no model's value. The loader holds every :data:`.shell.CONFIG_READERS` program of
        #: the file (:attr:`config_readers`) to the operator's list when any command has one.
        self.writers = writers
        #: The programs of the command that run configuration found in files (git, jq), not
        #: trusted by the operator. Empty when the file marks one of this command's values
        #: x-mcs-runsAsCode.
        self.config_readers = config_readers
        #: The commands that write, replace or delete files at a path a value may name; each
        #: such path is checked at the call to stay inside the working directory or one of
        #: :attr:`CliOptions.write_roots`.
        self.targets = targets
        #: ``(property, program, bases)``: a property no placeholder uses whose appended
        #: ``--property=value`` names a path the command's last program writes
        #: (``cp a --target-directory=...``); its value is checked like a target's.
        self.appended_targets = appended_targets
        #: The variables the script assigns a model's value to; refused at load when the
        #: server's environment holds one, and checked again at each call.
        self.assigned = assigned
        #: The operand words of the ``kill`` commands whose process a value may name; each is
        #: checked at the call (see :func:`check_signalled`).
        self.signalled = signalled
        #: The paths the command itself names where it writes; each is checked at the call
        #: not to lead outside through a symlink (see :meth:`_check_literal_write`).
        self.literal_writes = literal_writes
        #: The commands that read a file or directory at a path a value may name; each such
        #: path is checked at the call to stay inside the working directory, the
        #: :attr:`CliOptions.write_roots` or the :attr:`CliOptions.read_roots`.
        self.reads = reads
        #: ``(property, program, bases)``: a property no placeholder uses whose appended
        #: ``--property=value`` names a path the command's last program reads.
        self.appended_reads = appended_reads
        #: The paths the command itself names where it reads; each is checked at the call
        #: not to lead outside through a symlink (see :meth:`_check_literal_read`).
        self.literal_reads = literal_reads
        #: The programs of the command that read past the paths MCS checks (``grep -R``,
        #: ``wc --files0-from``); the loader refuses them when another command of the file
        #: takes a model's values (it may leave the link or the list they follow).
        self.followers = followers
        #: Where the command reads or writes a path it names whose text is not known before the
        #: run (``x=$(cat list); cat -- "$x"``); the loader refuses them when another command of
        #: the file takes a model's values (it may write the file the path comes from).
        self.unknown_paths = unknown_paths
        #: The paths the command names itself after one of its commands that may make a symlink
        #: (``ln -s -- . x; echo hi > out.txt``); the loader refuses them when another command of
        #: the file takes a model's values (an earlier call may have left the other link).
        self.linked_paths = linked_paths

    # ------------------------------------------------------------------ rendering

    def render(self, arguments: Mapping[str, Any], metadata: Mapping[str, str]) -> tuple[str, list[str]]:
        """The bash script and its positional values for ``arguments``; nothing runs.

        Raises:
            InvalidInputError: a value would be read as an option, or has control characters.
            ExecutionError: a needed environment variable or incoming header is missing.
            PolicyDeniedError: a value is the repository a git command contacts and is not
                an http(s) URL the egress policy allows (no DNS is asked here), or names a path
                a program writes, replaces or deletes outside the working directory and the
                operator's ``cli_write_roots``.
        """
        script, values, _ = self._render(arguments, metadata)
        return script, values

    def _render(self, arguments: Mapping[str, Any],
                metadata: Mapping[str, str]) -> tuple[str, list[str], list[tuple[str, int]]]:
        """:meth:`render`, and the ``(host, port)`` of each git repository a value chose."""
        exported = sorted(name for name in self.assigned if name in os.environ)
        if exported:
            # bash keeps a variable of its environment exported: the value would reach every
            # program's environment (GIT_*, EDITOR...)
            raise PolicyDeniedError(
                f"{self.tool}: the command assigns a model's value to {', '.join(exported)}, which the server's "
                "environment now holds, so every program of the command would get the value in its environment. "
                "Rename the variable in the command, or remove it from the server's environment.",
                tool=self.tool, details={"variables": exported},
            )
        active = [self._group_active(g, arguments) for g in self.groups]
        script: list[str] = []
        values: list[str] = []
        words: dict[int, list[str]] = {}
        for item in self.items:
            if item.group is not None and not active[item.group]:
                continue
            part = item.part
            if isinstance(part, str):
                script.append(part)
                continue
            if isinstance(part, _ClonePins):
                script.append(f' "${{{CLONE_PINS}[@]}}"')
                continue
            assert item.slot is not None
            occurrence = self.occurrences[item.slot]
            if occurrence.context == "comment":
                continue  # bash ignores it; nothing to pass
            value = self._value(part, arguments, metadata)
            if value is MISSING:
                continue
            start = len(values)
            script.append(self._reference(part, occurrence, value, values))
            words[item.slot] = values[start:]
        remotes = [self._check_remote(text) for text in self._repositories(active, words)]
        for program, path in self._write_paths(active, words):
            self._check_write(program, path)
        for target in self.reads:
            for base in target.bases:
                for program, path in self._target_paths(target, active, words):
                    self._check_read(program, os.path.join(base, path))
        for write in self.literal_writes:
            for base in write.bases:
                for path in shell.based_paths(base, write.path, os.environ):
                    self._check_literal_write(write, path)
        for read in self.literal_reads:
            for base in read.bases:
                for path in shell.based_paths(base, read.path, os.environ):
                    self._check_literal_read(read, path)
        for operand in self.signalled:
            texts, _, valued = self._rendered(operand, active, words, "the process kill signals")
            if valued:
                for text in texts:
                    check_signalled(text, tool=self.tool)
        body = "".join(script)
        extras = self._extra_arguments(arguments)
        if extras and self.extras_refused:
            names = ", ".join(sorted(k for k in arguments if not self._is_referenced(k)))
            raise InvalidInputError(
                f"Invalid arguments for {self.tool}: {names} cannot be passed: the command does not use "
                f"them and its end is no safe place to append them ({self.extras_refused}). Leave them out.",
                tool=self.tool, details={"fields": names.split(", ")},
            )
        for name, program, bases in self.appended_targets:
            for text in extras:
                if text.startswith(f"--{name}="):
                    for base in bases:
                        self._check_write(program, os.path.join(base, text[len(name) + 3:]))
        for name, program, bases in self.appended_reads:
            for text in extras:
                if text.startswith(f"--{name}="):
                    for base in bases:
                        self._check_read(program, os.path.join(base, text[len(name) + 3:]))
        if extras:
            body = body.rstrip()
            for text in extras:
                self._check_text(text, "an extra argument")
                body += f' "${{{ARGS}[{len(values)}]}}"'
                values.append(text)
        return self._prelude(len(values)) + body, values, remotes

    def _prelude(self, count: int) -> str:
        """The script's first line: the first ``count`` positional values become the
        array the placeholders reference; where a clone takes the pins, the values after
        them (the ``--config`` options the call adds, if any) become :data:`CLONE_PINS`."""
        if not self._clone_pins:
            return PRELUDE
        return f'{ARGS}=("${{@:1:{count}}}"); {CLONE_PINS}=("${{@:{count + 1}}}"); set --\n'

    # ------------------------------------------------------------------ git remotes

    def _repositories(self, active: list[bool], words: Mapping[int, list[str]]) -> list[str]:
        """The repositories git will contact that a model's value chose (in whole or in
        part), as git will read them: for each git command of :attr:`remotes`, its first
        operand word present at this call (all of them for ``fetch --multiple``)."""
        out: list[str] = []
        for remote in self.remotes:
            for operand in remote.operands:
                texts, chosen = self._operand_words(operand, active, words)
                if not texts:
                    continue  # absent at this call: the next operand is the repository
                if chosen:
                    out.extend(texts)
                if not remote.multiple:
                    break
        return out

    def _operand_words(self, operand: _Operand, active: list[bool],
                       words: Mapping[int, list[str]]) -> tuple[list[str], bool]:
        """The words ``operand`` becomes at this call, and whether a model's value chose
        where they point (it stands before ``scheme://host/``, or is the whole word)."""
        texts, before, _ = self._rendered(operand, active, words, "the repository URL git contacts")
        return texts, before is not None and not shell.DESTINATION_FIXED.match(before)

    def _rendered(self, operand: _Operand, active: list[bool], words: Mapping[int, list[str]],
                  what: str) -> tuple[list[str], str | None, bool]:
        """The words ``operand`` becomes at this call (none when it is absent), the literal
        text before its first model's value (``None`` when it holds none), and whether a
        model's value put anything in it. A list value is one word only when it is the
        whole operand; ``what`` names the operand in the refusal of a list inside one."""
        present = [(p, g) for p, g in operand.pieces if g is None or active[g]]
        if len(present) == 1 and isinstance(present[0][0], int):
            slot = present[0][0]
            got = list(words.get(slot, []))
            model = slot not in operand.trusted
            return got, "" if model else None, model and bool(got)
        text = ""
        before: str | None = None
        exists = valued = False
        for piece, _ in present:
            if isinstance(piece, str):
                text += piece
                exists = True
                continue
            got = words.get(piece, [])
            if len(got) > 1:
                raise InvalidInputError(
                    f"Invalid arguments for {self.tool}: a list cannot be part of {what}; pass one value.",
                    tool=self.tool,
                )
            if piece not in operand.trusted:
                before = text if before is None else before
                valued = valued or bool(got)
            text += "".join(got)
            exists = exists or bool(got)
        return ([text], before, valued) if exists else ([], None, False)

    def _check_remote(self, url: str) -> tuple[str, int]:
        """``(host, port)`` of ``url`` when a git repository a value chose may be there:
        an http(s) URL with a plain host that passes the egress policy's form checks.

        Raises:
            PolicyDeniedError: anything else (scp-style, ssh, git://, file, a path, a
                remote's name, a refused host); nothing runs.
        """
        policy = self.options.egress
        scheme = url.split(":", 1)[0].lower() if "://" in url else ""
        try:
            if scheme not in GIT_REMOTE_SCHEMES & policy.schemes:
                raise PolicyDeniedError("", details={"egress": "it is not an http(s) URL (a path, a remote's name, "
                                        "scp-style host:path, ssh://, git://, file:// and transport helpers "
                                        "cannot be checked or pinned)"})
            host, port = policy.check_form(url)
            if not _REMOTE_HOST.match(host):
                raise PolicyDeniedError("", details={"egress": "its host is not written plainly (ASCII letters, "
                                                               "digits, dots and hyphens, or an IP address)"})
        except PolicyDeniedError as exc:
            raise self._denied(url, str(exc.details.get("egress", exc.message))) from None
        return host, port

    # ------------------------------------------------------------------ write targets

    def _write_paths(self, active: list[bool], words: Mapping[int, list[str]]) -> list[tuple[str, str]]:
        """``(program, path)`` for each path a model's value chose (in whole or in part) that
        a program of the command writes, replaces or deletes at this call, as the program
        will read it, relative to the working directory (a path relative to a directory the
        script's ``cd`` names counts once from each); for a clone with no directory, the
        directories the repository's last component names."""
        out: list[tuple[str, str]] = []
        for target in self.targets:
            out.extend((program, os.path.join(base, path)) for base in target.bases
                       for program, path in self._target_paths(target, active, words))
        return out

    def _target_paths(self, target: _Target, active: list[bool],
                      words: Mapping[int, list[str]]) -> list[tuple[str, str]]:
        """The paths of one target a model's value chose at this call (see :meth:`_write_paths`)."""
        present: list[tuple[str, bool]] = []
        for index, (operand, home) in enumerate(zip(target.words, target.home, strict=True)):
            texts, chosen = self._target_words(target.program, operand, active, words)
            if home:
                texts = [os.path.expanduser("~") + text for text in texts]
            variable = target.variables[index] if target.variables else ""
            if variable:
                texts = [os.environ.get(variable, "") + text for text in texts]
            present.extend((text, chosen) for text in texts)
        if target.after_first:
            present = present[1:]
        if not target.clone:
            return [(target.program, text) for text, chosen in present if chosen]
        if len(present) > 1:
            return [(target.program, present[1][0])] if present[1][1] else []
        if present and present[0][1]:
            return [(target.program, name) for name in _clone_directories(present[0][0])]
        return []

    def _target_words(self, program: str, operand: _Operand, active: list[bool],
                      words: Mapping[int, list[str]]) -> tuple[list[str], bool]:
        """The words ``operand`` becomes at this call, and whether a model's value is in them."""
        texts, _, valued = self._rendered(operand, active, words, f"a path {program} writes")
        return texts, valued

    def _check_write(self, program: str, path: str) -> None:
        """Refuse ``path`` unless, resolved as the OS would from the working directory (``..``
        and the symlinks of the part that exists), it is inside the working directory or one
        of the operator's ``write_roots``, and so is it as written (``..`` removed): this
        process resolves ``/proc/self/cwd`` to its own directory, not the program's.

        Raises:
            PolicyDeniedError: naming the value, the working directory and the option.
        """
        cwd = self.options.cwd or os.getcwd()
        if self.options.cwd is None:
            self._refuse_unchosen_home(program, path, cwd)
        joined = os.path.join(os.path.abspath(cwd), path)
        real = os.path.realpath(joined)
        written = os.path.normpath(joined)
        given = [os.path.abspath(root) for root in (cwd, *self.options.write_roots)]
        resolved = [os.path.realpath(root) for root in given]
        if _inside(real, resolved) and _inside(written, given + resolved):
            if program == "cp":
                self._check_tree(program, path, real, resolved)
            return
        allowed = " or ".join(repr(root) for root in (cwd, *self.options.write_roots))
        raise PolicyDeniedError(
            f"{self.tool}: {program} would write, replace or delete {path[:200]!r} (that is, {real[:200]!r}), "
            f"outside the command's working directory {cwd!r}"
            + (f" and the operator's directories ({allowed})" if self.options.write_roots else "")
            + "; a value may only name a path inside it (a relative path that stays there). The operator can "
            "allow another directory with the driver option cli_write_roots (in Python "
            "cli_write_roots=['/srv/data'], on the command line -o cli_write_roots=/srv/data).",
            tool=self.tool, details={"path": path[:200], "resolved": real[:200], "cwd": cwd,
                                     "write_roots": list(self.options.write_roots)},
        )

    def _check_read(self, program: str, path: str) -> None:
        """Refuse ``path`` unless, resolved as the OS would from the working directory (``..``
        and the symlinks of the part that exists), it is inside the working directory, one of
        the operator's ``write_roots`` or ``read_roots``, and so is it as written (``..``
        removed); a path in ``/proc``, ``/sys`` or ``/dev`` (the server's environment in
        ``/proc/self/environ``, other processes, devices) only where a read root is that
        directory or inside it. For ``file``, whose ``-m`` takes a ``:``-separated list, each
        part of the path is checked.

        Raises:
            PolicyDeniedError: naming the value, what it resolves to, the working directory and
                the option ``cli_read_roots``.
        """
        cwd = self.options.cwd or os.getcwd()
        if self.options.cwd is None:
            self._refuse_unchosen_home(program, path, cwd, "read")
        roots = (cwd, *self.options.write_roots, *self.options.read_roots)
        given = [os.path.abspath(root) for root in roots]
        resolved = [os.path.realpath(root) for root in given]
        special = [root for root in given + resolved if _inside(root, list(_SYSTEM_VIEWS))]
        for part in path.split(":") if program == "file" else [path]:
            joined = os.path.join(os.path.abspath(cwd), part)
            real = os.path.realpath(joined)
            written = os.path.normpath(joined)
            views = [view for view in _SYSTEM_VIEWS if _inside(real, [view]) or _inside(written, [view])]
            if (_inside(real, resolved) and _inside(written, given + resolved)
                    and (not views or (_inside(real, special) and _inside(written, special)))):
                if program == "diff":
                    self._check_entries(program, part, real, resolved, special)
                continue
            allowed = " or ".join(repr(root) for root in roots[1:])
            where = (f"in {views[0]}, which holds the server's own environment, processes and devices, and no read "
                     "root of the operator is there" if views else
                     f"outside the command's working directory {cwd!r}"
                     + (f" and the operator's directories ({allowed})" if roots[1:] else ""))
            raise PolicyDeniedError(
                f"{self.tool}: {program} would read {path[:200]!r} (that is, {real[:200]!r}), {where}; a value may "
                "only name a path inside the working directory (a relative path that stays there). The operator "
                "can allow another directory with the driver option cli_read_roots (in Python "
                "cli_read_roots=['/srv/data'], on the command line -o cli_read_roots=/srv/data).",
                tool=self.tool, details={"path": path[:200], "resolved": real[:200], "cwd": cwd,
                                         "read_roots": list(self.options.read_roots)},
            )

    def _check_tree(self, program: str, path: str, real: str, resolved: list[str]) -> None:
        """Refuse a directory ``program`` copies into (``cp -- a {dir}`` writes ``dir/a``,
        following a symlink there; ``cp -r`` writes below it) when a symlink anywhere inside it
        leads outside ``resolved`` (the allowed roots, resolved), or when it holds more than
        :data:`TREE_ENTRIES` files and directories (not walked further). Nothing is checked for a file.

        Raises:
            PolicyDeniedError: naming the link and where it leads, or the bound.
        """
        if not os.path.isdir(real):
            return
        seen = 0
        for folder, directories, files in os.walk(real):
            seen += len(directories) + len(files)
            if seen > TREE_ENTRIES:
                raise PolicyDeniedError(
                    f"{self.tool}: {program} would write into {path[:200]!r}, which holds more than {TREE_ENTRIES} "
                    f"files and directories; MCS checks every symlink below a directory {program} writes into (one "
                    "could lead the write outside) and stops there rather than walk a larger tree at each call. "
                    "Name a smaller directory, or a file.",
                    tool=self.tool, details={"path": path[:200], "entries": TREE_ENTRIES},
                )
            for name in (*directories, *files):
                link = os.path.join(folder, name)
                if not os.path.islink(link):
                    continue
                target = os.path.realpath(link)
                if _inside(target, resolved):
                    continue
                raise PolicyDeniedError(
                    f"{self.tool}: {program} would write into {path[:200]!r}, and {os.path.relpath(link, real)[:120]!r} "
                    f"there is a symlink leading to {target[:200]!r}, outside the command's working directory and "
                    f"the operator's directories, which {program} would write through; remove the link.",
                    tool=self.tool, details={"path": path[:200], "link": link[:200], "resolved": target[:200]},
                )

    def _check_matches(self, read: shell.LiteralRead, path: str, pattern: str, real: str,
                       resolved: list[str], special: list[str]) -> None:
        """Refuse a pattern the file reads (``*.txt``, ``logs/*/a.log``) when a symlink it may
        match, at the depth of its components below ``path`` (any depth for ``**``), leads outside
        ``resolved`` or into ``/proc``, ``/sys``, ``/dev`` outside ``special``. Every symlink at
        those depths counts, matching or not: MCS does not evaluate bash's patterns.

        Raises:
            PolicyDeniedError: naming the pattern, the link and where it leads.
        """
        depth = None if "**" in pattern else len([part for part in pattern.split("/") if part])
        top = real.rstrip("/").count("/")
        for folder, directories, files in os.walk(real):
            level = folder.rstrip("/").count("/") - top + 1
            if depth is not None and level >= depth:
                directories[:] = []
            for name in (*directories, *files) if depth is None or level <= depth else ():
                link = os.path.join(folder, name)
                if not os.path.islink(link):
                    continue
                target = os.path.realpath(link)
                if _inside(target, resolved) and (not _inside(target, list(_SYSTEM_VIEWS)) or _inside(target, special)):
                    continue
                raise PolicyDeniedError(
                    f"{self.tool}: line {read.line}: {read.what} reads {os.path.join(path, pattern)[:200]!r}, and "
                    f"{os.path.relpath(link, real)[:120]!r} there is a symlink leading to {target[:200]!r}, outside "
                    "the command's working directory and the operator's directories; remove the link.",
                    tool=self.tool, details={"path": path[:200], "link": link[:200], "resolved": target[:200]},
                )

    def _check_entries(self, program: str, path: str, real: str, resolved: list[str], special: list[str]) -> None:
        """Refuse a directory ``program`` reads the entries of (``diff`` given a directory
        compares the files of the same names inside it, following symlinks) when one of its
        entries is a symlink leading outside ``resolved`` (the allowed roots, resolved), or into
        ``/proc``, ``/sys`` or ``/dev`` outside ``special``. Nothing is checked for a file.

        Raises:
            PolicyDeniedError: naming the entry and where it leads.
        """
        if not os.path.isdir(real):
            return
        with os.scandir(real) as entries:
            links = [entry.path for entry in entries if entry.is_symlink()]
        for link in links:
            target = os.path.realpath(link)
            if _inside(target, resolved) and (not _inside(target, list(_SYSTEM_VIEWS)) or _inside(target, special)):
                continue
            raise PolicyDeniedError(
                f"{self.tool}: {program} would read the files inside {path[:200]!r}, and "
                f"{os.path.basename(link)[:80]!r} there is a symlink leading to {target[:200]!r}, outside the "
                "command's working directory and the operator's directories; remove the link, or name files "
                "rather than a directory.",
                tool=self.tool, details={"path": path[:200], "link": link[:200], "resolved": target[:200]},
            )

    def _refuse_unchosen_home(self, program: str, path: str, cwd: str, verb: str = "write, replace or delete") -> None:
        """Refuse a write a value chose when the operator set no ``cli_cwd`` and the server's own
        working directory is the home directory, ``/`` or a directory above the home directory
        (some MCP clients start servers in ``/``): there, every start-up file of the user
        (``.bashrc``, ``.ssh/authorized_keys``, ``.config/...``) is inside it, and the check would
        hold nothing.

        Raises:
            PolicyDeniedError: naming the directory and the option that chooses another.
        """
        home = os.path.realpath(os.path.expanduser("~"))
        real = os.path.realpath(cwd)
        if real != "/" and not _inside(home, [real]):
            return
        raise PolicyDeniedError(
            f"{self.tool}: {program} would {verb} {path[:200]!r}, a path a model's value chose, "
            f"and the command's working directory is the server's own, {cwd!r}: the home directory, / or above "
            "the home directory, where the user's start-up files (.bashrc, .ssh/authorized_keys) are inside it. "
            "The operator can give the commands a directory of their own with the driver option cli_cwd (in "
            "Python cli_cwd='/srv/work', on the command line -o cli_cwd=/srv/work).",
            tool=self.tool, details={"path": path[:200], "cwd": cwd},
        )

    def _check_literal_write(self, write: shell.LiteralWrite, path: str) -> None:
        """Refuse a path the command itself names where it writes (``> out.txt``) when, as
        written, it is inside the working directory or one of the operator's ``write_roots``
        but resolves (symlinks followed) outside them: a link an earlier call made there, whose
        target was checked while what it leads through was not yet a link. A path the file
        writes outside them (``>> /var/log/tool.log``) is the file's own choice and not checked.

        Raises:
            PolicyDeniedError: naming the path, where it leads and the working directory.
        """
        cwd = self.options.cwd or os.getcwd()
        joined = os.path.join(os.path.abspath(cwd), path)
        given = [os.path.abspath(root) for root in (cwd, *self.options.write_roots)]
        resolved = [os.path.realpath(root) for root in given]
        if not _inside(os.path.normpath(joined), given + resolved):
            return
        real = os.path.realpath(joined)
        if _inside(real, resolved):
            if write.what == "cp":
                self._check_tree(write.what, path, real, resolved)
            return
        raise PolicyDeniedError(
            f"{self.tool}: line {write.line}: {write.what} writes to {path[:200]!r}, which a symlink now leads to "
            f"{real[:200]!r}, outside the command's working directory {cwd!r}"
            + (" and the operator's directories" if self.options.write_roots else "")
            + "; remove the link (a command that makes links lets a model choose where they lead).",
            tool=self.tool, details={"path": path[:200], "resolved": real[:200], "cwd": cwd},
        )

    def _check_literal_read(self, read: shell.LiteralRead, path: str) -> None:
        """Refuse a path the command itself names where it reads (``cat notes.txt``) when, as
        written, it is inside the working directory or one of the operator's ``write_roots`` or
        ``read_roots`` but resolves (symlinks followed) outside them, or into ``/proc``, ``/sys``
        or ``/dev`` where no read root is: a link an earlier call made there. A path the file
        reads outside them (``cat /etc/hosts``) is the file's own choice and not checked.

        Raises:
            PolicyDeniedError: naming the path, where it leads and the working directory.
        """
        cwd = self.options.cwd or os.getcwd()
        given = [os.path.abspath(root) for root in (cwd, *self.options.write_roots, *self.options.read_roots)]
        resolved = [os.path.realpath(root) for root in given]
        special = [root for root in given + resolved if _inside(root, list(_SYSTEM_VIEWS))]
        pattern = ""
        if read.glob:  # the directory before the first pattern character, and the components after it
            head, _, _ = path.partition(next(c for c in path if c in "*?["))
            path, pattern = (head.rsplit("/", 1)[0] or "/", path[len(head.rsplit("/", 1)[0]):]) if "/" in head \
                else (".", path)
        joined = os.path.join(os.path.abspath(cwd), path)
        if not _inside(os.path.normpath(joined), given + resolved):
            return
        real = os.path.realpath(joined)
        if _inside(real, resolved) and (not _inside(real, list(_SYSTEM_VIEWS)) or _inside(real, special)):
            if read.what == "diff":
                self._check_entries(read.what, path, real, resolved, special)
            if pattern:
                self._check_matches(read, path, pattern, real, resolved, special)
            return
        raise PolicyDeniedError(
            f"{self.tool}: line {read.line}: {read.what} reads {path[:200]!r}, which a symlink now leads to "
            f"{real[:200]!r}, outside the command's working directory {cwd!r}"
            + (" and the operator's directories" if given[1:] else "")
            + "; remove the link (a command that makes links lets a model choose where they lead), or, if the "
            "operator placed it, allow where it leads with the driver option cli_read_roots.",
            tool=self.tool, details={"path": path[:200], "resolved": real[:200], "cwd": cwd},
        )

    def _group_active(self, group: _Group, arguments: Mapping[str, Any]) -> bool:
        params = group.template.params()
        if params:
            present = [lookup(arguments, p) for p in params]
            if any(v is MISSING for v in present):
                return False
            return not (group.omit_if_false and any(v is False for v in present))
        if not group.key_is_property:
            return True
        value = lookup(arguments, group.key)
        if value is MISSING:
            return False
        return not (group.omit_if_false and value is False)

    def _value(self, part: Placeholder, arguments: Mapping[str, Any], metadata: Mapping[str, str]) -> Any:
        if part.source == "env":
            return env_value(part.name, tool=self.tool)
        if part.source == "header":
            return incoming_header(metadata, part.name, tool=self.tool)
        return lookup(arguments, part.name)

    def _reference(self, part: Placeholder, occurrence: Occurrence, value: Any, values: list[str]) -> str:
        label = f"argument '{part.name}'" if part.source == "param" else part.text
        context = occurrence.context
        if context == "arith" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise InvalidInputError(
                f"Invalid arguments for {self.tool}: {label} must be a number here.",
                tool=self.tool, details={"fields": [part.name]},
            )
        items = [v for v in value if v is not None] if isinstance(value, list) else [value]
        if context == "word":
            words = [format_scalar(item) for item in items]
            if occurrence.single and len(words) > 1:
                raise InvalidInputError(
                    f"Invalid arguments for {self.tool}: {label} is data the program reads (a pattern, a count, "
                    "a value), one word only; a list would make each further item an operand of its own, such as "
                    "a file to read. Pass one value.",
                    tool=self.tool, details={"fields": [part.name]},
                )
        else:
            words = [" ".join(format_scalar(item) for item in items)]
        for index, word in enumerate(words):
            self._check_text(word, label, part.name)
            if (
                # each item of a list after the first is a word of its own, wherever the
                # placeholder sits (out/{files}: "out/a" "--output=/x")
                (occurrence.word_start or index > 0)
                and not occurrence.after_double_dash
                and part.source != "env"
                and word.startswith("-")
            ):
                raise InvalidInputError(
                    f"Invalid arguments for {self.tool}: {label} must not start with '-' "
                    f"(got {word[:40]!r}); the command would read it as an option.",
                    tool=self.tool, details={"fields": [part.name]},
                )
        start = len(values)
        values.extend(words)
        return _reference_text(context, start, len(words))

    def _check_text(self, text: str, label: str, field: str | None = None) -> None:
        bad = "\x00" in text or (not self.options.allow_control_characters and _CONTROL.search(text))
        if bad:
            raise InvalidInputError(
                f"Invalid arguments for {self.tool}: {label} contains a NUL, line break or other "
                "control character, which a command-line argument cannot carry safely.",
                tool=self.tool, details={"fields": [field] if field else []},
            )

    def _extra_arguments(self, arguments: Mapping[str, Any]) -> list[str]:
        """Arguments no placeholder uses, as ``--name=value``, in the schema's order."""
        order = {name: i for i, name in enumerate(self.property_order)}
        out: list[str] = []
        for key in sorted(arguments, key=lambda k: (order.get(k, len(order)), k)):
            out.extend(self._leaves(key, arguments[key]))
        return out

    def _leaves(self, path: str, value: Any) -> list[str]:
        if value is None or self._is_referenced(path):
            return []
        if property_schema(self.input_schema, path) is None:
            # Allowed by additionalProperties, but a caller-chosen name must not become a flag.
            raise InvalidInputError(
                f"Invalid arguments for {self.tool}: argument '{path}' is not declared in the input "
                "schema, so it cannot be passed to the command.",
                tool=self.tool, details={"fields": [path]},
            )
        if isinstance(value, dict):
            return [text for k, v in value.items() for text in self._leaves(f"{path}.{k}", v)]
        if isinstance(value, list):
            return [f"--{path}={format_scalar(item)}" for item in value if item is not None]
        return [f"--{path}={format_scalar(value)}"]

    def _is_referenced(self, path: str) -> bool:
        parts = path.split(".")
        return any(".".join(parts[: i + 1]) in self.referenced for i in range(len(parts)))

    # ------------------------------------------------------------------ running

    def _denied(self, url: str, why: str) -> PolicyDeniedError:
        return PolicyDeniedError(
            f"{self.tool}: the repository {url[:80]!r} git would contact was refused by the egress policy: {why}. "
            "Only public http(s) hosts may be chosen by the model; the operator can allow more with the driver "
            "options egress_allow (addresses or networks, 'localhost') or egress (a whole policy: allowed "
            "hosts). A remote's name is never taken from a value: write it in the command (git fetch origin {ref}).",
            tool=self.tool, details={"egress": why, "url": url[:200]},
        )

    def environment(self, remotes: list[tuple[str, int]] | None = None) -> dict[str, str]:
        """This process's environment plus :data:`GIT_HARDENING` as git's command-line config;
        with ``remotes`` (the repositories a value chose), git is also held to them: each
        name pinned to the addresses the egress policy checked (``http.curloptResolve``), no
        redirect followed, and http(s) the only transport, for the model's URLs only (a
        submodule, an alternate or a redirect cannot switch to another); the symlinks of
        the checkout are written as plain files (``core.symlinks=false``); and git-lfs, if the
        user's configuration installs it, downloads nothing (``GIT_LFS_SKIP_SMUDGE=1``); and
        git reads no configuration of the user, the system or the environment, whose URL rules
        would outrank the pins (``url.<base>.insteadOf``, ``http.<url>.proxy``).

        Raises:
            PolicyDeniedError: a host resolves to a refused address, or git is too old to pin.
            ExecutionError: a host does not resolve.
        """
        return self._pinned(remotes)[0]

    def _pinned(self, remotes: list[tuple[str, int]] | None) -> tuple[dict[str, str], list[str]]:
        """:meth:`environment`, and the same git settings as ``git clone --config`` options
        (``lfs.fetchexclude=*`` in place of ``GIT_LFS_SKIP_SMUDGE``): git writes them into the
        clone's ``.git/config``, so a later fetch or pull there (``origin`` is the model's URL)
        is pinned alike, also where no value reaches it. Empty without ``remotes``.

        Raises:
            as :meth:`environment`.
        """
        if not remotes:
            return hardened_environment(os.environ), []
        version = _git_version(os.environ.get("PATH", ""))
        if version is None or version < (2, 37):
            shown = "could not be run" if version is None else f"is {'.'.join(map(str, version))}"
            raise PolicyDeniedError(
                f"{self.tool}: git would contact a repository the model chose, and git {shown}; git 2.37 "
                "or later is needed to pin it to the address the egress policy checked.", tool=self.tool,
            )
        config: list[tuple[str, str]] = [
            ("http.proxy", ""),  # through a proxy the pin would not hold (the proxy resolves the name)
            ("http.followRedirects", "false"),
            ("protocol.allow", "never"),
            ("protocol.http.allow", "user"),
            ("protocol.https.allow", "user"),
            # a symlink the model's repository holds is checked out as a plain file: it cannot
            # lead a later write (printf {text} > repo/NOTES) into repo/.git/config
            ("core.symlinks", "false"),
        ]
        for host, port in dict.fromkeys(remotes):
            try:
                addresses = self.options.egress.check_host(host, port)
            except PolicyDeniedError as exc:
                raise self._denied(f"{host}:{port}", str(exc.details.get("egress", exc.message))) from None
            except ExecutionError as exc:
                raise ExecutionError(f"{self.tool}: {exc.message}", tool=self.tool, details=exc.details) from None
            if ":" in host:
                continue  # an IPv6 address: curl does not resolve it
            pinned = ",".join(f"[{a}]" if ":" in a else a for a in addresses)
            config.append(("http.curloptResolve", f"{host}:{port}:{pinned}"))
        base = {k: v for k, v in os.environ.items()
                if k.lower() not in _UNPINNED_ENVIRONMENT and not _CONFIG_FROM_ENVIRONMENT.match(k)}
        # The server user's and the system's configuration outrank the pins where their rule is
        # more specific (url.<base>.insteadOf rewrites the model's URL to another host,
        # http.<url>.proxy matches it better than http.proxy, include.path brings in more):
        # git reads neither, nor configuration from the environment, so only the pins apply.
        base["GIT_CONFIG_GLOBAL"] = os.devnull
        base["GIT_CONFIG_NOSYSTEM"] = "1"
        # git-lfs (when the user's configuration installs its filter) would download the files
        # the model's repository points at from any URL its .lfsconfig names, past the pin.
        base["GIT_LFS_SKIP_SMUDGE"] = "1"
        # GIT_LFS_SKIP_SMUDGE does not stay with the clone; git-lfs's own setting does (it
        # outranks the repository's .lfsconfig), so a later pull leaves its files as pointers too.
        kept = [*config, ("lfs.fetchexclude", "*")]
        options = [word for key, value in kept for word in ("--config", f"{key}={value}")]
        return hardened_environment(base, extra=tuple(config)), options

    def argv(self, script: str, values: list[str]) -> list[str]:
        return [self.options.shell, "-c", script, f"mcs-{self.tool}", *values]

    def run(self, arguments: Mapping[str, Any], metadata: Mapping[str, str], deadline: float | None,
            timeout: float | None) -> InvokeResult:
        """Render and run the command; see the module docstring for what can fail."""
        script, values, remotes = self._render(arguments, metadata)
        env, pins = self._pinned(remotes)
        values = [*values, *pins]
        try:
            proc = subprocess.Popen(
                self.argv(script, values), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, start_new_session=True, cwd=self.options.cwd, env=env,
            )
        except OSError as exc:
            raise ExecutionError(f"{self.tool}: the command could not start ({exc.strerror}).", tool=self.tool) from None
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        cap = self.options.max_output_bytes
        buffer = bytearray()
        truncated = timed_out = False
        try:
            while True:
                wait = 0.1
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        timed_out = True
                        break
                    wait = min(wait, left)
                ready, _, _ = select.select([fd], [], [], wait)
                if ready:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    buffer.extend(chunk)
                    if len(buffer) > cap:
                        truncated = True
                        break
                elif proc.poll() is not None:
                    break  # exited; only its background children still hold the pipe
            if not truncated and not timed_out:
                timed_out = not _wait_for_exit(proc, deadline)
        finally:
            if truncated or timed_out or proc.poll() is None:
                _kill_group(proc.pid)  # the whole group: a timeout, the cap, or an interruption
            proc.wait()
            proc.stdout.close()
        return self._outcome(buffer, proc.returncode, truncated, timed_out, timeout)

    async def arun(self, arguments: Mapping[str, Any], metadata: Mapping[str, str], deadline: float | None,
                   timeout: float | None) -> InvokeResult:
        """Async twin of :meth:`run`; cancelling the task kills the process group."""
        script, values, remotes = self._render(arguments, metadata)
        env, pins = await asyncio.to_thread(self._pinned, remotes) if remotes else self._pinned(remotes)
        values = [*values, *pins]
        starting = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *self.argv(script, values), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True, cwd=self.options.cwd, env=env,
        ))
        try:
            # Shielded: a cancellation that lands while the process is being set up (it may
            # already be running) must still reach the kill below, or its group would live on.
            proc = await asyncio.shield(starting)
        except OSError as exc:
            raise ExecutionError(f"{self.tool}: the command could not start ({exc.strerror}).", tool=self.tool) from None
        except asyncio.CancelledError:
            with contextlib.suppress(OSError):
                started = await starting
                _kill_group(started.pid)
                await started.wait()
                transport = getattr(started, "_transport", None)
                if transport is not None:
                    transport.close()
            raise
        assert proc.stdout is not None
        cap = self.options.max_output_bytes
        buffer = bytearray()
        truncated = timed_out = False
        try:
            while True:
                wait = 0.1
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        timed_out = True
                        break
                    wait = min(wait, left)
                try:
                    chunk = await asyncio.wait_for(proc.stdout.read(65536), timeout=wait)
                except TimeoutError:
                    if proc.returncode is not None:
                        break
                    continue
                if not chunk:
                    break
                buffer.extend(chunk)
                if len(buffer) > cap:
                    truncated = True
                    break
            if not truncated and not timed_out:
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    await asyncio.wait_for(proc.wait(), timeout=remaining)
                except TimeoutError:
                    timed_out = True
        finally:
            if truncated or timed_out or proc.returncode is None:
                _kill_group(proc.pid)  # also when the task is cancelled
            transport = getattr(proc, "_transport", None)
            if truncated and transport is not None:
                # Output left unread (reading pauses once the buffer is full) would keep the
                # pipe from ending, and asyncio's wait() waits for the pipes: close it first.
                pipe = transport.get_pipe_transport(1)
                if pipe is not None:
                    pipe.close()
            await proc.wait()
            # A background child may still hold the pipe open; close our end now, not at GC
            # (asyncio has no public close for a finished process).
            if transport is not None:
                transport.close()
        return self._outcome(buffer, proc.returncode, truncated, timed_out, timeout)

    def _outcome(self, buffer: bytearray, returncode: int | None, truncated: bool, timed_out: bool,
                 timeout: float | None) -> InvokeResult:
        cap = self.options.max_output_bytes
        text = bytes(buffer[:cap]).decode("utf-8", errors="replace")
        if timed_out:
            after = f" after {timeout:g} s" if timeout else ""
            raise ToolTimeoutError(
                f"{self.tool}: the command timed out{after} and was stopped.", tool=self.tool,
                details={"output": text[-500:]},
            )
        if truncated:
            text += f"\n[truncated: the output exceeded {cap} bytes and the command was stopped]"
            return InvokeResult(text=text, mime_type="text/plain", truncated=True)
        if returncode:
            status = (f"was killed by signal {-returncode}" if returncode < 0 else f"exited with status {returncode}")
            excerpt = text if len(text) <= 2000 else "..." + text[-2000:]
            raise ExecutionError(
                f"{self.tool}: the command {status}." + (f" Output:\n{excerpt}" if excerpt.strip() else ""),
                tool=self.tool, details={"exit_status": returncode},
            )
        return InvokeResult(text=text, mime_type="text/plain", extra={"exit_status": 0})


def _reference_text(context: str, start: int, count: int) -> str:
    """What replaces a placeholder: a reference bash expands once, never parses as code."""
    if context == "word":
        return f'"${{{ARGS}[@]:{start}:{count}}}"'
    ref = f"${{{ARGS}[{start}]}}"
    if context == "sq":
        return f"'\"{ref}\"'"
    if context == "ansi":
        return f"'\"{ref}\"$'"
    return ref  # dq, heredoc, arith


#: Environment variables that change where a cd goes or how a program reads its options, and
#: so what MCS checks (see :func:`hardened_environment`); and those bash reads as its own
#: configuration, so that every command runs in the bash MCS analysed: its options
#: (``SHELLOPTS``: ``keyword`` made ``git diff GIT_EXTERNAL_DIFF={x}`` an assignment for git;
#: ``BASHOPTS``: ``extglob``, ``globstar``, ``nullglob``...), the file it sources first, its
#: pattern and command lookup settings, its compatibility level and its trace prompt (which
#: runs substitutions). Exported functions (``BASH_FUNC_name%%``) are dropped by prefix.
_MOVED_BY_ENVIRONMENT = ("CDPATH", "POSIXLY_CORRECT", "SHELLOPTS", "BASHOPTS", "BASH_ENV", "ENV",
                         "BASH_COMPAT", "GLOBIGNORE", "GLOBSORT", "EXECIGNORE", "FIGNORE", "PS4",
                         "BASH_XTRACEFD", "BASH_LOADABLES_PATH")
_EXPORTED_FUNCTION = "BASH_FUNC_"
#: git configuration every CLI command runs under, as ``git -c`` would give it (it outranks a
#: repository's own config). A repository a value can bring in (a clone holding a bare
#: repository, whose config git would obey on ``cd inner.git && git log``) runs nothing:
#: bare repositories are used only when named (``--git-dir``), and no fsmonitor command runs.
GIT_HARDENING: tuple[tuple[str, str], ...] = (
    ("safe.bareRepository", "explicit"),
    ("core.fsmonitor", "false"),
)


def hardened_environment(base: Mapping[str, str], extra: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """``base`` with :data:`GIT_HARDENING` (and ``extra``) appended to any ``GIT_CONFIG_COUNT``
    entries it has, and without ``CDPATH`` (with it, ``cd sub`` goes to a ``sub`` of a directory
    it lists, not the one MCS checked a path from) or ``POSIXLY_CORRECT`` (with it, an option
    after an operand is an operand: ``head notes.txt -n {n}`` reads the file ``{n}`` names), nor
    bash's own configuration (options, start-up file, exported functions: see
    :data:`_MOVED_BY_ENVIRONMENT`): bash runs with its default options."""
    env = {name: value for name, value in base.items()
           if name not in _MOVED_BY_ENVIRONMENT and not name.startswith(_EXPORTED_FUNCTION)}
    try:
        count = max(int(env.get("GIT_CONFIG_COUNT", "0")), 0)
    except ValueError:
        count = 0
    entries = (*GIT_HARDENING, *extra)
    for offset, (key, value) in enumerate(entries):
        env[f"GIT_CONFIG_KEY_{count + offset}"] = key
        env[f"GIT_CONFIG_VALUE_{count + offset}"] = value
    env["GIT_CONFIG_COUNT"] = str(count + len(entries))
    return env


@cache
def _git_version(path: str) -> tuple[int, ...] | None:
    """The version of the ``git`` found on ``path``, asked once; ``None`` if it cannot run."""
    try:
        out = subprocess.run(["git", "--version"], capture_output=True, text=True, timeout=10, check=True,
                             env={**os.environ, "PATH": path}).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"(\d+)\.(\d+)", out)
    return tuple(int(n) for n in found.groups()) if found else None


def _wait_for_exit(proc: subprocess.Popen[bytes], deadline: float | None) -> bool:
    """Wait until ``proc`` exits or the deadline passes; True if it exited.

    A pidfd wakes up the moment the process exits; ``Popen.wait(timeout)`` would poll
    with sleeps, adding up to milliseconds to every call.
    """
    timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        select.select([pidfd], [], [], timeout)
    finally:
        os.close(pidfd)
    return proc.poll() is not None


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def compile_cli(
    config: Mapping[str, Any],
    *,
    tool: str,
    where: str,
    input_schema: Mapping[str, Any] | None,
    options: CliOptions,
    static: bool = False,
    allowed_params: frozenset[str] = frozenset(),
) -> CliInvoker:
    """Check and compile a resolved ``cli`` config.

    ``static`` is for resources without arguments: an argument placeholder is an error.

    Raises:
        ConfigurationError: see the module docstring; messages name ``where`` and the placeholder.
    """
    command = config.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigurationError(f"{where}: cli.command is required")
    variables_raw = config.get("templateVariables") or {}
    if not isinstance(variables_raw, Mapping):
        raise ConfigurationError(f"{where}: cli.templateVariables must be a mapping")
    formats: dict[str, tuple[Template, bool]] = {}
    for key, spec in variables_raw.items():
        if not isinstance(spec, Mapping):
            raise ConfigurationError(f"{where}: templateVariables.{key} must be a mapping with 'format'")
        fmt = next((v for k, v in spec.items() if str(k).lower() == "format"), None)
        omit = next((v for k, v in spec.items() if str(k).lower() == "omitiffalse"), False)
        if not isinstance(fmt, str):
            raise ConfigurationError(f"{where}: templateVariables.{key}.format is required (a string)")
        if not isinstance(omit, bool):
            raise ConfigurationError(f"{where}: templateVariables.{key}.omitIfFalse must be true or false")
        template = parse_template(fmt, where=f"{where}: templateVariables.{key}.format")
        check_params(template, input_schema, where=f"{where}: templateVariables.{key}", allowed=allowed_params)
        if omit and len(template.params()) > 1:
            raise ConfigurationError(f"{where}: templateVariables.{key}: omitIfFalse works with at most one placeholder")
        formats[str(key)] = (template, omit)
    command_template = parse_template(command, where=f"{where}: command")
    check_params(command_template, input_schema, where=where, allowed=frozenset(formats) | allowed_params)
    used = set(command_template.params())
    for key, (template, _) in formats.items():
        if key not in used:
            raise ConfigurationError(
                f"{where}: templateVariables.{key} is not used: the command has no {{{key}}} placeholder, "
                f"so its format {template.text!r} would never apply (and {key!r} would be appended as "
                f"--{key}=...). Add {{{key}}} to the command or remove the entry"
            )

    items: list[_Item] = []
    groups: list[_Group] = []
    referenced: set[str] = set()
    for part in command_template.parts:
        if isinstance(part, str):
            items.append(_Item(part, None))
        elif part.source == "param" and part.name in formats:
            template, omit = formats[part.name]
            key_is_property = property_schema(input_schema, part.name) is not None
            group = len(groups)
            groups.append(_Group(part.name, template, omit, key_is_property))
            if key_is_property:
                referenced.add(part.name)
            referenced.update(template.params())
            items.extend(_Item(p, group) for p in template.parts)
        else:
            if part.source == "param":
                referenced.add(part.name)
            items.append(_Item(part, None))

    slotted: list[_Item] = []
    for item in items:
        if isinstance(item.part, Placeholder):
            item = _Item(item.part, item.group, len(slotted))
        slotted.append(item)
    marked = frozenset(key for key, spec in variables_raw.items()
                       if isinstance(spec, Mapping) and spec.get(RUNS_AS_CODE) is True)
    specs = {item.slot: _slot_spec(item.part, input_schema, marked)
             for item in slotted if item.slot is not None and isinstance(item.part, Placeholder)}
    script, spans = _sentinel_script(slotted)
    try:
        findings = shell.read_command(script, specs, trusted_programs=options.trusted_programs,
                                      optional=tuple(spans.values()))
        crossing = shell.crossing_spans(script, [spans[g] for g in sorted(spans)])
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: {exc}") from None
    if crossing:
        raise _unbalanced(where, groups[sorted(spans)[crossing[0]]].key)
    occurrences = findings.occurrences
    for item in slotted:
        if item.slot is not None:
            assert isinstance(item.part, Placeholder)
            _check_placeholder(item.part, occurrences[item.slot], where=where, static=static)
    properties = (input_schema or {}).get("properties")
    order = tuple(properties) if isinstance(properties, Mapping) else ()
    _verify_references(slotted, occurrences, where=where)
    unused = tuple(name for name in order if name not in referenced)
    extras_refused = _extras_refused(script, specs, options.trusted_programs, unused)
    takes_values = any(not spec.trusted and occurrences[slot].context != "comment" for slot, spec in specs.items()) or (
        extras_refused is None and bool(unused))
    marked_here = any(spec.runs_as_code for spec in specs.values())
    # what the command writes with the arguments a call may append (git log + --output=...)
    effects = findings
    appended_targets: list[tuple[str, str, tuple[str, ...]]] = []
    appended_reads: list[tuple[str, str, tuple[str, ...]]] = []
    if extras_refused is None and unused:  # cp a + --target-directory=..., sort a + --output=...
        effects_script, effects_specs = _appended(script, specs, unused, probe=False)
        try:
            effects = shell.read_command(effects_script, effects_specs, trusted_programs=options.trusted_programs,
                                         remotes=False)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{where}: {exc}") from None
        source = effects_script.encode()
        for target in effects.targets:
            for start, end in target.words:
                for match in shell.SENTINEL_WORD.finditer(source[start:end]):
                    index = int(match.group(1)) - _first_free_slot(specs) - 1
                    if index >= 0:
                        appended_targets.append((unused[index], target.program, target.bases))
        for read in effects.reads:
            for start, end in read.words:
                for match in shell.SENTINEL_WORD.finditer(source[start:end]):
                    index = int(match.group(1)) - _first_free_slot(specs) - 1
                    if index >= 0:
                        appended_reads.append((unused[index], read.program, read.bases))
    remotes = _remotes(script, slotted, specs, findings.remotes, where=where)
    if takes_values:
        _refuse_unchecked_paths(findings, where=where)
    return CliInvoker(
        tool=tool, command=command, items=_with_clone_pins(slotted, remotes), groups=groups,
        occurrences=occurrences, referenced=frozenset(referenced), property_order=order, options=options,
        input_schema=input_schema, extras_refused=extras_refused, remotes=remotes,
        takes_values=takes_values,
        unlisted=() if marked_here else findings.unlisted,
        writers=effects.writers if takes_values else (),
        config_readers=() if marked_here else effects.config_readers,
        targets=_targets(script, slotted, specs, findings.targets, where=where),
        appended_targets=tuple(appended_targets),
        assigned=findings.assigned,
        signalled=_signalled(script, slotted, specs, findings.signalled),
        literal_writes=findings.literal_writes,
        reads=_targets(script, slotted, specs, findings.reads, where=where),
        appended_reads=tuple(appended_reads),
        literal_reads=findings.literal_reads,
        followers=findings.followers,
        unknown_paths=findings.unknown_paths,
        linked_paths=findings.linked_paths,
    )


#: Why a path the command names is refused in a file where a model's value reaches commands.
UNKNOWN_PATH = ("its text is not known before the run (a substitution, a variable set from one or by read, an "
                "unquoted expansion bash splits and matches as a pattern, a cd or git -C into such a directory, a cd "
                "MCS cannot follow: in a loop, after many changes of directory), "
                "so MCS cannot check where it leads, and a model's value can write what it comes from (a file "
                "such as x=$(cat list) reads)")
LINKED_PATH = ("MCS checks such a path before the command runs, and that command can make a symlink on the way "
               "that leads it outside (with a link an earlier call left: ln -s -- . x; echo hi > out.txt, out.txt "
               "a link to x/../outside)")


def _refuse_unchecked_paths(findings: shell.Findings, *, where: str) -> None:
    """Refuse, in a command that takes a model's value, a path it names whose text is not known
    before the run, or that a symlink made on the way may lead elsewhere.

    Raises:
        ConfigurationError: naming the line, the path and the way out.
    """
    if findings.unknown_paths:
        first = findings.unknown_paths[0]
        raise ConfigurationError(
            f"{where}: {first.where}: {first.program}: {UNKNOWN_PATH}. Write the path literally, or as a quoted "
            "variable the command sets to literal text (f=notes.txt; cat -- \"$f\"), or pass it as a placeholder, "
            "which is checked at each call"
        )
    if findings.linked_paths:
        first = findings.linked_paths[0]
        raise ConfigurationError(
            f"{where}: {first.where}: {first.program}: {LINKED_PATH}. Split the command: make links in a tool of "
            "its own, so the path is checked after them"
        )


def _signalled(script: str, items: list[_Item], specs: Mapping[int, shell.SlotSpec],
               found: tuple[shell.SignalTarget, ...]) -> tuple[_Operand, ...]:
    """The operand words of the ``kill`` commands whose process a value may name, as pieces
    of the rendered command."""
    words = _Words(script, items, specs)
    return tuple(words.operand(words.at(start, end)[0]) for target in found for start, end in target.words)


_PROCESS_ID = re.compile(r"^[1-9][0-9]{0,9}$")


def check_signalled(text: str, *, tool: str) -> None:
    """Refuse ``text`` as the process a ``kill`` of the command signals unless it is one process
    id (digits, not 0) outside the server's own: not this process, none of its ancestors, none
    of its descendants (the MCP servers it bridges over stdio run in sessions of their own), and
    none of its process group or session (the commands run in sessions of their own, so a
    process an earlier command left in the background, no longer the server's child once that
    command exited, may be signalled).

    ``0``, ``-1``, ``-PGID``, ``%job`` and text bash would still read as a number (`` -1``,
    ``+5``) signal groups or every process; the server's processes would stop serving.

    Raises:
        InvalidInputError: ``text`` is not a process id.
        PolicyDeniedError: it names a process of the server, or the system has no ``/proc`` to
            read the server's descendants from (every value is refused there).
    """
    if not _PROCESS_ID.match(text):
        raise InvalidInputError(
            f"Invalid arguments for {tool}: the process kill signals must be one process id (digits, not 0), "
            f"got {text[:40]!r}; process groups, 0, -1 and job specifications are refused.", tool=tool,
        )
    if not os.path.isdir("/proc/self"):
        raise PolicyDeniedError(
            f"{tool}: kill takes no model's value on this system: it has no /proc, where MCS reads which "
            "processes descend from the server (the MCP servers it bridges, the commands it runs), so no process "
            "can be shown to be another's. Run the server where /proc is mounted, or write the process in the "
            "command.", tool=tool, details={"pid": text[:40]},
        )
    pid = _thread_group(int(text))
    if pid in _server_processes() or _same_group_or_session(pid) or _descends_from_server(pid):
        raise PolicyDeniedError(
            f"{tool}: kill would signal process {pid}, which is the server, one of its parents, one of the "
            "processes it started (an MCP server it bridges over stdio, a command still running), or in its "
            "process group or session; a command may signal only other processes (what an earlier command sent "
            "to the background no longer descends from the server once that command has exited).",
            tool=tool, details={"pid": pid},
        )


def _thread_group(pid: int) -> int:
    """The process ``pid`` belongs to when it is the id of one of its threads (Linux's kill(2)
    signals the whole process then); ``pid`` itself otherwise."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"Tgid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return pid


def _server_processes() -> set[int]:
    """This process and its ancestors, as far as ``/proc`` shows them (its parent always), and
    the ids of its process group and session, whether or not their leaders still run."""
    found = {os.getpid(), os.getppid(), os.getpgrp(), os.getsid(0)}
    pid = os.getppid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            break
        pid = int(fields[1])
        found.add(pid)
    return found


def _descends_from_server(pid: int) -> bool:
    """Whether ``pid`` is a child of this process, or a child of one, as ``/proc`` shows its
    parents: the processes the server started in sessions of their own (the MCP servers it
    bridges over stdio, the commands still running) and theirs. A process whose parent
    chain cannot be read is taken as one."""
    server = os.getpid()
    seen: set[int] = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except FileNotFoundError:
            # no such process (any more), or no /proc to read parents from
            return not os.path.isdir("/proc/self")
        except OSError:
            return True
        pid = int(fields[1])
        if pid == server:
            return True
    return False


def _same_group_or_session(pid: int) -> bool:
    """Whether ``pid`` is in this process's group or session (one that no longer exists is not)."""
    try:
        return os.getpgid(pid) == os.getpgrp() or os.getsid(pid) == os.getsid(0)
    except (ProcessLookupError, PermissionError):
        return False


class _Words:
    """The words of a command's sentinel script as the pieces of the rendered command they
    are made of: literal text or a slot, each with its group."""

    def __init__(self, script: str, items: list[_Item], specs: Mapping[int, shell.SlotSpec]) -> None:
        self.source = script.encode()
        self.items = items
        self.specs = specs
        #: slots holding the server's environment, not a model's value
        self.trusted = frozenset(slot for slot, spec in specs.items() if spec.trusted)
        self.offsets: list[tuple[int, int]] = []  # the byte range of each item in the script
        size = 0
        for item in items:
            length = len((item.part if isinstance(item.part, str) else shell.SENTINEL.format(item.slot)).encode())
            self.offsets.append((size, size + length))
            size += length

    def at(self, start: int, end: int) -> tuple[list[tuple[str | int, int | None]], str, str]:
        """The pieces of the script's bytes ``start:end``, their literal text (quotes kept),
        and the word as written (sentinels for the slots)."""
        pieces: list[tuple[str | int, int | None]] = []
        for item, (first, last) in zip(self.items, self.offsets, strict=True):
            if last <= start or first >= end:
                continue
            if item.slot is not None:
                pieces.append((item.slot, item.group))
                continue
            pieces.append((self.source[max(first, start):min(last, end)].decode(), item.group))
        literal = "".join(p for p, _ in pieces if isinstance(p, str))
        return pieces, literal, self.source[start:end].decode(errors="replace")

    def operand(self, pieces: list[tuple[str | int, int | None]]) -> _Operand:
        """``pieces`` as an operand: quotes removed from the literal text, empty text dropped."""
        cleaned = ((p.replace('"', "").replace("'", "") if isinstance(p, str) else p, g) for p, g in pieces)
        return _Operand(tuple((p, g) for p, g in cleaned if p != ""), self.trusted)

    def shown(self, word: str) -> str:
        """``word`` with its placeholders as the file wrote them."""
        return shell.shown(word, self.specs)


def _targets(script: str, items: list[_Item], specs: Mapping[int, shell.SlotSpec],
             found: tuple[shell.WriteTarget, ...] | tuple[shell.ReadTarget, ...], *,
             where: str) -> tuple[_Target, ...]:
    """The commands that write (or read) where a value may say, with each candidate word as pieces of
    the rendered command; a word whose literal text MCS cannot read as the program will
    (expansions, globs, a ``~`` bash may expand) is refused."""
    words = _Words(script, items, specs)
    out: list[_Target] = []
    for target in found:
        operands: list[_Operand] = []
        homes: list[bool] = []
        variables: list[str] = []
        for start, end in target.words:
            pieces, literal, raw = words.at(start, end)
            home = raw.startswith("~/") or raw == "~"
            # a read path may start with a variable of the server's environment ("$DATA_DIR"{name}):
            # the call checks it with the environment's value (the script sets no such variable)
            variable = _LEADING_VARIABLE.match(literal) if isinstance(target, shell.ReadTarget) else None
            if variable is not None and shell.may_set(script, variable.group(1) or variable.group(2)):
                variable = None  # the script's own: refused below, as any expansion
            if variable is not None:
                first, group = pieces[0]
                assert isinstance(first, str)
                pieces[0] = (first[variable.end():], group)
                literal = literal[variable.end():]
            variables.append(variable.group(1) or variable.group(2) if variable else "")
            if (not _REMOTE_LITERAL.match(literal) or ('"' in literal and "'" in literal)
                    or "~" in (literal[1:] if home else literal)):
                verb = "read" if isinstance(target, shell.ReadTarget) else "write to"
                raise ConfigurationError(
                    f"{where}: line {target.line}: {target.program} may {verb} {words.shown(raw)[:80]!r}, a path "
                    "a model's value chooses, and MCS checks such a path at each call; it cannot tell what this "
                    "word becomes (quoting, expansions, a '~' or characters a plain path does not hold). Write the "
                    "literal part plainly (out/{path}) or pass the whole path as one placeholder"
                )
            if home:  # the '~' bash replaces with $HOME, which the call adds back
                first, group = pieces[0]
                assert isinstance(first, str)
                pieces[0] = (first[1:], group)
            operands.append(words.operand(pieces))
            homes.append(home)
        if isinstance(target, shell.ReadTarget):
            out.append(_Target(target.program, tuple(operands), tuple(homes), False, target.bases,
                               variables=tuple(variables)))
        else:
            out.append(_Target(target.program, tuple(operands), tuple(homes), target.clone, target.bases,
                               target.after_first))
    return tuple(out)


#: Where the kernel shows the server's own process (``/proc/self/environ``: its API keys), other
#: processes and devices: read only where the operator names a read root there.
_SYSTEM_VIEWS = ("/proc", "/sys", "/dev")


def _inside(path: str, roots: list[str]) -> bool:
    """Whether ``path`` (absolute, normalised) is one of ``roots`` or below one."""
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _clone_directories(url: str) -> list[str]:
    """The directories ``git clone URL`` may make when given none, as git names them (its
    ``git_url_basename``): the last component of the URL's path (after the host and any
    user), without trailing ``/`` or ``/.git``, then without ``.git``; also with ``.git`` added
    (``--bare``, ``--mirror``). git strips ``.bundle`` instead of ``.git`` only for a local
    bundle file, so a name ending in ``.bundle`` is given both ways (``x.bundle``, ``x``)."""
    start = url.find("://")
    rest = url[start + 3:] if start >= 0 else url
    host_end = rest.find("/")
    authority = rest if host_end < 0 else rest[:host_end]
    if "@" in authority:
        rest = rest[rest.rfind("@", 0, len(authority)) + 1:]
    rest = rest.rstrip("/ \t\n")
    if "/" not in rest:  # only a host: without its port
        rest = re.sub(r":[0-9]*$", "", rest)
    if rest.endswith("/.git"):
        rest = rest[:-5].rstrip("/")
    last = re.split(r"[/:]", rest)[-1]
    out: list[str] = []
    for suffix in (".git", ".bundle"):
        name = last[: -len(suffix)] if last.endswith(suffix) and len(last) > len(suffix) else last
        name = " ".join(re.sub(r"[\x00-\x20\x7f]+", " ", name).split())
        out.extend((name, f"{name}.git"))
    return list(dict.fromkeys(out))


def _remotes(script: str, items: list[_Item], specs: Mapping[int, shell.SlotSpec],
             found: tuple[shell.GitRemote, ...], *, where: str) -> tuple[_Remote, ...]:
    """The git commands whose repository a value may be, with each candidate operand word
    as pieces of the rendered command; a word whose quoting MCS would have to guess is refused."""
    words = _Words(script, items, specs)
    out: list[_Remote] = []
    for remote in found:
        operands: list[_Operand] = []
        for start, end in remote.operands:
            pieces, literal, raw = words.at(start, end)
            if not _REMOTE_LITERAL.match(literal) or ('"' in literal and "'" in literal):
                raise ConfigurationError(
                    f"{where}: line {remote.line}: in git {remote.subcommand}, {words.shown(raw)[:80]!r} may be the "
                    "repository git contacts, and MCS checks such a value against the egress policy; it cannot "
                    "tell what this word becomes (quoting, expansions or characters a URL does not hold). Pass the "
                    "whole URL as one placeholder ({repoUrl}) or write scheme://host/ literally before the value"
                )
            operands.append(words.operand(pieces))
        if any(isinstance(p, int) and p not in words.trusted for o in operands for p, _ in o.pieces):
            out.append(_Remote(remote.subcommand, tuple(operands), remote.multiple, remote.subcommand_end))
    return tuple(out)


def _with_clone_pins(items: list[_Item], remotes: tuple[_Remote, ...]) -> list[_Item]:
    """``items`` with a :class:`_ClonePins` just after the subcommand word of each ``git
    clone`` of ``remotes``, in that word's group (the clone runs only where its word does)."""
    points = sorted({r.options_at for r in remotes if r.subcommand == "clone"})
    if not points:
        return items
    out: list[_Item] = []
    size = 0
    for item in items:
        text = item.part if isinstance(item.part, str) else shell.SENTINEL.format(item.slot)
        end = size + len(text.encode())
        cuts = [p for p in points if size < p <= end]
        if cuts and isinstance(item.part, str):  # a subcommand word is literal text (shell refuses a value there)
            raw, last = item.part.encode(), 0
            for cut in cuts:
                out.extend((_Item(raw[last:cut - size].decode(), item.group), _Item(_ClonePins(), item.group)))
                last = cut - size
            if last < len(raw):
                out.append(_Item(raw[last:].decode(), item.group))
        else:
            out.append(item)
        size = end
    return out


def _slot_spec(part: Placeholder, schema: Mapping[str, Any] | None, marked: frozenset[str]) -> shell.SlotSpec:
    numeric = False
    if part.source == "param":
        types = schema_types(property_schema(schema, part.name))
        numeric = bool(types) and types <= {"integer", "number"}
    return shell.SlotSpec(label=part.text, trusted=part.source == "env", numeric=numeric,
                          runs_as_code=part.source == "param" and part.name in marked)


def _sentinel_script(items: list[_Item]) -> tuple[str, dict[int, tuple[int, int]]]:
    """The command with every slot as its sentinel word, and each group's byte span."""
    pieces: list[str] = []
    size = 0
    spans: dict[int, tuple[int, int]] = {}
    for item in items:
        text = item.part if isinstance(item.part, str) else shell.SENTINEL.format(item.slot)
        if item.group is not None:
            first, _ = spans.get(item.group, (size, size))
            spans[item.group] = (first, size + len(text.encode()))
        pieces.append(text)
        size += len(text.encode())
    return "".join(pieces), spans


def _extras_refused(script: str, specs: Mapping[int, shell.SlotSpec], trusted: frozenset[str],
                    names: tuple[str, ...] = ()) -> str | None:
    """Why arguments no placeholder uses cannot be appended to the command's last line
    (gen-mcp's rule), or ``None`` when that end is a safe argument position.

    Each of ``names`` (the properties that may be appended) is read as the option word it
    becomes, ``--name=value``, so a property named after an option that runs its value
    (``upload-pack`` after ``git clone``, ``template`` after ``git init``) is refused as the
    same option written in the command is."""
    extra = _first_free_slot(specs)
    appended, slots = _appended(script, specs, names)
    try:
        found = shell.analyse(appended, slots, trusted_programs=trusted)
    except ConfigurationError as exc:
        return str(exc)
    if found[extra].context == "comment":
        return "the command ends in a comment"
    return None


def _first_free_slot(specs: Mapping[int, shell.SlotSpec]) -> int:
    """The first slot number after every one in ``specs``: the numbers are not contiguous
    (a templateVariables group's placeholders are numbered apart), so ``len(specs)`` may be
    one of them."""
    return max(specs, default=-1) + 1


def _appended(script: str, specs: Mapping[int, shell.SlotSpec], names: tuple[str, ...], *,
              probe: bool = True) -> tuple[str, dict[int, shell.SlotSpec]]:
    """``script`` with the arguments a call may append to its last line (``--name=value`` for
    each of ``names``, after a plain argument that probes the position when ``probe``) as
    sentinel words, and the slots with theirs, numbered from :func:`_first_free_slot`."""
    extra = _first_free_slot(specs)
    words = [shell.SENTINEL.format(extra)] if probe else []
    added = {extra: shell.SlotSpec(label="the appended argument")} if probe else {}
    for offset, name in enumerate(names, start=1):
        quoted = "'" + f"--{name}=".replace("'", "'\\''") + "'"
        words.append(quoted + shell.SENTINEL.format(extra + offset))
        added[extra + offset] = shell.SlotSpec(label=f"the appended argument --{name}=")
    return f"{script.rstrip()} {' '.join(words)}", {**specs, **added}


def _verify_references(items: list[_Item], occurrences: Mapping[int, shell.Occurrence], *, where: str) -> None:
    """Render the command with every group present and check bash still reads it as
    intended: valid, with one expansion of the values array per rendered reference."""
    pieces = [PRELUDE]
    expected = 0
    for item in items:
        if isinstance(item.part, str):
            pieces.append(item.part)
            continue
        assert item.slot is not None
        occurrence = occurrences[item.slot]
        if occurrence.context == "comment":
            continue
        expected += 1
        pieces.append(_reference_text(occurrence.context, item.slot, 1))
    if shell.count_expansions("".join(pieces), ARGS) != expected:
        raise ConfigurationError(f"{where}: the command does not keep its structure once values are passed "
                                 "as references; simplify the quoting around its placeholders")


def _unbalanced(where: str, key: str) -> ConfigurationError:
    return ConfigurationError(
        f"{where}: templateVariables.{key}.format opens or closes a quote; a format must leave "
        "the command's quoting as it found it"
    )


def _check_placeholder(part: Placeholder, occurrence: Occurrence, *, where: str, static: bool) -> None:
    if occurrence.context == "comment":
        return
    if part.source == "header" and part.name.lower() in CREDENTIAL_HEADERS:
        raise ConfigurationError(
            f"{where}: {part.text} would put the caller's credentials on a command line; this is refused"
        )
    if static and part.source == "param":
        raise ConfigurationError(f"{where}: a static resource command cannot contain argument placeholders ({part.text})")
