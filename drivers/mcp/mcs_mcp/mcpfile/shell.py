"""Where each placeholder sits in the author's bash, read by a real bash parser.

gen-mcp pastes values into a ``bash -c`` string. MCS keeps the author's script as bash
source but puts a *reference* to each value where the placeholder was (see
:mod:`.cli`), so bash expands the value once and never parses it as code. That holds
only in some positions, so this module parses the script with tree-sitter-bash (each
placeholder replaced by an inert sentinel word) and **allows a placeholder only where it
is proven to stay data**; every other position is refused at load, naming the line,
the position and the safe way to write it.

Which programs may take a value is an **allow-list**, not a list of known-bad programs:
:data:`DATA_PROGRAMS` holds the programs whose operands and input were read, option by
option in their manuals, to stay data (coreutils-style programs, grep, diff, jq after its
filter, and git for the subcommands of :data:`GIT_DATA_SUBCOMMANDS`). Any other program is
refused at load, naming the line and the program and the two ways to allow it: the file
marks the argument ``x-mcs-runsAsCode: true`` (the author vouches for that argument), or
the operator lists the program in the driver option ``cli_trusted_programs`` (configuration:
a file cannot grant it). Listing a program lifts only that refusal: what is known to run
code stays refused for a listed or trusted program alike (``python3 -c {x}``, ``bash -c``,
``git -c``, ``tar -I``, ``sort --compress-program``, ``kubectl exec``; options also in the
spellings getopt and git accept: ``-cI {x}``, ``-I{x}``, ``--to-c={x}``); only
``x-mcs-runsAsCode`` lifts those. In a command that takes a model's values, every program
is held to the same list, also one no value reaches: what a listed program writes from a
value (a file, a clone) the next program could run (``echo {x} > s.sh; bash s.sh``);
builtins that run nothing (:data:`QUIET_BUILTINS`) are allowed there. The loader lifts that
rule to the file (:attr:`Findings.unlisted`): when any CLI command of a file takes a model's
value, every CLI command of the file is held to the list, also one that takes no value, since
they share the machine and the working directory (tool ``write``: ``printf '%s' {x} >
notes.sh``, tool ``build``: ``bash notes.sh``; ``git clone {repoUrl} repo``, then ``make -C
repo``). Only the operator's ``cli_trusted_programs`` lifts that; ``x-mcs-runsAsCode`` on one
command's argument lifts the check of that command only (it vouches for the argument, not
for what another tool does with the files it leaves). The listed programs that also run
configuration they find in files (:data:`CONFIG_READERS`: git runs the commands
``.git/config`` and ``~/.gitconfig`` name, jq loads ``~/.jq``) are held further: when a
command of the file writes files from a model's value (:attr:`Findings.writers`: an output
redirection to a file, ``cp``/``mv``/``ln``, ``sort -o``, git's ``--output``, ``git clone``
into a directory a value may choose), the loader refuses every git and jq of the file unless
the operator trusts them, since such a file can be that configuration. Where a listed program
writes, replaces or deletes at a path a value may name (:class:`WriteTarget`, found by
:func:`read_command`), the caller checks the path at each call (see :mod:`.cli`); a
value that reaches such a path through a variable or a substitution, or after a ``cd`` this
module cannot follow, is refused at load.

Allowed:

* an argument of a simple command whose program is a literal name on the allow-list (or
  trusted by the operator), outside the options that name a command: unquoted (the
  reference is quoted, so no splitting or globbing), inside double quotes, single quotes
  or ``$'...'``; in ``[ ... ]`` (not after ``-v``);
* standard input given as data: a here-string, an input redirection ``< {file}``, or
  the body of a here-document whose delimiter is unquoted, when the command reading it
  is on the allow-list (or ``read``/``mapfile``, whose variables are followed) and so is
  every later stage of its pipeline;
* the subject of ``case``; the word list of ``for``; the value of a plain variable
  assignment (``ns="{namespace}"``): the variable is then followed, and every use of it
  must itself be such a position, quoted (``"$ns"``), never evaluated (so are the
  variables ``read``, ``mapfile`` and ``readarray`` fill from a value);
* arithmetic (``$(( {n} + 1 ))``) for integer and number properties only; the value is
  checked to be a JSON number at each call.

Refused: the program position (also after ``VAR=x``, ``!``, ``then``, ``do``...); git's
subcommand (``git {op}``); programs off the allow-list; programs that run their arguments
or input as code (shells with ``-c``/``-s`` or no script,
``eval``, ``source``, ``exec``, ``env``, ``xargs``, ``find -exec``, ``ssh``, ``sudo``,
``timeout``, ``nohup``, ``watch``, interpreters with inline code, jq's filter, programs
whose arguments and input are commands such as ``sqlite3`` or ``make``, the value of an
option that names a command such as ``git -c`` or ``tar -I``, package runners such as
``npx`` or ``pip install``...) unless the file marks the argument ``x-mcs-runsAsCode: true``;
a value glued to an option word (``-{x}``, ``--{x}``, ``-v{x}``; ``--name={x}`` and
words after ``--`` are fine), which would choose the option; any value in a script that renames programs (``alias``, ``hash -p``...); bash builtins that read names or evaluate
(``let``, ``declare``, ``read``, ``printf -v``, ``test -v``, ``unset``...); ``[[ ... ]]``,
array subscripts, ``${...}`` operators, ``case`` patterns, output redirections, prefix
assignments (``VAR={x} cmd`` puts the value in the program's environment), and any
script bash itself cannot parse.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Literal

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from mcs.errors import ConfigurationError

Context = Literal["word", "dq", "sq", "ansi", "heredoc", "arith", "comment"]

#: The marker that stands for slot ``i`` while the script is parsed: one inert word.
SENTINEL = "__mcs_slot_{}__"
#: A :data:`SENTINEL` word in the script's bytes; group 1 is the slot.
SENTINEL_WORD = re.compile(rb"__mcs_slot_(\d+)__")

SHELLS = frozenset({"sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
#: Interpreters: their first operand is a program file; inline-code options run a value.
INTERPRETERS = frozenset({
    "python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "deno",
    "bun", "php", "lua", "luajit", "Rscript", "R", "tclsh", "wish", "awk", "gawk", "mawk",
    "nawk", "sed", "gsed", "jshell", "groovy", "osascript", "expect", "julia",
    # jq's filter is a program: $ENV, env and input_filename read the server's environment.
    "jq", "gojq", "jaq", "yq",
})


@dataclass(frozen=True, slots=True)
class _Options:
    """How a shell or interpreter reads its options: which run inline code, which take a
    value, and which name the program (a file, a module, or the program text itself)."""

    inline: frozenset[str] = frozenset("ce")
    takes_value: frozenset[str] = frozenset()
    names_program: frozenset[str] = frozenset()
    inline_long: tuple[str, ...] = ("--eval", "--exec", "--command", "--print", "--require", "--import")
    program_long: tuple[str, ...] = ()
    long_values: Mapping[str, int] = field(default_factory=dict)  # long options and how many values follow
    subcommands: frozenset[str] = frozenset()  # words before the program that are not it ("yq eval")
    input_is_code: bool = True  # without a program operand, standard input is the program


_SHELL_OPTIONS = _Options(inline=frozenset("csi"), takes_value=frozenset("oO"),
                          inline_long=("--rcfile", "--init-file", "--command"))
_AWK_OPTIONS = _Options(inline=frozenset(), takes_value=frozenset("FvW"), names_program=frozenset("f"))
_SED_OPTIONS = _Options(inline=frozenset(), takes_value=frozenset("l"), names_program=frozenset("ef"),
                        program_long=("--expression", "--file"))
_JQ_OPTIONS = _Options(
    inline=frozenset(), takes_value=frozenset("L"), names_program=frozenset("f"), inline_long=(),
    program_long=("--from-file",), input_is_code=False,
    long_values={"--arg": 2, "--argjson": 2, "--slurpfile": 2, "--rawfile": 2, "--indent": 1},
    subcommands=frozenset({"eval", "e", "eval-all", "ea"}),
)
_PERMUTING = frozenset({"awk", "gawk", "mawk", "nawk", "sed", "gsed", "jq", "gojq", "jaq", "yq"})
PROGRAM_OPTIONS: dict[str, _Options] = {
    **dict.fromkeys(SHELLS, _SHELL_OPTIONS),
    **dict.fromkeys(("python", "python2", "python3", "pypy", "pypy3"),
                    _Options(inline=frozenset("c"), takes_value=frozenset("WXQ"), names_program=frozenset("m"))),
    "perl": _Options(inline=frozenset("eE"), takes_value=frozenset("IMm")),
    "ruby": _Options(inline=frozenset("er"), takes_value=frozenset("IC")),
    **dict.fromkeys(("node", "nodejs", "bun", "deno"), _Options(inline=frozenset("epr"))),
    "php": _Options(inline=frozenset("rBRFE"), takes_value=frozenset("cdz")),
    **dict.fromkeys(("lua", "luajit"), _Options(inline=frozenset("el"))),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _AWK_OPTIONS),
    **dict.fromkeys(("sed", "gsed"), _SED_OPTIONS),
    **dict.fromkeys(("jq", "gojq", "jaq", "yq"), _JQ_OPTIONS),
    "julia": _Options(inline=frozenset("eEL"), takes_value=frozenset("CJOpt")),
}
#: Programs that run another command, or their arguments, as code.
WRAPPERS = frozenset({
    "env", "xargs", "parallel", "ssh", "sudo", "su", "doas", "runuser", "pkexec", "timeout",
    "nohup", "watch", "nice", "ionice", "chrt", "taskset", "stdbuf", "setsid", "chroot",
    "unshare", "nsenter", "flock", "time", "strace", "ltrace", "gdb", "valgrind", "script",
    "at", "batch", "systemd-run", "tmux", "screen", "sg", "newgrp", "firejail", "bwrap",
    "dbus-launch", "xvfb-run", "catchsegv", "pwsh", "powershell",
    # multi-call binaries: the first argument picks the program (busybox sh -c, busybox xargs)
    "busybox", "toybox",
})
#: Container and cluster tools whose ``exec``/``run`` subcommands run a command remotely.
REMOTE_RUNNERS = {
    "kubectl": frozenset({"exec", "run", "debug", "attach"}),
    "oc": frozenset({"exec", "run", "debug", "attach", "rsh"}),
    "docker": frozenset({"exec", "run", "create", "compose"}),
    "podman": frozenset({"exec", "run", "create", "compose"}),
    "nerdctl": frozenset({"exec", "run", "create", "compose"}),
}
#: Programs whose arguments and standard input are commands in a language with a way out
#: to the shell or the server's environment: sqlite3 ``.shell``, psql ``\!``, mysql
#: ``system``, ed ``!cmd`` (also as a file name), vi ``+!cmd``/``-c``, dc ``!``, m4
#: ``syscmd``, make's ``VAR:=$(shell ...)`` operands. No value may be an argument or their input.
COMMAND_LANGUAGES = frozenset({
    "sqlite", "sqlite3", "psql", "mysql", "mariadb", "duckdb", "ed", "red", "ex", "vi", "vim", "nvim",
    "view", "rview", "vimdiff", "gvim", "dc", "m4", "make", "gmake", "bmake",
})
#: Options whose value is a command (or configuration that names one) the program runs:
#: a value there, separate (``-I {x}``) or glued (``--to-command={x}``), runs as code.
COMMAND_OPTIONS: dict[str, tuple[str, ...]] = {
    "tar": ("-I", "--use-compress-program", "--to-command", "--checkpoint-action", "--rsh-command",
            "--rmt-command", "-F", "--info-script", "--new-volume-script"),
    "zip": ("-TT", "--unzip-command"),
    "rsync": ("-e", "--rsh", "--rsync-path"),
    **dict.fromkeys(("scp", "sftp"), ("-S", "-o", "-F", "-J", "-D")),
    "sort": ("--compress-program",),
    "wget": ("--use-askpass", "-e", "--execute"),
    "man": ("-P", "--pager", "-H", "--html"),
}
#: git's options of that kind, per subcommand (``""``: before the subcommand): ``-c``
#: and ``--config-env`` set configuration such as ``core.fsmonitor`` or ``core.sshCommand``;
#: ``-C`` and ``--git-dir`` choose the repository whose configuration git obeys (a bare
#: repository a clone brought in can hold ``core.fsmonitor``); ``-s`` names a merge program.
GIT_COMMAND_OPTIONS: dict[str, tuple[str, ...]] = {
    "": ("-c", "--config-env", "--exec-path", "-C", "--git-dir"),
    "clone": ("-c", "--config", "-u", "--upload-pack", "--template"),
    "init": ("--template",),
    **dict.fromkeys(("fetch", "ls-remote"), ("--upload-pack",)),
    "pull": ("--upload-pack", "-s", "--strategy"),
    **dict.fromkeys(("merge", "cherry-pick", "revert"), ("-s", "--strategy")),
    "rebase": ("-x", "--exec", "-s", "--strategy"),
    "fetch-pack": ("--upload-pack", "--exec"),
    **dict.fromkeys(("push", "send-pack"), ("--receive-pack", "--exec")),
    "archive": ("--exec",),
    "grep": ("-O", "--open-files-in-pager"),
    "difftool": ("-x", "--extcmd", "-t", "--tool"),
    "mergetool": ("-t", "--tool"),
    "send-email": ("--smtp-server", "--sendmail-cmd", "--to-cmd", "--cc-cmd", "--header-cmd"),
}
#: The git subcommands whose operands stay data (paths, revisions, names, URLs), read in
#: their manuals; the options above are still refused there. Any other subcommand (``git
#: config``, ``submodule foreach``, ``bisect run``, ``rebase``, aliases...) takes no value
#: unless the operator trusts git itself. A value never chooses the subcommand.
GIT_DATA_SUBCOMMANDS = frozenset({
    "clone", "init", "status", "log", "show", "diff", "fetch", "pull", "ls-remote", "add", "commit",
    "checkout", "switch", "restore", "reset", "rm", "mv", "branch", "tag", "merge", "rev-parse",
    "ls-files", "ls-tree", "blame", "describe", "shortlog", "grep",
})
#: The git subcommands whose first operand is the repository git contacts (a URL, a path, a
#: remote's name), with their options as ``git <subcommand> -h`` lists them (git 2.39): those
#: that take the next word as their value, and the rest. A value that may become that operand
#: is checked at each call against the egress policy (see :mod:`.cli`); an option not listed
#: here before such a value means MCS cannot tell where the value lands, and is refused at load.
GIT_REMOTE_OPTIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    name: (frozenset(valued.split()), frozenset(flags.split())) for name, valued, flags in (
        ("clone", "-j --jobs --template --reference --reference-if-able -o --origin -b --branch -u --upload-pack "
                  "--depth --shallow-since --shallow-exclude --separate-git-dir -c --config --server-option "
                  "--filter --bundle-uri",
         "-v --verbose -q --quiet --progress --reject-shallow -n --no-checkout --bare --mirror -l --local "
         "--no-hardlinks -s --shared --recurse-submodules --recursive --dissociate --single-branch --no-tags "
         "--shallow-submodules -4 --ipv4 -6 --ipv6 --also-filter-submodules --remote-submodules --sparse"),
        ("fetch", "--upload-pack -j --jobs --depth --shallow-since --shallow-exclude --deepen --refmap -o "
                  "--server-option --negotiation-tip --filter",
         "-v --verbose -q --quiet --all --set-upstream -a --append --atomic -f --force -m --multiple -t --tags "
         "-n --prefetch -p --prune -P --prune-tags --recurse-submodules --dry-run --write-fetch-head -k --keep "
         "-u --update-head-ok --progress --unshallow --refetch --update-shallow -4 --ipv4 -6 --ipv6 "
         "--negotiate-only --auto-maintenance --auto-gc --show-forced-updates --write-commit-graph --stdin"),
        ("pull", "--cleanup -s --strategy -X --strategy-option --upload-pack --depth --shallow-since "
                 "--shallow-exclude --deepen --refmap -o --server-option --negotiation-tip",
         "-v --verbose -q --quiet --progress --recurse-submodules -r --rebase -n --stat --log --signoff --squash "
         "--commit --edit --ff --ff-only --verify --verify-signatures --autostash -S --gpg-sign "
         "--allow-unrelated-histories --all -a --append -f --force -t --tags -p --prune -j --jobs --dry-run -k "
         "--keep --unshallow --update-shallow -4 --ipv4 -6 --ipv6 --show-forced-updates --set-upstream"),
        ("ls-remote", "--upload-pack --sort -o --server-option",
         "-q --quiet -t --tags -h --heads --refs --get-url --exit-code --symref"),
    )
}
#: Options whose value is another repository git reads (``--reference``) or a URI it
#: downloads (``--bundle-uri``): no value may go there.
GIT_REPOSITORY_OPTIONS = frozenset({"--reference", "--reference-if-able", "--bundle-uri"})
#: A literal start of a repository word that fixes the host (``https://host/``, ``git@host:``):
#: a value after it chooses only the path.
DESTINATION_FIXED = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://[^/]*/|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:)")
#: The allow-list: programs whose operands and standard input stay data, each read in its
#: manual's option list. A placeholder may be an argument or the input of these only (or of
#: a program the operator names in ``cli_trusted_programs``, or where the file marks the
#: argument ``x-mcs-runsAsCode: true``); the option checks above still apply to every one.
#: Left out on purpose: interpreters and shells (code), ``find`` (after ``--`` a value is an
#: expression: ``-delete``, ``-fprint``), ``tar`` (``host:file`` archives run rsh/ssh), ``sed``
#: and ``awk`` (operands are files or ``var=value``, and the program decides what runs),
#: ``curl``/``wget`` (a destination chosen by the model, outside the egress policy; ``curl -K``
#: reads a config, ``-T`` uploads any file; ``wget -e`` runs wgetrc commands), ``xargs``,
#: ``env``, ``kubectl``/``docker``/``helm`` (``exec``, ``run``, ``install`` run code), ``cd``
#: and ``pushd`` (the commands after them run where the value says, and many run code found
#: there: git a repository's ``core.fsmonitor``, make a Makefile, npm a package.json).
DATA_PROGRAMS: dict[str, str] = {
    "echo": "bash builtin: prints its operands",
    "printf": "bash builtin: prints a format and its operands (-v, which names a variable, is refused)",
    "test": "bash builtin: compares operands (-v/-R, which name a variable, are refused)",
    "[": "bash builtin test",
    "true": "bash builtin: ignores its operands",
    "false": "bash builtin: ignores its operands",
    ":": "bash builtin: ignores its operands",
    "pwd": "bash builtin: prints the directory",
    "kill": "bash builtin: signals the process named (checked at each call: one pid, not the server's)",
    "cat": "coreutils: concatenates files or its input; no option names a program",
    "ls": "coreutils: lists files; options take patterns and formats only",
    "mkdir": "coreutils: creates directories (-m mode, -Z context)",
    "rmdir": "coreutils: removes empty directories",
    "touch": "coreutils: creates or dates files (-d date, -r reference file)",
    "cp": "coreutils: copies files (--backup, -S suffix, -t directory)",
    "mv": "coreutils: moves files (--backup, -S suffix, -t directory)",
    "rm": "coreutils: removes the files named",
    "ln": "coreutils: makes links to the files named",
    "wc": "coreutils: counts (--files0-from reads names from a file)",
    "head": "coreutils: first lines of files or input",
    "tail": "coreutils: last lines (--pid only waits for a process)",
    "cut": "coreutils: selects fields",
    "tr": "coreutils: translates characters of its input",
    "sort": "coreutils: sorts lines; --compress-program names a program and is refused",
    "uniq": "coreutils: drops repeated lines",
    "basename": "coreutils: strips directories from a name",
    "dirname": "coreutils: strips the last component of a name",
    "realpath": "coreutils: resolves names",
    "stat": "coreutils: file status (-c/--printf formats are text)",
    "du": "coreutils: disk usage (--exclude-from, --files0-from read names)",
    "df": "coreutils: file system usage",
    "date": "coreutils: prints or parses dates (-f reads dates from a file, as cat would)",
    "sleep": "coreutils: waits for the durations its operands give; no option names a program",
    "uname": "coreutils: prints system information; takes options only (an operand is an error)",
    "nproc": "coreutils: prints the number of processors (--all, --ignore=N); no operands",
    "whoami": "coreutils: prints the effective user; no operands",
    "id": "coreutils: prints the user and group ids of the users named",
    "md5sum": "coreutils: digests of files or input (-c reads sums from a file, as cat would)",
    "sha1sum": "coreutils: digests of files or input (-c reads sums from a file, as cat would)",
    "sha256sum": "coreutils: digests of files or input (-c reads sums from a file, as cat would)",
    "base64": "coreutils: encodes or decodes files or input",
    "grep": "GNU grep: patterns (-e, -f file) and files; runs nothing",
    "egrep": "grep -E",
    "fgrep": "grep -F",
    "diff": "GNU diffutils: compares files; -l runs only pr, no option names a program",
    "cmp": "GNU diffutils: compares bytes",
    "file": "file(1): guesses types; -m names a magic file (data), -z uses its own decompressors; -C writes "
            "<name>.mgc and takes no value",
    "jq": "the filter is code and takes no value; --arg/--argjson/--slurpfile/--rawfile values and "
          "operands after a literal filter are JSON or files (loads ~/.jq: see CONFIG_READERS)",
    "git": "the subcommands of GIT_DATA_SUBCOMMANDS, without the options of GIT_COMMAND_OPTIONS (runs "
           "commands its configuration files name: see CONFIG_READERS)",
}
#: The listed programs that also run, or evaluate, configuration they find in files, beyond
#: their operands and input. Their arguments stay data, but a file that writes files from a
#: model's value can write that configuration, so they are held like unlisted programs
#: there (see :attr:`Findings.writers`). The rest of the list, read for this in their manuals,
#: read no such configuration: ``file`` reads ``~/.magic`` (patterns, data: nothing runs),
#: grep, diff and coreutils read none (only environment variables such as ``LS_COLORS``).
CONFIG_READERS: dict[str, str] = {
    "git": "git runs commands named in the configuration it reads from files (.git/config, ~/.gitconfig, "
           "~/.config/git/config: diff.external, the diff and filter drivers .gitattributes names, core.pager, "
           "core.hooksPath, alias.x=!cmd, include.path...)",
    "jq": "jq loads ~/.jq into every filter (its definitions can shadow builtins and return $ENV, the server's "
          "environment)",
}
#: Listed programs that create or replace files with content: any of their operands (the
#: source, the destination, the target of a link) may be a model's choice.
_FILE_COPIERS = frozenset({"cp", "mv", "ln"})
#: Programs that write, replace, delete or change the files their operands name (the listed
#: coreutils, and some an operator may trust): every word holding a model's value may be a
#: target, sources included (``mv`` deletes its source; ``cp -t DIR`` still reads the rest,
#: but an operand's role depends on options MCS would have to follow).
_PATH_WRITERS = frozenset({"cp", "mv", "ln", "install", "rm", "rmdir", "touch", "mkdir", "tee", "truncate",
                           "shred", "unlink", "link", "chmod", "chown", "chgrp"})
#: git subcommands that write the work tree, and so may check out a symlink (a revision, a
#: merge, a clone of a repository the file names).
_GIT_LINKERS = frozenset({"clone", "checkout", "switch", "restore", "reset", "merge", "pull", "mv", "stash",
                          "cherry-pick", "revert", "rebase", "apply", "am", "read-tree", "checkout-index"})
#: The git subcommands of :data:`GIT_DATA_SUBCOMMANDS` that take the diff option ``--output``
#: and write the file it names (tried on git 2.39 for every subcommand of that list).
_GIT_OUTPUT_SUBCOMMANDS = frozenset({"log", "show", "diff", "blame", "shortlog"})
@dataclass(frozen=True, slots=True)
class _Reads:
    """Which words of a listed program name a file or directory it reads (see :data:`READ_PATHS`).

    ``short`` and ``long`` are the options that take values: for each, whether the value (for
    a long option, each of the words after it) is a path it reads (``True``) or data
    (``False``). A word that holds a model's value is a read path unless it is proven data:
    the value of a data option, the first operand where ``first_is_data`` (grep's pattern,
    jq's filter; not when an option of ``first_named_by`` names it), a word after an option
    of ``data_after`` (``jq --args``), or an operand of a program whose operands are not
    files (``operands=False``, ``date``). The value of a long option not listed, written
    ``--name=value``, counts as a path unless ``unknown_long_is_data`` (git, whose own
    pathspecs stay in the repository)."""

    operands: bool = True
    first_is_data: bool = False
    first_named_by: frozenset[str] = frozenset()
    short: Mapping[str, bool] = field(default_factory=dict)
    long: Mapping[str, tuple[bool, ...]] = field(default_factory=dict)
    data_after: frozenset[str] = frozenset()
    unknown_long_is_data: bool = False
    #: long options of ``long`` whose value is optional: it is theirs only written
    #: ``--name=value`` (``grep --color {f}``: ``{f}`` is a file)
    optional: frozenset[str] = frozenset()


def _long(data: str = "", paths: str = "") -> dict[str, tuple[bool, ...]]:
    """Long options taking one value each: ``data`` (space-separated names) data, ``paths`` paths."""
    return {**dict.fromkeys(data.split(), (False,)), **dict.fromkeys(paths.split(), (True,))}


_HEAD_TAIL = _Reads(short={"n": False, "c": False, "s": False},
                    long=_long("--lines --bytes --pid --sleep-interval --max-unchanged-stats"))
_SUMS = _Reads()
_GREP = _Reads(first_is_data=True, first_named_by=frozenset({"-e", "-f", "--regexp", "--file"}),
               short={"e": False, "A": False, "B": False, "C": False, "m": False, "d": False, "D": False,
                      "f": True},
               long=_long("--regexp --after-context --before-context --context --max-count --devices "
                          "--directories --binary-files --label --include --exclude --exclude-dir --color "
                          "--colour --group-separator", "--file --exclude-from"),
               optional=frozenset({"--color", "--colour"}))
#: The listed programs that read files or directories an operand or an option names (or the
#: file system's view of them: ``ls``, ``stat``, ``du``, ``df``, ``realpath``), and which of
#: their words are such paths. A model's value in such a word is checked at each call to
#: resolve inside the working directory or a read root (see :mod:`.cli`): ``cat
#: /proc/self/environ`` printed the server's environment. The programs of
#: :data:`_PATH_WRITERS` are checked as writers, sources included; the rest of
#: :data:`DATA_PROGRAMS` (``echo``, ``printf``, ``test``, ``basename``, ``dirname``, ``tr``,
#: ``id``, ``kill``, ``sleep``...) reads no file a value names. git is read by
#: :meth:`_Analysis._git_reads`.
READ_PATHS: dict[str, _Reads] = {
    "cat": _Reads(),
    "head": _HEAD_TAIL,
    "tail": _HEAD_TAIL,
    "wc": _Reads(long=_long(paths="--files0-from")),
    "cut": _Reads(short={"b": False, "c": False, "f": False, "d": False},
                  long=_long("--bytes --characters --fields --delimiter --output-delimiter")),
    "sort": _Reads(short={"k": False, "t": False, "S": False, "o": True, "T": True},
                   long=_long("--key --field-separator --buffer-size --parallel --batch-size --sort",
                              "--files0-from --random-source --output --temporary-directory")),
    "uniq": _Reads(short={"f": False, "s": False, "w": False},
                   long=_long("--skip-fields --skip-chars --check-chars")),
    "md5sum": _SUMS, "sha1sum": _SUMS, "sha256sum": _SUMS,
    "base64": _Reads(short={"w": False}, long=_long("--wrap")),
    "ls": _Reads(short={"I": False, "w": False, "T": False},
                 long=_long("--ignore --hide --width --tabsize --format --sort --time --time-style --block-size "
                            "--color --indicator-style --quoting-style"),
                 optional=frozenset({"--color"})),
    "stat": _Reads(short={"c": False}, long=_long("--format --printf")),
    "du": _Reads(short={"B": False, "d": False, "t": False, "X": True},
                 long=_long("--block-size --max-depth --threshold --time-style --exclude --time",
                            "--exclude-from --files0-from"), optional=frozenset({"--time"})),
    "df": _Reads(short={"B": False, "t": False, "x": False},
                 long=_long("--block-size --type --exclude-type --output"), optional=frozenset({"--output"})),
    "realpath": _Reads(long=_long(paths="--relative-to --relative-base")),
    "date": _Reads(operands=False, short={"d": False, "f": True, "r": True},
                   long=_long("--date --set", "--file --reference")),
    "grep": _GREP, "egrep": _GREP, "fgrep": _GREP,
    "diff": _Reads(short={"I": False, "F": False, "D": False, "L": False, "C": False, "U": False, "W": False,
                          "x": False, "S": False, "X": True},
                   long=_long("--ignore-matching-lines --show-function-line --ifdef --label --context --unified "
                              "--width --exclude --starting-file --tabsize --horizon-lines --line-format "
                              "--old-line-format --new-line-format --unchanged-line-format --old-group-format "
                              "--new-group-format --changed-group-format --unchanged-group-format --palette "
                              "--color", "--from-file --to-file --exclude-from"),
                   optional=frozenset({"--color", "--context", "--unified"})),
    "cmp": _Reads(short={"i": False, "n": False}, long=_long("--ignore-initial --bytes")),
    "file": _Reads(short={"F": False, "e": False, "P": False, "m": True, "f": True},
                   long=_long("--separator --exclude --exclude-quiet --parameter", "--magic-file --files-from")),
    "jq": _Reads(first_is_data=True, first_named_by=frozenset({"-f", "--from-file"}),
                 short={"L": True, "f": True},
                 long={"--arg": (False, False), "--argjson": (False, False), "--slurpfile": (False, True),
                       "--rawfile": (False, True), "--indent": (False,), "--from-file": (True,)},
                 data_after=frozenset({"--args", "--jsonargs"})),
}
#: What git subcommands read at a path an option names (their pathspecs git keeps inside the
#: repository); ``git diff``, and any git command with ``--no-index``, reads every operand as
#: a file anywhere (also without ``--no-index`` outside a repository), so there every word
#: holding a value is a read path.
_GIT_READS: dict[str, _Reads] = {
    "commit": _Reads(operands=False, unknown_long_is_data=True,
                     short={"F": True, "t": True, "m": False, "c": False, "C": False},
                     long=_long("--message --author --date --reuse-message --reedit-message --fixup --squash "
                                "--cleanup --trailer", "--file --template --pathspec-from-file")),
    "tag": _Reads(operands=False, unknown_long_is_data=True, short={"F": True, "m": False},
                  long=_long("--message", "--file")),
    "merge": _Reads(operands=False, unknown_long_is_data=True, short={"F": True, "m": False, "s": False, "X": False},
                    long=_long("--message --strategy --strategy-option", "--file")),
    "blame": _Reads(operands=False, unknown_long_is_data=True, short={"S": True, "L": False},
                    long=_long("--ignore-rev", "--contents --ignore-revs-file")),
    "ls-files": _Reads(operands=False, unknown_long_is_data=True, short={"X": True, "x": False},
                       long=_long("--exclude --exclude-per-directory", "--exclude-from")),
    "grep": _Reads(operands=False, unknown_long_is_data=True, short={"f": True, "e": False},
                   long=_long(paths="--file")),
}
_GIT_READS_DEFAULT = _Reads(operands=False, unknown_long_is_data=True, long=_long(paths="--pathspec-from-file"))


#: Options that make a listed program read the files named inside another file (or its input).
_NAME_LISTS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("wc", "du", "sort"), ("--files0-from",)),
    "file": ("-f", "--files-from"),
    **dict.fromkeys(("md5sum", "sha1sum", "sha256sum"), ("-c", "--check")),
}
#: Options that make a listed program follow the symlinks it finds below the paths it is given
#: (grep -r, ls, du and cp -r keep them as links; GNU diff -r follows them unless --no-dereference).
_LINK_FOLLOWERS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("grep", "egrep", "fgrep"), ("-R", "--dereference-recursive")),
    **dict.fromkeys(("ls", "du", "cp"), ("-L", "--dereference")),
    "diff": ("-r", "--recursive"),
}
#: test's unary operators that look at a file (``-a`` alone is one; between two tests it is "and").
_FILE_TESTS = frozenset({"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-u", "-w", "-x",
                         "-G", "-L", "-N", "-O", "-S"})
#: test's binary operators that compare two files.
_FILE_COMPARISONS = frozenset({"-nt", "-ot", "-ef"})
#: GNU sort's short options that take a value (``-o`` the output file).
_SORT_VALUED = frozenset("koSTt")
#: kill's options whose value is the next word (a signal, or sigqueue's value), not a process.
_KILL_VALUED = frozenset({"-s", "-n", "-q", "--signal", "--queue"})
#: uniq's short options that take a value.
_UNIQ_VALUED = frozenset("fsw")
#: Where an output redirection writes no file.
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
#: Builtins that put what they read in variables, which are then followed like an assignment.
_READERS = frozenset({"read", "mapfile", "readarray"})
#: Where a name written with a path is still the program of the list (``/usr/bin/git``).
_SYSTEM_DIRS = ("/bin/", "/usr/bin/")
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"})
#: Package managers whose subcommands install or run the package an argument names (its
#: install scripts, its binary): the value chooses the code that runs. ``None``: every argument.
PACKAGE_RUNNERS: dict[str, frozenset[str] | None] = {
    "npx": None, "pnpx": None, "bunx": None, "uvx": None,
    "npm": frozenset({"exec", "x", "install", "i", "add", "ci", "init", "create", "update"}),
    "pnpm": frozenset({"exec", "dlx", "add", "install", "i", "create"}),
    "yarn": frozenset({"dlx", "add", "exec", "create"}),
    **dict.fromkeys(("pip", "pip3"), frozenset({"install", "download", "wheel"})),
    "pipx": frozenset({"run", "install", "inject"}),
    "uv": frozenset({"run", "tool", "pip", "add"}),
    "gem": frozenset({"install", "exec"}),
    "cargo": frozenset({"install"}),
    "go": frozenset({"run", "install", "get", "generate"}),
}
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
BASH_BUILTINS = frozenset({
    ".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command",
    "compgen", "complete", "compopt", "continue", "coproc", "declare", "dirs", "disown", "echo",
    "enable", "eval", "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "help",
    "history", "jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd",
    "pwd", "read", "readarray", "readonly", "return", "select", "set", "shift", "shopt", "source",
    "suspend", "test", "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias",
    "unset", "wait", "function",
})
#: Builtins whose arguments are plain data (``printf`` and ``test`` without ``-v``).
SAFE_BUILTINS = frozenset({"echo", "printf", "cd", "pwd", "true", "false", ":", "test", "[", "kill"})
#: Builtins that run nothing, allowed anywhere in a command that takes values (not with them).
QUIET_BUILTINS = SAFE_BUILTINS | {"set", "exit", "return", "shift", "export", "local", "unset", "wait",
                                  "read", "mapfile", "readarray", "break", "continue", "umask"}
_NAME_OPTIONS = frozenset({"-v", "-R"})
#: Builtins that run code in this very shell: a script that holds a value in a variable
#: may not use them at all (they could evaluate the variable behind any quoting).
#: Builtins that make a name run something else than the program of that name.
_RENAMING = frozenset({"alias", "hash", "enable"})
#: Builtins that store what they read from standard input in variables, and their options
#: that take a value (``read -a NAME`` names an array).
_READS_INTO = {"read": frozenset("adinNptu"), "mapfile": frozenset("dnOsuCc"), "readarray": frozenset("dnOsuCc")}
_SAME_SHELL_CODE = frozenset({"eval", "source", ".", "trap", "alias", "enable", "bind"})
#: bash's own variables (bash manual, "Shell Variables"); a value may not be assigned to one.
BASH_VARIABLES = frozenset({
    "BASH", "BASHOPTS", "BASHPID", "BASH_ALIASES", "BASH_ARGC", "BASH_ARGV", "BASH_ARGV0",
    "BASH_CMDS", "BASH_COMMAND", "BASH_COMPAT", "BASH_ENV", "BASH_EXECUTION_STRING",
    "BASH_LINENO", "BASH_LOADABLES_PATH", "BASH_REMATCH", "BASH_SOURCE", "BASH_SUBSHELL",
    "BASH_VERSINFO", "BASH_VERSION", "BASH_XTRACEFD", "CDPATH", "CHILD_MAX", "COLUMNS",
    "COMP_CWORD", "COMP_KEY", "COMP_LINE", "COMP_POINT", "COMP_TYPE", "COMP_WORDBREAKS",
    "COMP_WORDS", "COMPREPLY", "COPROC", "DIRSTACK", "EMACS", "ENV", "EPOCHREALTIME",
    "EPOCHSECONDS", "EUID", "EXECIGNORE", "FCEDIT", "FIGNORE", "FUNCNAME", "FUNCNEST",
    "GLOBIGNORE", "GLOBSORT", "GROUPS", "HISTCMD", "HISTCONTROL", "HISTFILE", "HISTFILESIZE",
    "HISTIGNORE", "HISTSIZE", "HISTTIMEFORMAT", "HOME", "HOSTFILE", "HOSTNAME", "HOSTTYPE",
    "IFS", "IGNOREEOF", "INPUTRC", "INSIDE_EMACS", "LANG", "LC_ALL", "LC_COLLATE", "LC_CTYPE",
    "LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "LINENO", "LINES", "MACHTYPE", "MAIL", "MAILCHECK",
    "MAILPATH", "MAPFILE", "OLDPWD", "OPTARG", "OPTERR", "OPTIND", "OSTYPE", "PATH",
    "PIPESTATUS", "POSIXLY_CORRECT", "PPID", "PROMPT_COMMAND", "PROMPT_DIRTRIM", "PS0", "PS1",
    "PS2", "PS3", "PS4", "PWD", "RANDOM", "READLINE_ARGUMENT", "READLINE_LINE", "READLINE_MARK",
    "READLINE_POINT", "REPLY", "SECONDS", "SHELL", "SHELLOPTS", "SHLVL", "SRANDOM", "TIMEFORMAT",
    "TMOUT", "TMPDIR", "UID",
})
#: ``set`` options that leave how bash reads a command as MCS analysed it: they stop on errors,
#: trace, print, turn patterns off, refuse to overwrite, hash, notify; ``-a`` exports (a variable
#: holding a value is refused beside it). ``-k`` (``keyword``), ``+B``, ``-P``, ``-o posix`` and
#: the others are not.
_PROVEN_SET_OPTIONS = frozenset("euxvfChba")
_PROVEN_SET_NAMES = frozenset({"errexit", "nounset", "xtrace", "verbose", "noglob", "noclobber", "hashall",
                               "notify", "allexport", "pipefail"})
#: Where a program file may be a process's own input (``/dev/stdin``, ``/dev/fd/0``,
#: ``/proc/self/fd/0``): an interpreter given one runs what its input holds.
_INPUT_VIEWS = ("/dev/", "/proc/")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: A directory ``cd`` may name beside a write target: relative, plain, below the working directory.
_PLAIN_DIRECTORY = re.compile(r"^[A-Za-z0-9_.+,=@%:][A-Za-z0-9_.+,=@%:/-]*$")
_LITERAL_PROGRAM = re.compile(r"^[A-Za-z0-9_./+@%:,=-]+$")
_EXPANSIONS = frozenset({"simple_expansion", "expansion", "command_substitution", "arithmetic_expansion",
                         "process_substitution"})
_OUTPUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
#: What a piece of a word MCS reads as literal text may not hold (expansions, patterns, escapes).
_UNPLAIN = frozenset("\\$`*?[]{}~\x00")
#: How many texts a word built of known variables may have before MCS stops counting them.
_MOST_TEXTS = 64
_LOOPS = frozenset({"for_statement", "while_statement", "c_style_for_statement"})
#: How a path known before the run writes the value of a variable of the server's environment
#: (:meth:`_Analysis._variable_texts`); :func:`environment_path` reads it at the call.
ENVIRONMENT_REFERENCE = "\x00{}\x00"
#: Joins the directories of successive changes of directory in a base of :class:`LiteralWrite`
#: and :class:`LiteralRead` (see :func:`based_paths`).
BASE_STEP = "\x01"
_ENVIRONMENT_REFERENCE = re.compile("\x00([A-Za-z_][A-Za-z0-9_]*)\x00")
_ARITH_EXPRESSIONS = frozenset({
    "binary_expression", "unary_expression", "postfix_expression", "ternary_expression",
    "parenthesized_expression",
})


@dataclass(frozen=True, slots=True)
class SlotSpec:
    """What the caller knows of one placeholder."""

    label: str  # as the author wrote it, e.g. "{repoUrl}"
    trusted: bool = False  # the server's own environment: not a model's value
    numeric: bool = False  # an integer or number property (may be used in arithmetic)
    runs_as_code: bool = False  # the file marks it x-mcs-runsAsCode: true


@dataclass(frozen=True, slots=True)
class Occurrence:
    """How bash reads the value at one slot, for rendering its reference."""

    context: Context
    word_start: bool = False  # it starts an argument word: a leading '-' would be an option
    after_double_dash: bool = False  # a literal "--" came earlier among the same arguments
    #: the value must stay one word: it is data a program reads (grep's pattern, ``head -n``'s
    #: count, ``jq --arg``'s value), and each further item of a list would be an operand of its
    #: own, a file no check saw (``grep -- {p} f`` with two items) or jq's filter
    single: bool = False


@dataclass(frozen=True, slots=True)
class GitRemote:
    """A git command whose repository operand (the one it contacts) a value may be.

    ``operands`` are the byte ranges of its operand words in order, up to and including
    the first that always stands there (the caller decides which render at a call);
    the first one present is the repository, or, with ``fetch --multiple``, all are.
    ``subcommand_end`` is the byte offset just after the subcommand word, where options
    for the subcommand may be added."""

    subcommand: str
    line: int
    operands: tuple[tuple[int, int], ...]
    multiple: bool
    subcommand_end: int


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """A command that writes, replaces or deletes files where a model's value may say.

    ``words`` are the byte ranges of the words that may name such a path (for a ``--name=``
    word, the part after ``=``); with ``clone``, they are ``git clone``'s operands in order:
    the second present at a call is the directory, and when only the repository is present,
    its last component names the directory; with ``after_first``, they are ``uniq``'s
    operands in order: each word present at a call after the first (the input) is written
    (``uniq -- {files}`` with two items writes the second)."""

    program: str  # "cp", "git clone"...
    line: int
    words: tuple[tuple[int, int], ...]
    clone: bool = False
    after_first: bool = False
    #: The directories, relative to the working directory, where the program may run: the
    #: working directory itself (``""``), and where the script's ``cd``/``pushd`` lead.
    bases: tuple[str, ...] = ("",)


@dataclass(frozen=True, slots=True)
class ReadTarget:
    """A command that reads a file or directory where a model's value may say (:data:`READ_PATHS`:
    ``cat {file}``, ``grep -r -- {p} {dir}``, ``jq --rawfile v {file}``, ``git diff -- {a} {b}``,
    an input redirection ``< {file}``). ``words`` are the byte ranges of those words (for a
    ``--name=`` word, the part after ``=``); ``bases`` as for :class:`WriteTarget`."""

    program: str  # "cat", "git diff", "an input redirection"...
    line: int
    words: tuple[tuple[int, int], ...]
    bases: tuple[str, ...] = ("",)


@dataclass(frozen=True, slots=True)
class SignalTarget:
    """A ``kill`` whose process operand a model's value may be: ``words`` are the byte ranges
    of those operand words (not the values of its options, ``-s TERM``). The caller checks at
    each call that each such word is a process id MCS may signal (see :mod:`.cli`)."""

    line: int
    words: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class LiteralWrite:
    """A path the file itself names where the script writes, replaces or deletes (``> out.txt``,
    ``cp -- {src} copy.txt``): no value chooses it, but a symlink an earlier call left there
    (``ln -s -- {target} {name}``) can lead it elsewhere, so the caller checks where it leads
    at each call. ``bases`` are the directories the script's ``cd`` may lead to, each as the
    steps :func:`based_paths` joins with ``path``."""

    what: str  # "an output redirection '> out.txt'", "cp"
    line: int
    path: str  # as the program reads it, quotes removed
    bases: tuple[str, ...] = ("",)


@dataclass(frozen=True, slots=True)
class LiteralRead:
    """A path the file itself names where a listed program reads (``cat notes.txt``, ``< data.json``,
    ``grep -- {p} notes.txt``, ``[ -e done ]``): no value chooses it, but a symlink an earlier
    call left there can lead it elsewhere, so the caller checks where it leads at each call, as
    for a :class:`LiteralWrite`."""

    what: str  # "cat", "an input redirection '<'"
    line: int
    path: str  # as the program reads it, quotes removed
    bases: tuple[str, ...] = ("",)
    #: ``path`` is a pattern bash expands to the names it matches (``*.txt``): each symlink
    #: it may match is checked
    glob: bool = False


class Refused(ConfigurationError):
    """A placeholder sits where bash could run it or read it as a name."""


@cache
def _language() -> Language:
    return Language(tree_sitter_bash.language())


def _parse(source: bytes) -> Node:
    return Parser(_language()).parse(source).root_node


def analyse(script: str, slots: Mapping[int, SlotSpec], *,
            trusted_programs: frozenset[str] = frozenset()) -> dict[int, Occurrence]:
    """Classify every slot of ``script`` (written with :data:`SENTINEL` words).

    ``trusted_programs`` are the operator's additions to :data:`DATA_PROGRAMS`, names as
    the script writes them (``kubectl``, ``./deploy.sh``).

    Raises:
        ConfigurationError: the script is not valid bash, or a slot is in a position not
            proven safe; the message names the line, the placeholder and the safe way.
    """
    return _Analysis(script, slots, trusted=trusted_programs).run()


@dataclass(frozen=True, slots=True)
class Unlisted:
    """A program of a command that is neither on the allow-list, nor trusted by the operator,
    nor a builtin that runs nothing, and where it stands."""

    program: str
    where: str  # "line N ('excerpt')", placeholders shown as the file wrote them


@dataclass(frozen=True, slots=True)
class Effect:
    """A place in a command that writes files (:attr:`Findings.writers`), or a program there that
    runs configuration it reads from files; ``command`` is the start of the command's node,
    so a clone that writes and the git that runs it can be told to be the same command."""

    what: str  # "runs 'git'", or how it writes ("an output redirection '> notes.txt'")
    where: str  # "line N ('excerpt')"
    command: int
    program: str = ""  # the program as the file writes it (a reader)


@dataclass(frozen=True, slots=True)
class Findings:
    """What one reading of a command's script (written with :data:`SENTINEL` words) found."""

    #: every slot's position (:func:`analyse`)
    occurrences: dict[int, Occurrence]
    #: the git commands whose repository a value may be (:class:`GitRemote`)
    remotes: tuple[GitRemote, ...]
    #: the commands that write where a value may say (:class:`WriteTarget`)
    targets: tuple[WriteTarget, ...]
    #: the programs the rule of a command taking a model's values would refuse, in order; the
    #: loader holds every command of a file to it when any command of the file takes a value
    unlisted: tuple[Unlisted, ...]
    #: the places where the script writes files. A place writes files when it is an output
    #: redirection to a file (``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``>& file``, also ``exec 3>
    #: f``; not a descriptor, ``/dev/null``, ``/dev/stdout``, ``/dev/stderr``), or ``cp``,
    #: ``mv``, ``ln``, ``sort -o``, ``uniq`` with an output operand (or one unquoted value, which
    #: a list makes two words), git's ``--output`` (log, show, diff, blame, shortlog), ``git --work-tree`` whose
    #: directory a value may choose (``.git``: the repository's files, a model's once cloned,
    #: become its ``config``), a program the operator trusts (``tee``, ``curl -o``: MCS does not know what
    #: it writes), or ``git clone`` where a model's value may choose the directory it clones
    #: into (``git clone {url} {path}``: ``{path}`` may be ``~/.config/git``, whose ``config``
    #: git reads as the user's; ``git clone {url}`` alone: the URL's last component names it,
    #: ``.config`` in a working directory that is ``HOME``). No data flow is followed: in a
    #: command that takes a model's values, every such place counts, whatever reaches it (a
    #: pipe, a variable, ``exec >``). ``mkdir`` and ``touch`` are not writers (no content); nor
    #: is a clone into a literal directory (its ``.git/config`` is git's own; the files are the
    #: remote's, which a later writer needs to lead into ``.git``).
    writers: tuple[Effect, ...]
    #: its programs of :data:`CONFIG_READERS` the operator does not trust
    config_readers: tuple[Effect, ...]
    #: the ``kill`` commands whose process a value may name (:class:`SignalTarget`)
    signalled: tuple[SignalTarget, ...] = ()
    #: the paths the script itself names where it writes (:class:`LiteralWrite`)
    literal_writes: tuple[LiteralWrite, ...] = ()
    #: the variables the script assigns a model's value to (``ns={x}``, ``read v``): the caller
    #: refuses a call where the environment then holds one (bash would export the value)
    assigned: frozenset[str] = frozenset()
    #: the commands that read where a value may say (:class:`ReadTarget`)
    reads: tuple[ReadTarget, ...] = ()
    #: the paths the script itself names where it reads (:class:`LiteralRead`)
    literal_reads: tuple[LiteralRead, ...] = ()
    #: its programs that read past the paths MCS checks, whatever the command takes: the options
    #: of :data:`_NAME_LISTS` and :data:`_LINK_FOLLOWERS` (``grep -R``); refused where the command
    #: takes a model's value, and by the loader where another command of the file does
    followers: tuple[Unlisted, ...] = ()
    #: where a program reads or writes a path the script names whose text is not known before
    #: the run (:meth:`_Analysis.unknown_paths`); refused where a model's value can reach the
    #: files it may come from
    unknown_paths: tuple[Unlisted, ...] = ()
    #: the paths the script names itself that a command of the script may lead elsewhere with a
    #: symlink on the way (:meth:`_Analysis.linked_paths`); refused likewise
    linked_paths: tuple[Unlisted, ...] = ()


def read_command(script: str, slots: Mapping[int, SlotSpec], *, trusted_programs: frozenset[str] = frozenset(),
                 optional: tuple[tuple[int, int], ...] = (), remotes: bool = True) -> Findings:
    """:func:`analyse` and all the rest :class:`Findings` holds, from one reading of ``script``.
    ``optional`` are byte ranges that may be absent at a call (a ``templateVariables``
    format): a literal word there does not fix the repository. ``remotes=False`` leaves the
    git repositories out (for a script that also holds the arguments a call may append).

    Raises:
        ConfigurationError: as :func:`analyse`; also where MCS cannot tell whether a value is
            the repository a git command contacts, or a value reaches a write target through a
            variable or a substitution (it could not be checked at the call).
    """
    analysis = _Analysis(script, slots, trusted=trusted_programs)
    occurrences = analysis.run()
    values = [spec for spec in slots.values() if not spec.trusted]
    if (values and not any(spec.runs_as_code for spec in values)
            and (may_set(script, "POSIXLY_CORRECT") or analysis.sets_posix_mode())):
        raise Refused("the command sets POSIXLY_CORRECT (or posix mode, which set -a exports as it), which makes programs read an option written after an "
                      "operand as an operand, so MCS cannot tell which words are files; a command that takes a "
                      "model's value may not set it")
    if values and not any(spec.runs_as_code for spec in values):
        unproven = analysis.unproven_set_option()
        if unproven is not None:
            node, option = unproven
            raise Refused(f"{analysis._where(node)}: runs set with {option!r}, which changes how bash reads the "
                          "command (set -k makes an argument NAME=value the program's environment), in a command "
                          "that takes a model's value; use only set -e, -u, -x, -v, -f, -C, -h, -b, -a and -o "
                          "pipefail (or their -o names)")
    found_remotes = analysis.git_remotes(optional) if remotes else ()
    reads = analysis.file_reads()
    signalled = analysis.signal_targets()
    for index, occurrence in occurrences.items():
        if occurrence.context == "word" and index in analysis.single_slots():
            occurrences[index] = replace(occurrence, single=True)
    return Findings(
        occurrences,
        found_remotes,
        analysis.write_targets(),
        tuple(Unlisted(name, analysis._where(node)) for node, name in analysis._unlisted()),
        tuple(analysis._writers()),
        tuple(analysis._config_readers()),
        signalled,
        analysis.literal_writes(),
        frozenset(analysis.tainted),
        reads,
        analysis.literal_reads(),
        analysis.followers(),
        analysis.unknown_paths(),
        analysis.linked_paths(),
    )


_ENCLOSING = frozenset({
    "string", "raw_string", "ansi_c_string", "command_substitution", "process_substitution",
    "arithmetic_expansion", "expansion", "subshell", "compound_statement", "heredoc_redirect",
    "heredoc_body", "test_command", "array", "if_statement", "for_statement", "while_statement",
    "case_statement", "function_definition",
})


def crossing_spans(script: str, spans: list[tuple[int, int]]) -> list[int]:
    """Indexes of the byte spans that open or close a quote, substitution or block of
    ``script`` without the other end (a ``templateVariables`` format must not)."""
    if not spans:
        return []
    root = _parse(script.encode())
    bad: list[int] = []
    for index, (start, end) in enumerate(spans):
        for node in _walk(root):
            if node.type not in _ENCLOSING or len(node.children) < 2:
                continue
            opening, closing = node.children[0], node.children[-1]
            inside_open = start <= opening.start_byte and opening.end_byte <= end
            inside_close = start <= closing.start_byte and closing.end_byte <= end
            if inside_open != inside_close:
                bad.append(index)
                break
    return bad


def count_expansions(script: str, name: str) -> int:
    """How many expansions of the variable ``name`` bash would perform in ``script``
    (outside comments and literal text); ``-1`` when the script is not valid bash."""
    root = _parse(script.encode())
    if root.has_error:
        return -1
    source = script.encode()
    return sum(
        1 for node in _walk(root)
        if node.type == "variable_name" and _text(node, source) == name
        and node.parent is not None and node.parent.type in ("expansion", "simple_expansion", "subscript")
    )


def environment_path(path: str, environment: Mapping[str, str]) -> str:
    """``path`` (from :class:`LiteralWrite` or :class:`LiteralRead`) with each variable of the
    server's environment it refers to replaced by its value in ``environment`` (``HOME`` unset:
    the user's home directory, as bash takes it)."""
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "HOME" and name not in environment:
            return os.path.expanduser("~")
        return environment.get(name, "")
    return _ENVIRONMENT_REFERENCE.sub(value, path)


def based_paths(base: str, path: str, environment: Mapping[str, str]) -> list[str]:
    """The paths ``path`` (of :class:`LiteralWrite` or :class:`LiteralRead`) names when the script
    is in ``base`` (one of their ``bases``), relative to the working directory unless absolute,
    with the server's environment read as :func:`environment_path` does. The steps of ``base``
    are joined as ``cd`` takes them one after the other (an absolute one starts again), and the
    result is given both as bash's ``cd`` leaves it (``..`` taken off the text: ``cd a/..`` is
    where it started, whatever ``a`` links to) and as the system resolves it (``a``'s link
    followed first, as ``cd -P`` does)."""
    steps = [environment_path(step, environment) for step in base.split(BASE_STEP)] if base else []
    path = environment_path(path, environment)
    if not steps:
        return [path]
    directory = os.path.join(*steps)
    logical = os.path.normpath(directory)
    return list(dict.fromkeys([os.path.join(directory, path), os.path.join("" if logical == "." else logical, path)]))


def shown_path(path: str) -> str:
    """``path`` with each variable of the server's environment it refers to written ``$NAME``."""
    return _ENVIRONMENT_REFERENCE.sub(lambda m: f"${m.group(1)}", path)


def may_set(script: str, name: str) -> bool:
    """Whether ``script`` may set the variable ``name``: it names it other than in an expansion
    (an assignment, ``for name in``, ``read name``, ``export name``...); ``True`` when the
    script is not valid bash."""
    root = _parse(script.encode())
    if root.has_error:
        return True
    source = script.encode()
    return any(
        node.type in ("variable_name", "word") and _text(node, source) == name
        and not (node.parent is not None and node.parent.type in ("expansion", "simple_expansion"))
        for node in _walk(root)
    )


# --------------------------------------------------------------------------- the analysis


@dataclass
class _Taint:
    label: str  # the placeholder whose value the variable holds
    line: int
    #: every assignment gives the variable one value as its whole content (``v={x}``,
    #: ``v="$w"`` of such a ``w``, ``for v in {x}``): its start is the value's start
    direct: bool = False
    slots: set[int] = field(default_factory=set)  # the slots of those values
    copies: set[str] = field(default_factory=set)  # the variables it was assigned from ("$w")


@dataclass
class _Analysis:
    script: str
    slots: Mapping[int, SlotSpec]
    trusted: frozenset[str] = frozenset()
    source: bytes = b""
    root: Node | None = None
    functions: frozenset[str] = frozenset()
    renaming: Node | None = None
    read_targets: set[int] = field(default_factory=set)  # the names read and mapfile assign
    tainted: dict[str, _Taint] = field(default_factory=dict)
    #: the uses of a variable holding a value that start an argument word with no "--" before
    word_starts: list[tuple[str, Node, Node]] = field(default_factory=list)
    #: the slots whose value starts such a word through a variable: checked at the call
    starts_through_variables: set[int] = field(default_factory=set)
    #: the words a reading program, a test, kill or git's remote options take as data (see
    #: :attr:`Occurrence.single`)
    data_words: list[Node] = field(default_factory=list)

    def run(self) -> dict[int, Occurrence]:
        self.source = self.script.encode()
        self.root = root = _parse(self.source)
        _refuse_parse_errors(root, self.source)
        _refuse_words_after_redirects(root, self.source)
        self.functions = frozenset(
            _text(n.child_by_field_name("name"), self.source)
            for n in _walk(root) if n.type == "function_definition"
        )
        self.renaming = self._renaming(root)
        found: dict[int, Occurrence] = {}
        for match in SENTINEL_WORD.finditer(self.source):
            index = int(match.group(1))
            spec = self.slots.get(index)
            if spec is None:
                continue
            leaf = root.descendant_for_byte_range(match.start(), match.end())
            if leaf is None:
                raise Refused(f"{spec.label} could not be located in the parsed command")
            found[index] = self._slot(leaf, match.start(), spec)
        missing = set(self.slots) - set(found)
        if missing:
            label = self.slots[min(missing)].label
            raise Refused(f"{label} could not be located in the parsed command")
        self._refuse_internal_names()
        self._follow_variables()
        for index in self.starts_through_variables:
            occurrence = found[index]
            found[index] = Occurrence(occurrence.context, True, False)
        if not any(spec.runs_as_code for spec in self.slots.values()) and any(
                not spec.trusted for spec in self.slots.values()):
            self._check_every_program()
        return found

    def git_remotes(self, optional: tuple[tuple[int, int], ...]) -> tuple[GitRemote, ...]:
        """The git commands of :data:`GIT_REMOTE_OPTIONS` whose repository operand a model's
        value may be; refuse a value git would read as a repository where MCS cannot check it."""
        assert self.root is not None
        out: list[GitRemote] = []
        for command in _walk(self.root):
            if command.type != "command" or self._program(command).rsplit("/", 1)[-1] != "git":
                continue
            args = _field_children(command, "argument")
            subcommand, at = _git_subcommand([_bare(a, self.source) for a in args])
            if at is None or subcommand not in GIT_REMOTE_OPTIONS:
                continue
            rest = args[at + 1:]
            held = [self._value_in(arg) for arg in rest]
            if not any(held):
                continue
            valued, flags = GIT_REMOTE_OPTIONS[subcommand]
            operands: list[Node] = []
            multiple = dashdash = False
            expects: str | None = None
            unknown: str | None = None
            for arg, label in zip(rest, held, strict=True):
                text = _bare(arg, self.source)
                if expects is not None:
                    if label and expects in GIT_REPOSITORY_OPTIONS:
                        raise self._refuse(arg, label, f"is the value of git {subcommand} {expects}, another "
                                           "repository or URI git would read", f"write the {expects} value literally")
                    expects = None
                    self.data_words.append(arg)  # a list's further items would be the repository
                    continue
                if label and unknown is not None:
                    raise self._refuse(arg, label, f"comes after {unknown!r}, an option MCS does not know for git "
                                       f"{subcommand}, so it cannot tell whether the value is the repository git "
                                       "contacts", f"drop {unknown} or write it as --option=value")
                if not dashdash and text == "--":
                    dashdash = True
                elif not dashdash and text.startswith("-") and len(text) > 1:
                    option, expects, known = self._git_option(text, valued, flags)
                    multiple = multiple or (subcommand == "fetch" and (  # -m, also in a cluster (-vm)
                        option == "--multiple" or (not text.startswith("--") and "m" in text)))
                    if label and option in GIT_REPOSITORY_OPTIONS:
                        raise self._refuse(arg, label, f"is the value of git {subcommand} {option}, another "
                                           "repository or URI git would read", f"write the {option} value literally")
                    if not known:
                        unknown = text
                else:
                    if label and _value_is_indirect(arg, self):
                        raise self._refuse(arg, label, f"may be the repository git {subcommand} contacts, but it "
                                           "reaches git through a variable or a substitution, where MCS cannot "
                                           "check it against the egress policy",
                                           f"pass the placeholder directly: git {subcommand} {{url}}")
                    operands.append(arg)
            spans: list[tuple[int, int]] = []
            for arg in operands:
                spans.append((arg.start_byte, arg.end_byte))
                if not multiple and self._always_present(arg, optional):
                    break
            out.append(GitRemote(subcommand, command.start_point[0] + 1, tuple(spans), multiple, args[at].end_byte))
        return tuple(out)

    def write_targets(self) -> tuple[WriteTarget, ...]:
        """The commands that write, replace or delete files at a path a model's value may name
        (see :class:`WriteTarget`); a value that reaches such a word through a variable or a
        substitution is refused, since the call could not check it."""
        assert self.root is not None
        out: list[WriteTarget] = []
        for command in _walk(self.root):
            if command.type != "command":
                continue
            self._no_magic_compile(command)
            self._no_name_lists(command)
            found = self._targets_of(command)
            if found is None:
                continue
            program, paths, operands, moves = found
            held = [(arg, start) for arg, start in paths if self._value_in(arg)]
            cloned = any(self._value_in(arg) for arg in operands)
            for arg in [a for a, _ in held] + (operands if cloned else []):
                label = self._value_in(arg)
                if label and _value_is_indirect(arg, self):
                    raise self._refuse(arg, label, f"may name a path {program} writes to, but it reaches {program} "
                                       "through a variable or a substitution, where MCS cannot check at the call that "
                                       "the path stays inside the working directory",
                                       f"pass the placeholder directly: {program} ... {{path}}")
            line = command.start_point[0] + 1
            if held or cloned:
                first = held[0][0] if held else operands[0]
                self._no_link_before(command, first, program)
                bases = self._bases(command, first, program)
                if moves:  # git -C dir: git runs there, so its paths are relative to it
                    into = "/".join(self._plain_directory(move, first, program, f"git -C {_text(move, self.source)}")
                                    for move in moves)
                    bases = tuple(dict.fromkeys(f"{base}/{into}" if base else into for base in bases))
            if held:
                out.append(WriteTarget(program, line, tuple((start, arg.end_byte) for arg, start in held), bases=bases))
            if cloned:
                out.append(WriteTarget(program, line, tuple((a.start_byte, a.end_byte) for a in operands),
                                       clone=program == "git clone", after_first=program == "uniq", bases=bases))
        return tuple(out)

    def file_reads(self) -> tuple[ReadTarget, ...]:
        """The commands that read a file or directory at a path a model's value may name (see
        :class:`ReadTarget`); a value that reaches such a word through a variable or a
        substitution, or after a ``cd`` this module cannot follow, is refused, since the call
        could not check it."""
        assert self.root is not None
        out: list[ReadTarget] = []
        for node in _walk(self.root):
            found: tuple[str, list[tuple[Node, int]], list[Node]] | None = None
            command = node
            if node.type == "file_redirect":
                operators = {c.type for c in node.children if not c.is_named}
                source = node.child_by_field_name("destination")
                if operators == {"<"} and source is not None:
                    found = "an input redirection '<'", [(source, source.start_byte)], []
                    command = node.parent or node
            elif node.type == "command":
                found = self._reads_of(node)
            elif node.type == "test_command" and _first_token(node) == "[":
                found = "[", self._test_paths(_test_words(node)), []
            if found is None:
                continue
            program, paths, moves = found
            held = [(arg, start) for arg, start in paths if self._value_in(arg)]
            if not held:
                continue
            for arg, _ in held:
                if _value_is_indirect(arg, self):
                    raise self._refuse(arg, self._value_in(arg), f"may name a path {program} reads, but it reaches "
                                       f"{program} through a variable or a substitution, where MCS cannot check at "
                                       "the call that the path stays inside the working directory",
                                       f"pass the placeholder directly: {program} ... {{path}}")
            first = held[0][0]
            self._no_link_before(node, first, program, "reads")
            bases = self._bases(command, first, program, "reads")
            if moves:  # git -C dir: git runs there, so its paths are relative to it
                into = "/".join(self._plain_directory(move, first, program, f"git -C {_text(move, self.source)}",
                                                      "reads") for move in moves)
                bases = tuple(dict.fromkeys(f"{base}/{into}" if base else into for base in bases))
            out.append(ReadTarget(program, node.start_point[0] + 1,
                                  tuple((start, arg.end_byte) for arg, start in held), bases))
        return tuple(out)

    def _test_paths(self, words: list[Node]) -> list[tuple[Node, int]]:
        """The words of a test (``test``, ``[ ... ]``) that name a file it looks at: the operand
        of a file test (``-e {path}``; ``-a`` counted as one) and both sides of ``-nt``, ``-ot``,
        ``-ef``; every word after a literal ``--`` (after which a value may look like an
        operator). The others are strings or numbers, data (``-n {x}``, ``{a} = {b}``)."""
        texts = [_bare(word, self.source) for word in words]
        out: list[tuple[Node, int]] = []
        for index, word in enumerate(words):
            before = texts[index - 1] if index else ""
            after = texts[index + 1] if index + 1 < len(texts) else ""
            if (before in _FILE_TESTS or before in _FILE_COMPARISONS or after in _FILE_COMPARISONS
                    or "--" in texts[:index]):
                out.append((word, word.start_byte))
            else:
                self.data_words.append(word)
        return out

    def unproven_set_option(self) -> tuple[Node, str] | None:
        """The first ``set`` of the script with an option not in :data:`_PROVEN_SET_OPTIONS` (or
        its long names), and that option as written: ``-k`` (``keyword``) makes ``NAME=value``
        words the program's environment, ``+B`` makes ``{a,b}`` one word, ``-o posix`` changes
        how programs read options. Nothing after ``--`` or ``-`` is an option."""
        for node in _walk(self._root()):
            if node.type != "command" or self._program(node).rsplit("/", 1)[-1] != "set":
                continue
            words = [_bare(a, self.source) for a in _field_children(node, "argument")]
            named = False
            for word in words:
                if named:
                    named = False
                    if word not in _PROVEN_SET_NAMES:
                        return node, word
                elif word in ("--", "-"):
                    break
                elif word[:1] in "-+" and len(word) > 1:
                    for letter in word[1:]:
                        if letter == "o":
                            named = True
                        elif letter not in _PROVEN_SET_OPTIONS:
                            return node, word
                else:
                    return node, word  # set takes options, then the positional parameters after --
        return None

    def sets_posix_mode(self) -> bool:
        """Whether a ``set`` or ``shopt`` of the script names ``posix`` (``set -o posix``): bash
        then sets ``POSIXLY_CORRECT``, which ``set -a`` exports to every program."""
        assert self.root is not None
        return any(node.type == "command" and self._program(node).rsplit("/", 1)[-1] in ("set", "shopt")
                   and any(_bare(a, self.source) == "posix" for a in _field_children(node, "argument"))
                   for node in _walk(self.root))

    def single_slots(self) -> set[int]:
        """The slots written in a word a reading program takes as data (found by
        :meth:`file_reads`): a list there must be one item (see :attr:`Occurrence.single`)."""
        out: set[int] = set()
        for word in self.data_words:
            for match in SENTINEL_WORD.finditer(self.source[word.start_byte:word.end_byte]):
                out.add(int(match.group(1)))
        return out

    def _reads_of(self, command: Node) -> tuple[str, list[tuple[Node, int]], list[Node]] | None:
        """For a listed program that reads files: its name as shown, the words that may name
        a path it reads (each with the byte where the path starts), and the words naming the
        directories ``git -C`` runs in."""
        base = _listed_name(self._shown(self._program(command)))
        args = _field_children(command, "argument")
        words = [_bare(a, self.source) for a in args]
        if base in ("test", "["):
            return base, self._test_paths(args), []
        if base != "git":
            spec = READ_PATHS.get(base or "")
            return None if spec is None else (base or "", self._read_paths(args, words, spec), [])
        subcommand, at = _git_subcommand(words)
        if at is None:
            return None
        moves = [args[i + 1] for i, w in enumerate(words[:at]) if w == "-C" and i + 1 < at]
        args, words = args[at + 1:], words[at + 1:]
        options = words[:words.index("--")] if "--" in words else words
        if subcommand == "diff" or "--no-index" in options:
            return f"git {subcommand}", self._every_path(args, words), moves
        return f"git {subcommand}", self._read_paths(args, words, _GIT_READS.get(subcommand, _GIT_READS_DEFAULT)), moves

    def _read_paths(self, args: list[Node], words: list[str], spec: _Reads) -> list[tuple[Node, int]]:
        """The words of a command, as ``spec`` reads them, that may name a path it reads (for
        ``--name=value``, its value): every word not proven data (see :class:`_Reads`)."""
        out: list[tuple[Node, int]] = []
        pending: list[bool] = []  # what the next words are: a path (True) or data
        options = words[:words.index("--")] if "--" in words else words
        first = spec.first_is_data and not any(
            self._long_name(w, spec) in spec.first_named_by if w.startswith("--")
            else _cluster(w) and any(f"-{c}" in spec.first_named_by for c in self._short_letters(w, spec))
            for w in options)
        dashdash = rest_data = False
        for arg, word in zip(args, words, strict=True):
            if pending:
                if pending.pop(0):
                    out.append((arg, arg.start_byte))
                else:
                    self.data_words.append(arg)
            elif not dashdash and word == "--":
                dashdash = True
            elif not dashdash and word.startswith("--"):
                name = self._long_name(word, spec)
                if name in spec.data_after:
                    rest_data = True
                elif "=" in word:
                    roles = spec.long.get(name)
                    if (roles[0] if roles else not spec.unknown_long_is_data):
                        out.append(self._after_equals(arg))
                    else:
                        self.data_words.append(arg)
                    pending = list(roles[1:]) if roles else []
                elif name not in spec.optional:
                    pending = list(spec.long.get(name, ()))
            elif not dashdash and _cluster(word):
                letters = self._short_letters(word, spec)
                if letters and letters[-1] in spec.short and len(letters) == len(word) - 1:
                    pending = [spec.short[letters[-1]]]
            elif first:
                first = False
                self.data_words.append(arg)
            elif rest_data:  # jq --args: operands are arguments; options after it are still options
                continue
            elif spec.operands:
                out.append((arg, arg.start_byte))
        return out

    @staticmethod
    def _long_name(word: str, spec: _Reads) -> str:
        """A long option as getopt reads it: the one listed option ``word`` abbreviates, or itself."""
        name = word.split("=", 1)[0]
        known = [*spec.long, *spec.data_after, *(o for o in spec.first_named_by if o.startswith("--"))]
        if name in known:
            return name
        matches = [o for o in known if o.startswith(name)]
        return matches[0] if len(matches) == 1 else name

    @staticmethod
    def _short_letters(word: str, spec: _Reads) -> str:
        """The letters of a short option cluster up to and including the first that takes a
        value (the rest of the word is that value)."""
        for position, letter in enumerate(word[1:], start=1):
            if letter in spec.short:
                return word[1:position + 1]
        return word[1:]

    def literal_writes(self) -> tuple[LiteralWrite, ...]:
        """The paths the script writes, replaces or deletes that it names itself (see
        :class:`LiteralWrite`): the file of each output redirection, and the words of the
        programs of :meth:`_targets_of` that hold no value, literal or known before the run
        (see :meth:`_known_texts`: ``"$OUT"`` of the server's environment, ``f=out.txt; > "$f"``,
        ``~/x``); from the directory ``git -C`` names. A word whose text is not known before the
        run (``"$(cat list)"``, an unquoted ``$f``, which bash splits and matches as a pattern)
        is in :meth:`unknown_paths` instead."""
        out: list[LiteralWrite] = []
        for what, line, text, bases, _, _ in self._own_paths(writes=True):
            out.append(LiteralWrite(what, line, text, bases))
        return tuple(out)

    def literal_reads(self) -> tuple[LiteralRead, ...]:
        """The paths the script reads that it names itself (see :class:`LiteralRead`): the file of
        each input redirection and the read paths (:meth:`_reads_of`, tests) that hold no value,
        literal, a plain pattern, or known before the run as for :meth:`literal_writes`; ``-``
        (standard input) is left out."""
        out: list[LiteralRead] = []
        for what, line, text, bases, pattern, _ in self._own_paths(writes=False):
            out.append(LiteralRead(what, line, text, bases, pattern))
        return tuple(out)

    def unknown_paths(self) -> tuple[Unlisted, ...]:
        """The places where a program reads or writes a path the script names itself but whose
        text is not known before the run (a substitution, a variable set from one or by ``read``,
        an unquoted expansion bash splits and matches as a pattern, a ``git -C`` or ``cd`` into
        such a directory): MCS cannot check where they lead, so they are refused where a model's
        value can reach the files they come from (see :mod:`.cli`)."""
        out: list[Unlisted] = []
        for writes in (True, False):
            for what, _, text, _, _, node in self._own_paths(writes=writes, unknown=True):
                out.append(Unlisted(f"{what} of {text[:60]!r}", self._where(node)))
        for node, why in self._directory_changes()[1]:
            out.append(Unlisted(f"{self._shown(_text(node, self.source))[:60]!r} {why}", self._where(node)))
        return tuple(out)

    def linked_paths(self) -> tuple[Unlisted, ...]:
        """The paths the script names itself where it reads or writes after a command of the same
        script that may make a symlink (:meth:`_link_maker`: ``ln``, ``cp``, ``mv``, a git
        subcommand that writes the work tree, a program the operator trusts): MCS checks such a
        path before the script runs, so a link made on the way (``ln -s -- . x; echo hi >
        out.txt``, ``out.txt`` a link to ``x/../outside`` an earlier call left) is not seen.
        A maker counts when it comes before the path's command, shares a loop or a pipeline with
        it, or runs beside it (the script sends a command to the background with ``&``)."""
        out: list[Unlisted] = []
        for writes in (True, False):
            seen: set[int] = set()
            for what, _, text, _, _, node in self._own_paths(writes=writes):
                maker = self._maker_before(node)
                if maker is not None and node.start_byte not in seen:
                    seen.add(node.start_byte)
                    verb = "writes" if writes else "reads"
                    out.append(Unlisted(f"{what} {verb} {text[:60]!r} after {self._link_maker(maker)!r}",
                                        self._where(node)))
        return tuple(out)

    def _root(self) -> Node:
        assert self.root is not None
        return self.root

    def _own_paths(self, *, writes: bool, unknown: bool = False
                   ) -> Iterator[tuple[str, int, str, tuple[str, ...], bool, Node]]:
        """``(what, line, path, bases, pattern, node)`` for each path a program of the script reads
        (or, with ``writes``, writes) that holds no model's value, with each text it may be
        known to have before the run (:meth:`_path_texts`); with ``unknown``, those whose text is
        not known instead (``path`` is then the word as written)."""
        bases = self._literal_bases()
        for node in _walk(self._root()):
            found = self._path_words(node, writes)
            if found is None:
                continue
            what, paths, moves = found
            into: list[str] | None = []
            for move in moves:
                texts = self._path_texts(move)
                if into is None or texts is None or len(texts) != 1:
                    into = None
                else:
                    into.append(texts[0][0])
            for arg, start in paths:
                if self._value_in(arg):
                    continue
                texts = self._path_texts(arg)
                if texts is not None and start != arg.start_byte:
                    texts = [(t.split("=", 1)[1], g) for t, g in texts if "=" in t] or None
                if unknown:
                    if texts is None or into is None:
                        yield what, node.start_point[0] + 1, self._shown(_text(arg, self.source)), bases, False, node
                    continue
                if texts is None or into is None:
                    continue
                here = tuple(dict.fromkeys(BASE_STEP.join([base, *into] if base else into) for base in bases)) \
                    if into else bases
                for text, pattern in texts:
                    if text and text != "-" and (not writes or text not in _NOT_FILES):
                        yield what, node.start_point[0] + 1, text, here, pattern, node

    def _path_words(self, node: Node, writes: bool) -> tuple[str, list[tuple[Node, int]], list[Node]] | None:
        """For a node that reads (or, with ``writes``, writes) files: what it is, the words that
        may name such a path (each with the byte where the path starts), and the directories
        ``git -C`` moves into."""
        if node.type == "file_redirect":
            operators = {c.type for c in node.children if not c.is_named}
            target = node.child_by_field_name("destination")
            if target is None:
                return None
            if writes:
                if not operators & _OUTPUT_REDIRECTS or (">&" in operators and target.type == "number"):
                    return None
                return f"an output redirection {self._shown(_text(node, self.source))!r}", [(target, target.start_byte)], []
            return ("an input redirection '<'", [(target, target.start_byte)], []) if operators == {"<"} else None
        if node.type == "command":
            if writes:
                found = self._targets_of(node)
                if found is None:
                    return None
                program, paths, operands, moves = found
                if program in ("git clone", "uniq") and len(operands) > 1:
                    # the directory git clones into; the file uniq writes
                    paths = [*paths, (operands[1], operands[1].start_byte)]
                return program, paths, moves
            return self._reads_of(node)
        if not writes and node.type == "test_command" and _first_token(node) == "[":
            return "[", self._test_paths(_test_words(node)), []
        return None

    def _path_texts(self, word: Node) -> list[tuple[str, bool]] | None:
        """The texts ``word`` may have, each known before the run, and whether each is a plain
        pattern (``*.txt``), or ``None``: a literal word, a plain pattern, or a word made of
        literal text and quoted expansions of variables whose values are known (see
        :meth:`_variable_texts`; their environment's value is written :data:`ENVIRONMENT_REFERENCE`
        and read at the call), and a ``~/`` start (``$HOME``)."""
        text = _literal_word(word, self.source)
        if text is not None:
            return None if "\x00" in text else [(text, False)]
        if _plain_glob(word, self.source):
            return [(_text(word, self.source), True)]
        parts = word.children if word.type == "concatenation" else [word]
        texts = [""]
        for index, part in enumerate(parts):
            got = self._part_texts(part, first=index == 0)
            if got is None:
                return None
            texts = [a + b for a in texts for b in got]
            if len(texts) > _MOST_TEXTS:
                return None
        return [(text, False) for text in dict.fromkeys(texts)]

    def _part_texts(self, part: Node, *, first: bool) -> list[str] | None:
        """The texts one piece of a word may have (see :meth:`_path_texts`), or ``None``."""
        text = _text(part, self.source)
        if part.type == "test_operator":
            return [text]
        if part.type in ("word", "number"):
            if first and (text == "~" or text.startswith("~/")):
                home = self._variable_texts("HOME")
                return None if home is None or any(c in text[1:] for c in _UNPLAIN) else [h + text[1:] for h in home]
            # bash puts $HOME for a '~' only at the word's start, or after the '=' of name=~ or a ':'
            tilde = "~" in text and (text.startswith("~") or re.search(r"[=:]~", text) is not None)
            return None if tilde or any(c in text for c in _UNPLAIN - {"~"}) else [text]
        if part.type in ("raw_string", "string"):
            literal = _literal_word(part, self.source)
            if literal is not None:
                return None if "\x00" in literal else [literal]
        if part.type != "string":
            return None  # an unquoted expansion is split and matched as a pattern; $'...', substitutions
        texts = [""]
        for child in part.children[1:-1]:
            if child.type == "string_content":
                got: list[str] | None = None if any(c in _text(child, self.source) for c in "\\$`\x00") \
                    else [_text(child, self.source)]
            elif child.type == "simple_expansion" or (
                    child.type == "expansion" and [c.type for c in child.children] == ["${", "variable_name", "}"]):
                name = child.children[-1] if child.type == "simple_expansion" else child.children[1]
                got = self._variable_texts(_text(name, self.source)) if name.type == "variable_name" else None
            else:
                got = None
            if got is None:
                return None
            texts = [a + b for a in texts for b in got]
        return texts

    def _variable_texts(self, name: str) -> list[str] | None:
        """The values the variable ``name`` may have where the script expands it, known before
        the run, or ``None``: its value in the server's environment (written
        ``ENVIRONMENT_REFERENCE``, read at the call) and each literal value a plain assignment of
        the script gives it. Unknown: bash's own variables (``PWD``, ``RANDOM``; not ``HOME``),
        special parameters, a variable the script sets any other way (``read``, ``for``,
        ``declare``, ``${v:=x}``, a substitution) or in a script that can set any variable
        (``eval``, ``source``, namerefs)."""
        if not _IDENTIFIER.match(name) or (name in BASH_VARIABLES and name != "HOME"):
            return None
        if self._sets_any_variable():
            return None
        out = [ENVIRONMENT_REFERENCE.format(name)]
        for node in _walk(self._root()):
            if _text(node, self.source) != name:
                continue
            parent = node.parent
            if parent is None:
                continue
            if node.type == "variable_name" and parent.type in ("expansion", "simple_expansion"):
                if parent.type == "expansion" and [c.type for c in parent.children] != ["${", "variable_name", "}"]:
                    return None  # ${v:=x}, ${v/...}: set or changed where it is expanded
                continue
            if node.type == "word" and not self._names_variable(node):
                continue  # an operand that happens to spell the name (cat f)
            if node.type not in ("word", "variable_name"):
                continue
            if (node.type != "variable_name" or parent.type != "variable_assignment"
                    or parent.child_by_field_name("name") != node or parent.parent is None
                    or parent.parent.type in ("command", "declaration_command")
                    or b"+=" in self.source[parent.start_byte:parent.end_byte]):
                return None
            value = parent.child_by_field_name("value")
            literal = "" if value is None else (_text(value, self.source) if value.type == "number"
                                                else _literal_word(value, self.source))
            if literal is None or "\x00" in literal:
                return None
            out.append(literal)
        return list(dict.fromkeys(out))

    def _names_variable(self, word: Node) -> bool:
        """Whether ``word``, a plain word, may be read as a variable's name: an argument of a bash
        builtin other than those that only print or compare (``read v``, ``printf -v v``,
        ``export v``, ``getopts o v``)."""
        command = word.parent
        if command is None or command.type not in ("command", "declaration_command", "unset_command"):
            return True
        if command.type != "command":
            return True
        base = self._program(command).rsplit("/", 1)[-1]
        return base in BASH_BUILTINS and base not in ("echo", "cd", "pwd", "true", "false", ":", "test", "[", "kill")

    def _sets_any_variable(self) -> bool:
        """Whether the script has a way to set a variable no name of it shows: ``eval``, ``source``,
        ``.``, a nameref (``declare -n``, ``local -n``, ``typeset -n``), ``printf -v`` or ``read``
        with a name from an expansion."""
        for node in _walk(self._root()):
            if node.type == "command" and self._program(node).rsplit("/", 1)[-1] in ("eval", "source", ".", "let"):
                return True
            if node.type == "declaration_command" and any(
                    _bare(c, self.source).startswith("-") and "n" in _bare(c, self.source) for c in node.children):
                return True
        return False

    def _link_maker(self, command: Node) -> str:
        """The program of ``command`` as shown (``ln``, ``git checkout``) when it may make a
        symlink (``ln``, ``cp``, ``mv``, a git subcommand of :data:`_GIT_LINKERS`, a program the
        operator trusts, which MCS does not know), or ``""``."""
        name = self._shown(self._program(command))
        base = _listed_name(name)
        words = [_bare(a, self.source) for a in _field_children(command, "argument")]
        subcommand = _git_subcommand(words)[0] if base == "git" else ""
        if base in _FILE_COPIERS or subcommand in _GIT_LINKERS or (name in self.trusted and base not in DATA_PROGRAMS):
            return f"git {subcommand}" if subcommand else name
        return ""

    def _maker_before(self, node: Node) -> Node | None:
        """A command of the script other than the one ``node`` belongs to that may make a symlink
        (:meth:`_link_maker`) before or while that command runs, or ``None``: one that starts
        before the end of the statement holding ``node`` (earlier in the script, or inside the
        statement: a substitution in a word, a prefix assignment or a here-string runs before the
        program), shares a loop or a pipeline with it, or any at all where the script sends a
        command to the background with ``&``."""
        statement = node.parent if node.type == "file_redirect" and node.parent is not None else node
        parent = statement.parent
        if parent is not None and parent.type == "redirected_statement" and parent.child_by_field_name("body") == statement:
            statement = parent
        own = statement.child_by_field_name("body") if statement.type == "redirected_statement" else statement
        loops = {a.start_byte for a in _ancestors(own or statement, inclusive=True) if a.type in _LOOPS}
        pipelines = {a.start_byte for a in _ancestors(statement, inclusive=True) if a.type == "pipeline"}
        background = any(n.type == "&" for n in _walk(self._root()))
        for command in _walk(self._root()):
            if command.type != "command" or command == own or not self._link_maker(command):
                continue
            around = {a.start_byte for a in _ancestors(command)}
            if command.start_byte < statement.end_byte or background or around & loops or around & pipelines:
                return command
        return None

    def _literal_bases(self) -> tuple[str, ...]:
        """Where the script may be when it names a path, relative to the working directory: each
        ordered selection of its changes of directory (:meth:`_directory_changes`; control flow is
        not followed), as steps joined by :data:`BASE_STEP` (see :func:`based_paths`), ``""`` the
        working directory itself. A change that cannot be followed is left out here and refused
        by :meth:`unknown_paths`."""
        bases = [""]
        for texts in self._directory_changes()[0]:
            bases += [f"{base}{BASE_STEP}{text}" if base else text for base in bases for text in texts]
            bases = list(dict.fromkeys(bases))
            if len(bases) > _MOST_TEXTS:
                return ("",)  # refused by unknown_paths
        return tuple(bases)

    def _directory_changes(self) -> tuple[list[list[str]], list[tuple[Node, str]]]:
        """The changes of directory of the script in order (``cd``, ``pushd``), each as the texts
        its directory may have, known before the run (:meth:`_path_texts`: ``cd ..``, ``cd
        /srv``, ``cd ~/x``, ``cd "$DIR"`` of the server's environment; ``cd`` alone is ``$HOME``);
        and those MCS cannot follow, each with why: a directory not known before the run, a
        relative one the script may change into again (in a loop or a function: ``sub``,
        ``sub/sub``...), any relative one where the script sets ``CDPATH``, or more selections
        than :data:`_MOST_TEXTS`. A change back to a directory the script was in (``cd -``,
        ``popd``, ``pushd`` without a directory or with ``+N``) is one of the selections, and
        ``pushd -n`` changes nothing."""
        changes: list[list[str]] = []
        refused: list[tuple[Node, str]] = []
        cdpath = may_set(self.script, "CDPATH")
        count = 1
        for node in _walk(self._root()):
            base = self._program(node).rsplit("/", 1)[-1] if node.type == "command" else ""
            if base not in ("cd", "pushd") or any(self._value_in(a) for a in _field_children(node, "argument")):
                continue  # a value in cd is refused where values are placed
            words = [(a, _bare(a, self.source)) for a in _field_children(node, "argument")]
            options = {w for _, w in words if w.startswith("-") and len(w) > 1 and w != "--"}
            args = [a for a, w in words if w != "--" and w not in options]
            if base == "pushd" and ("-n" in options or not args or re.fullmatch(r"[+-][0-9]+", _bare(args[0], self.source))):
                continue
            if base == "cd" and args and _bare(args[0], self.source) == "-":
                continue
            if len(args) > 1:
                refused.append((node, "with more than one directory"))
                continue
            found = self._path_texts(args[0]) if args else [(text, False) for text in self._variable_texts("HOME") or []]
            if not found or any(pattern for _, pattern in found):
                refused.append((node, "into a directory not known before the run"))
                continue
            texts = [text for text, _ in found]
            relative = [t for t in texts if not t.startswith("/")]
            if relative and cdpath:
                refused.append((node, "in a script that sets CDPATH, where cd looks for the directory first"))
                continue
            if relative and self._may_repeat(node):
                refused.append((node, "in a loop or a function, where each turn may move further"))
                continue
            count *= len(texts) + 1
            if count > _MOST_TEXTS:
                refused.append((node, "after more changes of directory than MCS follows"))
                continue
            changes.append(texts)
        return changes, refused

    @staticmethod
    def _may_repeat(node: Node) -> bool:
        """Whether ``node`` may run more than once in the same shell: inside a loop or a function
        body, with no subshell between (a subshell's ``cd`` ends with it)."""
        for ancestor in _ancestors(node):
            if ancestor.type in ("subshell", "command_substitution", "process_substitution"):
                return False
            if ancestor.type in _LOOPS or ancestor.type == "function_definition":
                return True
        return False

    def _no_magic_compile(self, command: Node) -> None:
        """Refuse a model's value in ``file -C`` (``--compile``): it writes ``<name>.mgc`` for
        each magic file ``-m`` names into the working directory, following a symlink there,
        a write whose path MCS does not check."""
        if _listed_name(self._shown(self._program(command))) != "file":
            return
        args = _field_children(command, "argument")
        compiles = False
        for word in (_bare(a, self.source) for a in args):
            if word == "--":
                break
            if word.startswith("--"):
                compiles = compiles or (len(word) > 3 and "--compile".startswith(word))
            elif _cluster(word):
                letters = re.split(r"[eFfmP]", word[1:], maxsplit=1)[0]  # a valued letter takes the rest
                compiles = compiles or "C" in letters
        held = next((a for a in args if self._value_in(a)), None)
        if compiles and held is not None:
            raise self._refuse(held, self._value_in(held), "is an argument of file -C, which writes a compiled "
                               "magic file into the working directory (following a symlink there), a path MCS "
                               "does not check", "compile magic files in a tool that takes no value")

    def _no_name_lists(self, command: Node) -> None:
        """Refuse, in a command that takes a model's value, an option of :data:`_NAME_LISTS` (the
        program reads the files a list names, ``wc --files0-from=list``, ``md5sum -c sums``: MCS
        checks where the list is, not the names inside it, which a value can write or be) or of
        :data:`_LINK_FOLLOWERS` (the program follows the symlinks it finds below the paths it
        is given, ``grep -R``, ``ls -L``: MCS checks the paths, not where links inside lead)."""
        base = _listed_name(self._shown(self._program(command))) or ""
        label = next((spec.label for spec in self.slots.values() if not spec.trusted), None)
        if label is None:
            return
        words = [_bare(arg, self.source) for arg in _field_children(command, "argument")]
        options = words[:words.index("--")] if "--" in words else words
        lists = self._option_in(options, _NAME_LISTS.get(base, ()))
        if lists:
            raise self._refuse(command, label, f"is in a command where {base} {lists} reads the files a list "
                               "names, and MCS checks the list's path, not the names it holds (a model's value can "
                               f"be or write them)", f"pass the files to {base} as operands ({base} -- {{files}}), "
                               "which MCS checks one by one")
        follows = self._option_in(options, _LINK_FOLLOWERS.get(base, ()))
        if follows and not (base == "diff" and "--no-dereference" in options):
            raise self._refuse(command, label, f"is in a command where {base} {follows} follows the symlinks it "
                               "finds inside the directories it is given, and MCS checks the paths, not where a "
                               "link inside leads (outside the working directory)",
                               "drop the option (grep -r, ls and du without -L, diff --no-dereference, cp -r "
                               "without -L keep links as links)")

    def followers(self) -> tuple[Unlisted, ...]:
        """The commands of the script that use an option of :data:`_NAME_LISTS` or
        :data:`_LINK_FOLLOWERS` (``diff -r`` not with ``--no-dereference``), each as the program
        and option (``grep -R``) and where it stands."""
        assert self.root is not None
        out: list[Unlisted] = []
        for command in _walk(self.root):
            if command.type != "command":
                continue
            base = _listed_name(self._shown(self._program(command))) or ""
            words = [_bare(arg, self.source) for arg in _field_children(command, "argument")]
            options = words[:words.index("--")] if "--" in words else words
            option = self._option_in(options, _NAME_LISTS.get(base, ()))
            follows = self._option_in(options, _LINK_FOLLOWERS.get(base, ()))
            if follows and not (base == "diff" and "--no-dereference" in options):
                option = option or follows
            if option:
                out.append(Unlisted(f"{base} {option}", self._where(command)))
        return tuple(out)

    @staticmethod
    def _option_in(words: list[str], options: tuple[str, ...]) -> str:
        """The first of ``words`` that is one of ``options``: a long one or a prefix of one
        (``--files0``), a short one in a cluster (``-bf``); ``""`` if none."""
        for word in words:
            name = word.split("=", 1)[0]
            if name.startswith("--") and len(name) > 2:
                if any(option.startswith(name) for option in options if option.startswith("--")):
                    return name
            elif _cluster(word) and any(f"-{letter}" in options for letter in word[1:]):
                return word
        return ""

    def signal_targets(self) -> tuple[SignalTarget, ...]:
        """The ``kill`` commands (the builtin, or ``kill`` of a system directory) whose process
        operand a model's value may be; a value that reaches such a word through a variable or a
        substitution is refused, since the call could not check it. A ``kill -l``/``-L`` lists
        signals and signals nothing."""
        assert self.root is not None
        out: list[SignalTarget] = []
        for command in _walk(self.root):
            if command.type != "command" or _listed_name(self._shown(self._program(command))) != "kill":
                continue
            args = _field_children(command, "argument")
            words = [_bare(a, self.source) for a in args]
            held: list[Node] = []
            skip = 0
            dashdash = False
            for arg, word in zip(args, words, strict=True):
                if skip:
                    skip -= 1
                    self.data_words.append(arg)  # a signal: a list's further items would be processes
                elif not dashdash and word == "--":
                    dashdash = True
                elif not dashdash and word.startswith("-") and len(word) > 1 and not self._value_in(arg):
                    if word in ("-l", "-L", "--list", "--table"):
                        held = []
                        break
                    skip = 2 if word == "--timeout" else 1 if word in _KILL_VALUED else 0
                elif self._value_in(arg):
                    held.append(arg)
            for arg in held:
                if _value_is_indirect(arg, self):
                    raise self._refuse(arg, self._value_in(arg), "may name the process kill signals, but it reaches "
                                       "kill through a variable or a substitution, where MCS cannot check at the "
                                       "call which process it is", "pass the placeholder directly: kill -- {pid}")
            if held:
                out.append(SignalTarget(command.start_point[0] + 1, tuple((a.start_byte, a.end_byte) for a in held)))
        return tuple(out)

    def _no_link_before(self, node: Node, arg: Node, program: str, verb: str = "writes to") -> None:
        """Refuse a command of the script that may put a symlink where ``node`` (a command, a
        redirection, a test) then writes or reads a path a value names: the path is checked
        before the script runs, so a link made on the way (``git checkout {rev} && cp -- a
        d/{f}``, ``d`` a link in that revision) would lead it outside. Such a command is one
        :meth:`_maker_before` finds, the rule for the paths the script names itself."""
        maker = self._maker_before(node)
        if maker is None:
            return
        shown = self._link_maker(maker)
        raise self._refuse(arg, self._value_in(arg), f"may name a path {program} {verb}, which MCS checks "
                           f"before the command runs, and {self._where(maker)} runs {shown!r} before it or "
                           "beside it, which can put a symlink in that path on the way", f"split the command: "
                           f"run {shown} in a tool of its own, so the path is checked after it")

    def _bases(self, command: Node, arg: Node, program: str, verb: str = "writes to") -> tuple[str, ...]:
        """Where, relative to the working directory, the programs of the script may run: the
        working directory, each directory a ``cd``/``pushd`` of the script names, and all of
        them joined in order (control flow is not followed); each must be a plain relative
        path below the working directory, so that a relative value is checked where the
        program resolves it (``cd /tmp && rm -- {file}`` would delete in ``/tmp``)."""
        assert self.root is not None
        found: list[str] = []
        for node in _walk(self.root):
            base = self._program(node).rsplit("/", 1)[-1] if node.type == "command" else ""
            if base not in ("cd", "pushd", "popd"):
                continue
            args = [a for a in _field_children(node, "argument") if _bare(a, self.source) not in ("-L", "-P", "--")]
            if base == "popd" and not args:
                continue  # back to a directory a cd or pushd chose, or the working directory
            if may_set(self.script, "CDPATH"):  # cd would look for the directory there first
                found.append(self._plain_directory(None, arg, program, self._shown(_text(node, self.source)), verb))
            found.append(self._plain_directory(args[0] if len(args) == 1 else None, arg, program,
                                               self._shown(_text(node, self.source)), verb))
        if not found:
            return ("",)
        return tuple(dict.fromkeys(["", *found, "/".join(found)]))

    def _plain_directory(self, word: Node | None, arg: Node, program: str, change: str,
                         verb: str = "writes to") -> str:
        """The directory ``word`` names for a change of directory (``change``, as the file
        writes it) in a command where ``arg`` may name a path ``program`` writes: a plain
        relative path below the working directory, without a trailing ``/``.

        Raises:
            Refused: anything else (absolute, ``..``, ``-``, ``~``, an expansion, no word).
        """
        text = _literal_word(word, self.source) if word is not None else None
        if (text is None or not _PLAIN_DIRECTORY.match(text)
                or any(part in ("", ".", "..") for part in text.rstrip("/").split("/"))):
            raise self._refuse(arg, self._value_in(arg), f"may name a path {program} {verb}, in a script "
                               f"that changes directory with {change[:60]!r}, which MCS cannot follow to check "
                               "where the path lands", "write cd (or git -C) with one plain relative directory "
                               "below the working directory (cd repo), or none")
        return text.rstrip("/")

    def _targets_of(self, command: Node) -> tuple[str, list[tuple[Node, int]], list[Node], list[Node]] | None:
        """For a command that writes files: its name as shown, the words that may name a path
        it writes (each with the byte where the path starts), ``git clone``'s or ``uniq``'s
        operands, and the words naming the directories ``git -C`` runs in."""
        base = _listed_name(self._shown(self._program(command)))
        args = _field_children(command, "argument")
        words = [_bare(a, self.source) for a in args]
        if base in _PATH_WRITERS:
            return base, self._every_path(args, words), [], []
        if base == "sort":  # -o the output; -T a directory it writes its temporary files in
            return base, (self._option_paths(args, words, short="o", valued=_SORT_VALUED, long="--output", least=3)
                          + self._option_paths(args, words, short="T", valued=_SORT_VALUED,
                                               long="--temporary-directory", least=3)), [], []
        if base == "uniq":
            return base, [], [arg for arg, _ in self._operands(args, words, _UNIQ_VALUED)], []
        if base != "git":
            return None
        subcommand, at = _git_subcommand(words)
        if at is None:
            return None
        name = f"git {subcommand}"
        moves = [args[i + 1] for i, w in enumerate(words[:at]) if w == "-C" and i + 1 < at]
        # --work-tree: where checkout, restore, reset, merge, pull... write the files
        tree = [self._after_equals(a) for a, w in zip(args[:at], words[:at], strict=True) if w.startswith("--work-tree=")]
        tree += [(args[i + 1], args[i + 1].start_byte) for i, w in enumerate(words[:at]) if w == "--work-tree"]
        args, words = args[at + 1:], words[at + 1:]
        if subcommand == "init":
            return name, tree + self._every_path(args, words), [], moves
        if subcommand in _GIT_OUTPUT_SUBCOMMANDS:
            return name, tree + self._option_paths(args, words, short="", valued=frozenset(), long="--output",
                                                   least=5), [], moves
        if subcommand != "clone":
            return (name, tree, [], moves) if tree else None
        valued, flags = GIT_REMOTE_OPTIONS["clone"]
        paths: list[tuple[Node, int]] = []
        operands: list[Node] = []
        expects: str | None = None
        dashdash = False
        for arg, word in zip(args, words, strict=True):
            if expects is not None:
                if expects == "--separate-git-dir":
                    paths.append((arg, arg.start_byte))
                expects = None
            elif not dashdash and word == "--":
                dashdash = True
            elif not dashdash and word.startswith("-") and len(word) > 1:
                option, expects, _ = self._git_option(word, valued, flags)
                if option == "--separate-git-dir" and expects is None:
                    paths.append(self._after_equals(arg))
            else:
                operands.append(arg)
        return name, tree + paths, operands, moves

    def _after_equals(self, arg: Node) -> tuple[Node, int]:
        """``arg`` (``--name=value``) and the byte where its value starts."""
        return arg, self.source.index(b"=", arg.start_byte, arg.end_byte) + 1

    def _every_path(self, args: list[Node], words: list[str]) -> list[tuple[Node, int]]:
        """Every word (for ``--name=value``, its value): any may be a path the program writes."""
        out: list[tuple[Node, int]] = []
        dashdash = False
        for arg, word in zip(args, words, strict=True):
            if not dashdash and word == "--":
                dashdash = True
            elif not dashdash and word.startswith("--") and "=" in word:
                out.append(self._after_equals(arg))
            else:
                out.append((arg, arg.start_byte))
        return out

    def _option_paths(self, args: list[Node], words: list[str], *, short: str, valued: frozenset[str], long: str,
                      least: int) -> list[tuple[Node, int]]:
        """The values of the option that names the file written (``-o FILE``, ``--output=FILE``,
        ``--output FILE``; a long option abbreviated to at least ``least`` characters)."""
        out: list[tuple[Node, int]] = []
        expects = dashdash = False
        for arg, word in zip(args, words, strict=True):
            if expects:
                out.append((arg, arg.start_byte))
                expects = False
            elif dashdash or word == "--":
                dashdash = True
            elif word.startswith("--"):
                name = word.split("=", 1)[0]
                if len(name) >= least and long.startswith(name):
                    if "=" in word:
                        out.append(self._after_equals(arg))
                    else:
                        expects = True
            elif _cluster(word):
                for position, letter in enumerate(word[1:], start=1):
                    if letter == short or letter in valued:
                        expects = letter == short and position == len(word) - 1
                        break
        return out

    def _operands(self, args: list[Node], words: list[str], valued: frozenset[str]) -> list[tuple[Node, int]]:
        """The operand words, skipping options and the values of ``valued`` short options."""
        out: list[tuple[Node, int]] = []
        skip = dashdash = False
        for arg, word in zip(args, words, strict=True):
            if skip:
                skip = False
            elif not dashdash and word == "--":
                dashdash = True
            elif not dashdash and word.startswith("-") and len(word) > 1:
                skip = _cluster(word) and word[-1] in valued
            else:
                out.append((arg, arg.start_byte))
        return out

    def _value_in(self, arg: Node) -> str:
        """The label of a model's value ``arg`` holds (directly, through a variable or a
        substitution), or ``""``."""
        for match in SENTINEL_WORD.finditer(self.source[arg.start_byte:arg.end_byte]):
            spec = self.slots.get(int(match.group(1)))
            if spec is not None and not spec.trusted:
                return spec.label
        for node in _walk(arg):
            if node.type == "variable_name" and _text(node, self.source) in self.tainted:
                name = _text(node, self.source)
                return f"${name} (which holds {self.tainted[name].label})"
        return ""

    def _always_present(self, arg: Node, optional: tuple[tuple[int, int], ...]) -> bool:
        """Whether ``arg`` is one word at every call: literal text (or quotes) outside the
        optional ranges; a lone unquoted placeholder may be no word (absent) or several."""
        word = self.source[arg.start_byte:arg.end_byte]
        values = [range(m.start(), m.end()) for m in SENTINEL_WORD.finditer(word)]
        return any(
            not any(start <= arg.start_byte + index < end for start, end in optional)
            and not any(index in value for value in values)
            for index in range(len(word))
        )

    @staticmethod
    def _git_option(text: str, valued: frozenset[str], flags: frozenset[str]) -> tuple[str, str | None, bool]:
        """An option word as git's parse-options reads it: ``(option, option whose value is
        the next word or None, known)``; long options may be abbreviated, ``--no-`` negated."""
        if text.startswith("--"):
            name = text.split("=", 1)[0]
            glued = "=" in text
            if name in valued or name in flags:
                matches = [name]
            else:
                matches = [o for o in valued | flags if o.startswith(name) and o.startswith("--")]
                if not matches and name.startswith("--no-"):
                    positive = "--" + name[5:]
                    if any(o.startswith(positive) for o in valued | flags if o.startswith("--")):
                        return name, None, True
            if len(matches) != 1:
                return name, None, False
            option = matches[0]
            return option, option if option in valued and not glued else None, True
        for position, letter in enumerate(text[1:], start=1):
            option = f"-{letter}"
            if option in valued:
                return option, option if position == len(text) - 1 else None, True
            if option not in flags:
                return option, None, False
        return text[:2], None, True

    def _check_every_program(self) -> None:
        """In a command that takes a model's values, every program must be listed (or trusted),
        also where no value reaches it: what a listed program writes from a value (a file, a
        clone) the next program could run (``echo {x} > s.sh; bash s.sh``,
        ``git clone {url} r && make -C r``)."""
        label = next(spec.label for spec in self.slots.values() if not spec.trusted)
        for node, name in self._unlisted():
            raise self._refuse(node, label, f"is a model's value in a command that also runs {name!r}, which is "
                               "not on the list of programs proven to keep values as data; what one program "
                               "writes from a value (a file, a clone) the next could run",
                               _ways_out(name, f"{name} runs nothing a value could have written"))

    def _commands(self) -> Iterator[tuple[Node, str, str | None]]:
        """Each command with its program as the file writes it (``{env.RUNNER}``, not the
        sentinel word that stands for it here) and the allow-list's name for it."""
        assert self.root is not None
        for node in _walk(self.root):
            if node.type == "command":
                name = self._shown(self._program(node))
                yield node, name, _listed_name(name)

    def _unlisted(self) -> Iterator[tuple[Node, str]]:
        """Each command whose program is neither on the allow-list, nor trusted by the
        operator, nor a builtin that runs nothing, with the program as the file writes it."""
        for node, name, base in self._commands():
            if not (name in self.trusted or base in DATA_PROGRAMS or base in QUIET_BUILTINS):
                yield node, name

    def _writers(self) -> Iterator[Effect]:
        """Each place that writes files (see :attr:`Findings.writers`)."""
        assert self.root is not None
        for node in _walk(self.root):
            if node.type == "file_redirect":
                operators = [c.type for c in node.children if not c.is_named]
                target = node.child_by_field_name("destination")
                text = _text(target, self.source)
                if not set(operators) & _OUTPUT_REDIRECTS or text in _NOT_FILES:
                    continue
                if ">&" in operators and (target is None or target.type == "number" or text == "-"):
                    continue  # 2>&1, >&-: a descriptor
                command = next((a for a in _ancestors(node) if a.type in ("redirected_statement", "command")), node)
                yield Effect(f"an output redirection {self._shown(_text(node, self.source))!r}", self._where(node),
                             command.start_byte)
            elif node.type == "command":
                what = self._writes(node)
                if what:
                    yield Effect(what, self._where(node), node.start_byte)

    def _writes(self, command: Node) -> str:
        """How the listed program of ``command`` writes files, or ``""``."""
        name = self._shown(self._program(command))
        base = _listed_name(name)
        if name in self.trusted and base not in DATA_PROGRAMS and base not in QUIET_BUILTINS:
            return f"{name} is trusted by the operator to keep values as data, which does not say which files it writes"
        args = _field_children(command, "argument")
        words = [_bare(a, self.source) for a in args]
        if base in _FILE_COPIERS:
            return f"{base} creates or replaces files its operands name"
        if base == "sort" and any((w.startswith("--o") and "--output".startswith(w.split("=", 1)[0]))
                                  or (_cluster(w) and "o" in w[1:]) for w in words):
            return "sort -o writes the file it names"
        if base == "uniq":
            given = [arg for arg, _ in self._operands(args, words, _UNIQ_VALUED)]
            # one unquoted placeholder may be several words: a list's second item is the output
            if len(given) > 1 or any(self._value_in(a) and not self._always_present(a, ()) for a in given):
                return "uniq writes its second operand"
        if base != "git":
            return ""
        subcommand, at = _git_subcommand(words)
        if at is None:
            return ""
        trees = [a for i, a in enumerate(args[:at]) if words[i].startswith("--work-tree=")
                 or (i > 0 and words[i - 1] == "--work-tree")]
        if any(self._value_in(a) for a in trees):
            return ("git --work-tree writes the repository's files (a model's, once cloned) into a directory a "
                    "model's value may choose, such as .git")
        rest = words[at + 1:]
        if subcommand in _GIT_OUTPUT_SUBCOMMANDS and any(
                w.split("=", 1)[0] == "--output" or (len(w) > 4 and "--output".startswith(w)) for w in rest):
            return f"git {subcommand} --output writes the file it names"
        if subcommand == "clone":
            valued, _ = GIT_REMOTE_OPTIONS["clone"]
            operands: list[Node] = []
            skip = dashdash = False
            for arg, word in zip(args[at + 1:], rest, strict=True):
                if skip:
                    skip = False
                elif not dashdash and word == "--":
                    dashdash = True
                elif not dashdash and word.startswith("-") and len(word) > 1:
                    skip = word in valued or (not word.startswith("--") and f"-{word[-1]}" in valued)
                else:
                    operands.append(arg)
            # the directory: the operand after the repository, else the repository's last component
            if any(self._value_in(arg) for arg in (operands[1:] if len(operands) > 1 else operands)):
                return "git clone writes the remote's files into a directory a model's value may choose"
        return ""

    def _config_readers(self) -> Iterator[Effect]:
        """Each command whose program is on :data:`CONFIG_READERS` and not trusted by the operator."""
        for node, name, base in self._commands():
            if name not in self.trusted and base in CONFIG_READERS:
                yield Effect(f"runs {name!r}", self._where(node), node.start_byte, program=name)

    def _renaming(self, root: Node) -> Node | None:
        """The first place where the script makes a name run something else than the
        program of that name: an alias, a hashed path, a loaded or disabled builtin."""
        if "command_not_found_handle" in self.functions:
            return next(n for n in _walk(root) if n.type == "function_definition")
        for node in _walk(root):
            if node.type == "command" and self._program(node).rsplit("/", 1)[-1] in _RENAMING:
                return node
            if node.type == "variable_assignment":
                name = node.child_by_field_name("name")
                if name is not None and re.split(r"\[", _text(name, self.source))[0] in ("BASH_ALIASES", "BASH_CMDS"):
                    return node
        return None

    # ------------------------------------------------------------------ slots

    def _slot(self, leaf: Node, offset: int, spec: SlotSpec) -> Occurrence:
        if any(n.type == "comment" for n in _ancestors(leaf, inclusive=True)):
            return Occurrence("comment")
        if spec.trusted:  # the server's own environment: the operator's configuration
            quoting = _quoting(leaf, self.source)
            return Occurrence("heredoc" if quoting == "heredoc_literal" else quoting)
        if self.renaming is not None and not spec.runs_as_code:
            raise self._refuse(self.renaming, spec.label, "is in a script that renames programs (alias, hash -p, "
                               "BASH_ALIASES, BASH_CMDS, enable, command_not_found_handle), so a program's name no "
                               "longer says what runs", "call programs by their own names")
        quoting = _quoting(leaf, self.source)
        if quoting == "heredoc_literal":
            raise self._refuse(leaf, spec.label, "is inside a here-document whose delimiter is quoted, where "
                               "bash passes no value", "unquote the delimiter (<<EOF) and escape any $, ` or \\ "
                               "that must stay literal")
        if leaf.type not in ("word", "string_content", "string", "raw_string", "ansi_c_string",
                             "heredoc_body", "heredoc_content", "variable_name", "number"):
            raise self._refuse(leaf, spec.label, f"is part of a {leaf.type.replace('_', ' ')}",
                               "pass it as a separate argument of a command")
        position = self._position(leaf, spec.label, origin="slot", spec=spec)
        context: Context = quoting
        if position.arithmetic:
            if not spec.numeric:
                raise self._refuse(leaf, spec.label, "is used in arithmetic, where bash evaluates a value as an "
                                   "expression (and can run code from it)", "only integer or number properties "
                                   "may be used there")
            context = "arith"
        word_start = False
        if position.argument is not None and context in ("word", "dq", "sq", "ansi"):
            word_start = self._starts_word(position.argument, offset)
            if word_start and not position.after_double_dash:
                self._nothing_glued_before(position.argument, offset, leaf, spec.label)
        return Occurrence(context, word_start, position.after_double_dash)

    def _nothing_glued_before(self, argument: Node, offset: int, leaf: Node, label: str) -> None:
        """Refuse an expansion before the value at ``offset`` in its word that the script may
        fill with a '-' (``D=-; git grep "$D"{x}`` is ``-O{x}``): only a variable of the server's
        environment, which the script never sets, may stand there (it may be empty, so the
        value is still checked at the call for a leading '-')."""
        assigned = self._assigned_names()
        for node in _walk(argument):
            if node.start_byte >= offset or node.type not in _EXPANSIONS:
                continue
            names = [c for c in node.children if c.type == "variable_name"]
            plain = node.type == "simple_expansion" or [c.type for c in node.children] == ["${", "variable_name", "}"]
            if not (plain and len(names) == 1 and _text(names[0], self.source) not in assigned):
                raise self._refuse(leaf, label, f"follows {_text(node, self.source)[:40]!r} in its word, which the "
                                   "script may fill with '-', so the value would complete an option word (git grep "
                                   "-O runs its value)", "write -- before it, or literal text first (./{x})")

    def _assigned_names(self) -> frozenset[str]:
        """The variables the script itself may set (assigned, a for variable, or named as a
        word anywhere: read NAME, declare NAME=..., printf -v NAME), and bash's special ones."""
        assert self.root is not None
        names: set[str] = set()
        for node in _walk(self.root):
            if node.type == "variable_name" and node.parent is not None and node.parent.type not in (
                    "simple_expansion", "expansion"):
                names.add(_text(node, self.source))
            elif node.type == "word":
                names.add(re.split(r"[\[=+]", _text(node, self.source))[0])
        return frozenset(names)

    def _starts_word(self, argument: Node, offset: int) -> bool:
        """Whether the value at ``offset`` may be the start of the word the program gets:
        only quotes, other values or expansions (``"$X"{x}``: ``$X`` may be empty) come before it."""
        before = self._unexpanded(argument, argument.start_byte, offset)
        before = SENTINEL_WORD.sub(b"", before)
        return not before.replace(b'"', b"").replace(b"'", b"").replace(b"$", b"")

    def _unexpanded(self, argument: Node, start: int, end: int) -> bytes:
        """The script's bytes ``start:end`` inside ``argument`` without the expansions bash
        makes there (``$X``, ``${X}``, ``$(...)``, `` `...` ``, ``$((...))``): each may be empty."""
        out = bytearray()
        at = start
        for node in _walk(argument):
            if node.type in _EXPANSIONS and at <= node.start_byte and node.end_byte <= end:
                out += self.source[at:node.start_byte]
                at = node.end_byte
        out += self.source[at:end] if at < end else b""
        return bytes(out)

    # ------------------------------------------------------------------ positions

    def _position(self, start: Node, label: str, *, origin: str, spec: SlotSpec | None) -> _Position:
        """Walk up from ``start`` to what consumes it; refuse unless that is proven safe.

        ``origin`` is ``slot`` (a placeholder: its reference is written quoted),
        ``expansion`` (``$var`` holding a value) or ``substitution`` (``$(...)`` whose
        commands hold a value): the last two are split and globbed when unquoted.
        """
        node = start
        quoted = False
        arithmetic = False
        while True:
            parent = node.parent
            if parent is None:
                raise self._refuse(start, label, "is not an argument of any command", "pass it to a command")
            kind = parent.type
            if kind in ("string", "heredoc_body"):
                quoted = True
            elif kind in ("concatenation", "raw_string", "ansi_c_string"):
                pass
            elif kind == "arithmetic_expansion" or (kind in _ARITH_EXPRESSIONS and _in_arithmetic(parent)):
                arithmetic = True
            elif kind in _ARITH_EXPRESSIONS or kind == "test_command":
                test = _enclosing_test(parent)
                if test is None or _first_token(test) == "[[":
                    raise self._refuse(start, label, "is an operand of [[ ... ]], where bash evaluates words as "
                                       "arithmetic and variable names", "use [ ... ] (the test builtin), whose "
                                       "operands are data")
                if any(_text(op, self.source) in _NAME_OPTIONS for op in _walk(test) if op.type == "test_operator"):
                    raise self._refuse(start, label, "is in a test with -v or -R, which evaluates a variable name",
                                       "compare the value instead ([ -n \"...\" ])")
                self._check_enclosure(test, label, spec)
                return _Position(arithmetic=arithmetic)
            elif (kind == "compound_statement" and _first_token(parent) == "((") or kind == "c_style_for_statement":
                if origin != "slot":
                    raise self._refuse(start, label, "is evaluated as arithmetic", "use a number property directly")
                self._check_enclosure(parent, label, spec)
                return _Position(arithmetic=True)
            elif kind in ("command_substitution", "process_substitution"):
                pass  # reached only through a command, handled there
            elif kind == "command_name":
                raise self._refuse(start, label, "is where the program name goes; a value cannot choose the "
                                   "program", "name the program literally and pass the value as an argument")
            elif kind == "command":
                return self._argument_of(parent, node, start, label, origin=origin, quoted=quoted,
                                         arithmetic=arithmetic, spec=spec)
            elif kind in ("herestring_redirect", "heredoc_redirect", "file_redirect"):
                return self._redirected(parent, start, label, spec=spec, arithmetic=arithmetic)
            elif kind == "variable_assignment":
                self._assignment(parent, node, start, label, quoted=quoted, origin=origin)
                return _Position(arithmetic=arithmetic)
            elif kind == "for_statement" and node in _field_children(parent, "value"):
                self._taint(parent.child_by_field_name("variable"), label, start, **self._whole(node, start, origin))
                self._check_enclosure(parent, label, spec)
                return _Position(arithmetic=arithmetic)
            elif kind == "case_statement" and node == parent.child_by_field_name("value"):
                self._check_enclosure(parent, label, spec)
                return _Position(arithmetic=arithmetic)
            elif kind == "subscript":
                raise self._refuse(start, label, "is an array subscript, which bash evaluates as arithmetic",
                                   "pass it as an argument instead")
            elif kind == "expansion":
                raise self._refuse(start, label, "is inside a ${...} expansion", "pass it as a plain argument")
            elif kind == "simple_expansion":
                raise self._refuse(start, label, "is glued to a $variable name", "separate it: \"$var\"{x}")
            elif kind == "case_item":
                raise self._refuse(start, label, "is a case pattern, which bash reads as a glob pattern",
                                   "match on a literal pattern and pass the value as the case subject")
            elif kind in ("declaration_command", "unset_command"):
                raise self._refuse(start, label, f"is an argument of {_first_token(parent)}, which reads variable "
                                   "names and evaluates subscripts", "assign it plainly: name=\"{x}\"")
            elif kind == "array":
                raise self._refuse(start, label, "is an element of an array assignment", "assign it to a plain "
                                   "variable, or pass it as an argument")
            else:
                raise self._refuse(start, label, f"is in a {kind.replace('_', ' ')}, which is not a position "
                                   "proven to keep a value as data", "pass it as an argument of a command")
            node = parent

    def _argument_of(self, command: Node, child: Node, start: Node, label: str, *, origin: str, quoted: bool,
                     arithmetic: bool, spec: SlotSpec | None) -> _Position:
        if child.type == "variable_assignment":
            raise self._refuse(start, label, "is assigned in front of a command, which puts the value in the "
                               "program's environment", "pass it as an argument of the command")
        if child.type in ("herestring_redirect", "file_redirect", "heredoc_redirect"):
            return self._redirected(child, start, label, spec=spec, arithmetic=arithmetic)
        if origin != "slot" and not quoted and child.type != "process_substitution":
            raise self._refuse(start, label, "is unquoted, so bash splits it into words and expands globs",
                               "put it in double quotes")
        self._check_program(command, child, start, label, spec)
        self._check_enclosure(command, label, spec)
        args = _field_children(command, "argument")
        before = args[: args.index(child)] if child in args else []
        dashdash = any(a.type == "word" and _text(a, self.source) == "--" for a in before)
        return _Position(argument=child, after_double_dash=dashdash, arithmetic=arithmetic)

    def _redirected(self, redirect: Node, start: Node, label: str, *, spec: SlotSpec | None,
                    arithmetic: bool) -> _Position:
        if redirect.type == "file_redirect":
            operators = {c.type for c in redirect.children}
            if operators & _OUTPUT_REDIRECTS or "<" not in operators:
                raise self._refuse(start, label, "is the target of an output redirection, so a value would choose "
                                   "which file is written", "write the path literally")
        owner = redirect.parent
        if owner is not None and owner.type == "redirected_statement":
            owner = owner.child_by_field_name("body")
        if owner is None or owner.type != "command":
            raise self._refuse(start, label, "is fed to a loop or block rather than to one command",
                               "feed it to a single command (jq ... <<< \"{x}\")")
        if self._reads_code(owner, spec):
            raise self._refuse(start, label, f"is standard input of {self._program(owner)}, which runs its input "
                               "as code", "feed it to a program that reads data, or mark the argument "
                               "x-mcs-runsAsCode: true")
        self._check_program_name(owner, start, label)
        self._check_listed(owner, None, start, label, spec, "standard input of")
        self._reads_into(owner, label, start)
        if redirect.type == "heredoc_redirect":  # "cat <<EOF | sh": the rest of the line sits inside it
            for part in redirect.named_children:
                if part.type in ("heredoc_start", "heredoc_body", "heredoc_end", "file_redirect"):
                    continue
                for command in [part, *_walk(part)]:
                    self._reads_into(command, label, start)
                    if command.type == "command" and self._reads_code(command, spec):
                        raise self._refuse(start, label, f"flows through a pipe into {self._program(command)}, "
                                           "which runs its input as code", "pipe it into a program that reads data, or mark the "
                                           "argument x-mcs-runsAsCode: true")
                    if command.type == "command":
                        self._check_listed(command, None, start, label, spec, "piped into")
        self._check_enclosure(owner, label, spec)
        return _Position(arithmetic=arithmetic)

    def _assignment(self, assignment: Node, child: Node, start: Node, label: str, *, quoted: bool,
                    origin: str) -> None:
        holder = assignment.parent
        if holder is not None and holder.type == "command":
            raise self._refuse(start, label, "is assigned in front of a command, which puts the value in the "
                               "program's environment", "pass it as an argument of the command")
        if holder is not None and holder.type == "declaration_command":
            raise self._refuse(start, label, f"is assigned by {_first_token(holder)}, which can evaluate it "
                               "(declare -i, -n, -a...)", "assign it plainly: name=\"{x}\"")
        if child != assignment.child_by_field_name("value"):
            raise self._refuse(start, label, "names the variable being assigned", "name variables literally")
        self._taint(assignment.child_by_field_name("name"), label, start, **self._whole(child, start, origin))
        self._check_enclosure(assignment, label, None)

    # ------------------------------------------------------------------ programs

    def _program(self, command: Node) -> str:
        name = command.child_by_field_name("name")
        if name is None or len(name.children) != 1:
            return _text(name, self.source)
        return _literal_word(name.children[0], self.source) or _text(name, self.source)

    def _check_program_name(self, command: Node, start: Node, label: str) -> str:
        name = command.child_by_field_name("name")
        text = _literal_word(name.children[0], self.source) if name is not None and len(name.children) == 1 else None
        if text is None or not _LITERAL_PROGRAM.match(text):
            shown = _text(name, self.source) if name is not None else "a command"
            raise self._refuse(start, label, f"is an argument of {shown!r}, whose program is not a "
                               "literal name", "name the program literally")
        base = text.rsplit("/", 1)[-1]
        if base in self.functions:
            raise self._refuse(start, label, f"is an argument of the function {base!r} defined in this command, "
                               "which may use it in any way", "pass the value directly to the command inside "
                               "the function")
        return base

    def _check_program(self, command: Node, argument: Node, start: Node, label: str,
                       spec: SlotSpec | None) -> None:
        base = self._check_program_name(command, start, label)
        marked = spec is not None and spec.runs_as_code
        words = [_bare(a, self.source) for a in _field_children(command, "argument")]
        if base in BASH_BUILTINS and base not in SAFE_BUILTINS and not (marked and base in ("eval", "source", ".")):
            raise self._refuse(start, label, f"is an argument of the bash builtin {base!r}, which reads names "
                               "or runs code", "pass the value to a program that takes it as data")
        if base in ("printf", "test", "[") and any(w in _NAME_OPTIONS or (base == "printf" and w.startswith("-v"))
                                                  for w in words):  # printf -vNAME too
            raise self._refuse(start, label, f"is an argument of {base} with -v, which writes or reads a variable "
                               "by name", f"use {base} without -v")
        if marked:
            return
        if base in WRAPPERS:
            raise self._refuse(start, label, f"is an argument of {base!r}, which runs its arguments as a command",
                               "call the program directly, or mark the argument x-mcs-runsAsCode: true in its "
                               "templateVariables entry if running it as code is intended")
        if base in COMMAND_LANGUAGES:
            raise self._refuse(start, label, f"is an argument of {base!r}, which reads its arguments and standard "
                               "input as commands that can reach the shell", "pass the value to a program that "
                               "takes it as data, or mark the argument x-mcs-runsAsCode: true")
        args = _field_children(command, "argument")
        before = words[: args.index(argument)] if argument in args else words
        glued = self._word_prefix(argument)
        if glued.startswith("-") and not (glued.startswith("--") and "=" in glued) and "--" not in before:
            raise self._refuse(start, label, f"continues the option word {glued!r} of {base}, so a value would "
                               "choose the program's options (some run a command: git grep -O, git clone "
                               "--upload-pack)", f"pass it as its own word after the option ({glued} {{x}}) or "
                               "as --option={x}, or mark the argument x-mcs-runsAsCode: true")
        option = self._command_option(command, argument, base)
        if option is not None:
            raise self._refuse(start, label, f"is the value of {base} {option}, which names a command (or configuration "
                               f"that runs one) for {base} to run",
                               f"write the {option} value literally, or mark the argument x-mcs-runsAsCode: true")
        if base == "find" and _FIND_EXEC & set(words):
            raise self._refuse(start, label, "is an argument of find with -exec, which runs commands",
                               "drop -exec, or mark the argument x-mcs-runsAsCode: true")
        # The subcommand is any word before the value, not only the first: global options
        # come first ("kubectl -n ns exec pod -- {x}", "docker --context c run image {x}").
        remote = REMOTE_RUNNERS.get(base, frozenset())
        subcommand = next((w for w in before if w in remote), None)
        if subcommand is not None and (base in ("docker", "podman", "nerdctl")
                                       or "--" in before[before.index(subcommand):]):
            raise self._refuse(start, label, f"is part of the command '{base} {subcommand}' runs in a container",
                               "mark the argument x-mcs-runsAsCode: true if that is intended")
        runner, rest = base, before
        if base.startswith(("python", "pypy")) and "-m" in before[:-1]:  # python3 -m pip install {x}
            at = before.index("-m")
            runner, rest = before[at + 1], before[at + 2:]
        if runner in PACKAGE_RUNNERS:
            runs = PACKAGE_RUNNERS[runner]
            subcommand = runner if runs is None else next((w for w in rest if w in runs), None)
            if subcommand is not None:
                shown = runner if runs is None else f"{runner} {subcommand}"
                raise self._refuse(start, label, f"is an argument of '{shown}', which installs or runs the package "
                                   "a value names", "name the package literally, or mark the argument "
                                   "x-mcs-runsAsCode: true")
        if (base in SHELLS or base in INTERPRETERS) and not self._after_program_file(command, argument, base):
            raise self._refuse(start, label, f"is an argument of {base!r} where it runs code (inline code "
                                   "such as -c or -e, or the program file itself)", "pass it after a literal "
                                   "script file, or mark it x-mcs-runsAsCode: true")
        self._check_listed(command, argument, start, label, spec, "an argument of")

    def _check_listed(self, command: Node, argument: Node | None, start: Node, label: str,
                      spec: SlotSpec | None, role: str) -> None:
        """Refuse unless ``command``'s program is on the allow-list (:data:`DATA_PROGRAMS`, and
        for git one of :data:`GIT_DATA_SUBCOMMANDS`) or trusted by the operator. ``argument``
        is the word holding the value, ``None`` when the program reads it on its input."""
        if spec is not None and spec.runs_as_code:
            return
        name = self._program(command)
        if name in self.trusted:
            return
        base = _listed_name(name)
        if role != "an argument of" and base in _READERS:
            return  # read, mapfile: the variables they fill are followed
        if base not in DATA_PROGRAMS:
            raise self._refuse(start, label, f"is {role} {name!r}, which is not on the list of programs proven "
                               "to keep their arguments and input as data", _ways_out(name))
        if base != "git":
            return
        args = _field_children(command, "argument")
        subcommand, at = _git_subcommand([_bare(a, self.source) for a in args])
        own = args.index(argument) if argument is not None and argument in args else len(args)
        if at is not None and own == at:
            raise self._refuse(start, label, "is git's subcommand, so a value would choose what git does "
                               "(git config, git submodule foreach...)", "name the subcommand literally "
                               "(a templateVariables format such as {format: clone} is literal)")
        if (at is None or own < at) and argument is not None:
            return  # a global option's value: GIT_COMMAND_OPTIONS[""] was checked
        if subcommand not in GIT_DATA_SUBCOMMANDS:
            shown = f"git {subcommand}" if at is not None else "git"
            raise self._refuse(start, label, f"is {role} {shown!r}, a git subcommand not on the list of those "
                               "proven to keep their arguments and input as data", _ways_out("git"))

    def _command_option(self, command: Node, argument: Node, base: str) -> str | None:
        """The option of :data:`COMMAND_OPTIONS` (or :data:`GIT_COMMAND_OPTIONS`) whose value
        ``argument`` is, if any: after it (``-I {x}``, ``-xI {x}``), glued to it (``-I{x}``,
        ``--to-command={x}``), or after a prefix getopt_long and git accept for it
        (``--compress {x}`` for ``--compress-program``)."""
        args = _field_children(command, "argument")
        if argument not in args:
            return None
        index = args.index(argument)
        options = COMMAND_OPTIONS.get(base, ())
        if base == "git":
            words = [_bare(a, self.source) for a in args]
            _, at = _git_subcommand(words)
            options = GIT_COMMAND_OPTIONS.get(words[at] if at is not None and at < index else "", ())
        if not options:
            return None
        own = self._word_prefix(argument)
        previous = _bare(args[index - 1], self.source) if index else ""
        for option in options:
            if option.startswith("--"):
                name = option[2:]
                if previous.startswith("--") and "=" not in previous and name.startswith(previous[2:] or "-"):
                    return option
                if own.startswith("--") and "=" in own and name.startswith(own[2:].split("=", 1)[0] or "-"):
                    return option
            elif len(option) == 2:  # a short option, maybe last in a cluster (-xvI {x}) or glued (-xI{x})
                if _cluster(previous) and previous.endswith(option[1]):
                    return option
                if _cluster(own) and option[1] in own[1:]:
                    return option
            elif previous == option or own.startswith(option):  # zip's -TT
                return option
        return None

    def _word_prefix(self, argument: Node) -> str:
        """What precedes the (last) value in its word, quotes removed and other values and
        expansions taken as empty (``{a}-I{b}`` with a="", ``"$X"-I{x}`` with X unset): ``-I``
        for ``-I{x}``, ``--to=`` for ``--to={x}``."""
        word = self.source[argument.start_byte:argument.end_byte]
        cut = max((m.start() for m in SENTINEL_WORD.finditer(word)), default=word.find(b"$"))
        before = self._unexpanded(argument, argument.start_byte, argument.start_byte + max(cut, 0))
        return SENTINEL_WORD.sub(b"", before).decode(errors="replace").translate(_QUOTES)

    def _after_program_file(self, command: Node, argument: Node, base: str) -> bool:
        """True if ``argument`` comes after a literal program (file, module or text)."""
        args = _field_children(command, "argument")
        if argument not in args:
            return False
        values = PROGRAM_OPTIONS.get(base, _Options()).long_values
        own_index = args.index(argument)
        if any(values.get(_bare(args[i], self.source), 0) >= own_index - i for i in range(max(0, own_index - 2), own_index)):
            return True  # the value of an option that takes data (jq --arg name {x})
        index = self._program_file(command, base)
        if index is None or index >= own_index:
            return False
        if base in _PERMUTING:  # GNU getopt reads options after operands too: "sed 's/a/b/' -e {x}"
            rules = PROGRAM_OPTIONS[base]
            own = _bare(argument, self.source)
            previous = _bare(args[args.index(argument) - 1], self.source)
            if own.startswith(("-", *rules.program_long)) or previous.startswith(rules.program_long):
                return False
            if previous[:1] == "-" and previous[-1:] in rules.takes_value | rules.names_program:
                return False
        return True

    def _program_file(self, command: Node, base: str) -> int | None:
        """The index of the literal program a shell or interpreter runs (a file, a module,
        or awk's and sed's program text), or ``None`` when it runs inline code (``-c``,
        ``-e``...), reads its program from standard input, or a value comes first."""
        rules = PROGRAM_OPTIONS.get(base, _Options())
        args = _field_children(command, "argument")
        skip = data = 0
        for index, arg in enumerate(args):
            text = _bare(arg, self.source)
            if data:  # a value of jq's --arg name value: data, whatever it holds
                data -= 1
                continue
            if SENTINEL_WORD.search(arg.text or b"") or text == "-":
                return None
            if skip:
                skip -= 1
                continue
            if text in rules.long_values:
                data = rules.long_values[text]
                continue
            if text in rules.subcommands and index == 0:
                continue
            if text == "--":
                return index + 1 if index + 1 < len(args) and _literal_word(args[index + 1], self.source) else None
            if text.startswith("--"):
                if text.startswith(rules.inline_long):
                    return None
                if text.startswith(rules.program_long):
                    return index if "=" in text else index + 1
                continue
            if text[:1] in "-+" and len(text) > 1:
                for position, letter in enumerate(text[1:], start=1):
                    if letter in rules.inline:
                        return None
                    if letter in rules.names_program:
                        return index if position < len(text) - 1 else index + 1
                    if letter in rules.takes_value:
                        skip = int(position == len(text) - 1)
                        break
                continue
            return index if _literal_word(arg, self.source) is not None else None
        return None

    def _reads_code(self, command: Node, spec: SlotSpec | None) -> bool:
        """Whether ``command`` runs what it reads on standard input as code."""
        if spec is not None and spec.runs_as_code:
            return False
        name = command.child_by_field_name("name")
        if name is None or len(name.children) != 1 or _literal_word(name.children[0], self.source) is None:
            return True  # "| $SHELL": a program chosen at run time may be anything
        base = self._program(command).rsplit("/", 1)[-1]
        if base in WRAPPERS or base in _SAME_SHELL_CODE or base in ("exec", "command", "builtin", "coproc"):
            return True
        if base in self.functions or base in COMMAND_LANGUAGES:
            return True
        if base in SHELLS or base in INTERPRETERS:
            index = self._program_file(command, base)
            if index is None:
                return PROGRAM_OPTIONS.get(base, _Options()).input_is_code
            # a program file in /dev or /proc may be the input itself (jq -f /dev/stdin, bash /dev/fd/0)
            program = self._program_text(_field_children(command, "argument")[index], base)
            return (not program or program.startswith(_INPUT_VIEWS)
                    or ".." in program.split("/") or program in ("/dev", "/proc"))
        return False

    def _program_text(self, word: Node, base: str) -> str:
        """The program file ``word`` names for ``base`` (see :meth:`_program_file`): the word, the
        value of ``--from-file=...``, or what follows the letter that names the program in a
        cluster (``-nf/dev/stdin``); ``""`` if it is not literal text."""
        text = _literal_word(word, self.source) or ""
        rules = PROGRAM_OPTIONS.get(base, _Options())
        if text.startswith("--") and "=" in text:
            return text.split("=", 1)[1]
        if text[:1] in "-+" and len(text) > 1 and not text.startswith("--"):
            for position, letter in enumerate(text[1:], start=1):
                if letter in rules.names_program:
                    return text[position + 1:]
        return text

    def _check_enclosure(self, node: Node, label: str, spec: SlotSpec | None) -> None:
        """What happens to a value after the command that takes it: later pipeline stages
        must not run their input as code, and a ``$(...)`` holding it is itself a value."""
        child = node
        for parent in _ancestors(node):
            if parent.type == "pipeline":
                stages = list(parent.named_children)
                later = stages[stages.index(child) + 1:] if child in stages else []
                for stage in later:
                    for command in [stage, *_walk(stage)]:
                        self._reads_into(command, label, node)
                        if command.type == "command" and self._reads_code(command, spec):
                            raise self._refuse(node, label, f"flows through a pipe into {self._program(command)}, "
                                               "which runs its input as code", "pipe it into a program that "
                                               "reads data, or mark the argument x-mcs-runsAsCode: true")
                        if command.type == "command":
                            self._check_listed(command, None, node, label, spec, "piped into")
            if parent.type in ("command_substitution", "process_substitution"):
                self._position(parent, label, origin="substitution", spec=spec)
                return
            child = parent

    # ------------------------------------------------------------------ variables

    def _whole(self, value: Node, start: Node, origin: str) -> dict[str, Any]:
        """How a variable assigned ``value`` (a word holding the value at ``start``) holds it:
        ``direct`` when the word is that value alone (quotes aside), with its slot, or the
        variable it copies (``"$w"``), whose own assignments decide."""
        first = _literal_start(value, self.source)
        if first and not first.startswith("-"):
            return {"direct": True}  # literal text first that is not a '-': never an option
        whole = self.source[value.start_byte:value.end_byte].replace(b'"', b"")
        own = self.source[start.start_byte:start.end_byte]
        if origin == "slot":
            match = SENTINEL_WORD.fullmatch(whole)
            return {"direct": True, "slots": {int(match.group(1))}} if match else {}
        if whole != own:
            return {}
        names = [n for n in start.children if n.type == "variable_name"]
        if origin == "expansion" and len(names) == 1:
            return {"direct": True, "copies": {_text(names[0], self.source)}}
        return {}

    def _taint(self, name_node: Node | None, label: str, start: Node, *, direct: bool = False,
               slots: set[int] | None = None, copies: set[str] | None = None) -> None:
        if name_node is None:
            raise self._refuse(start, label, "is assigned to a variable this parser cannot name", "assign it "
                               "plainly: name=\"{x}\"")
        name = _text(name_node, self.source)
        if not _IDENTIFIER.match(name) or name in BASH_VARIABLES or name.upper().startswith(("BASH", "__MCS")):
            raise self._refuse(start, label, f"is assigned to {name!r}, a variable bash itself reads",
                               "assign it to a variable of your own (ns=\"{x}\")")
        if name in os.environ or name.startswith("GIT_"):
            # exported: assigning it changes the environment of every later program (git reads the
            # GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n MCS sets, such as core.fsmonitor, as configuration)
            raise self._refuse(start, label, f"is assigned to {name!r}, a variable of the environment the "
                               "programs of the command get (git reads GIT_* variables as configuration)",
                               "assign it to a variable of your own that the environment does not hold (ns=\"{x}\")")
        taint = self.tainted.setdefault(name, _Taint(label, start.start_point[0] + 1, direct=direct))
        taint.direct = taint.direct and direct
        taint.slots |= slots or set()
        taint.copies |= copies or set()

    def _reads_into(self, command: Node, label: str, start: Node) -> None:
        """``read``, ``mapfile`` and ``readarray`` put what they read (a value) in variables:
        those are followed like ``ns="{x}"``."""
        if command.type != "command":
            return
        base = self._program(command).rsplit("/", 1)[-1]
        valued = _READS_INTO.get(base)
        if valued is None:
            return
        names: list[Node] = []
        args = _field_children(command, "argument")
        skip = False
        for index, arg in enumerate(args):
            text = _bare(arg, self.source)
            if skip:
                skip = False
                continue
            if text.startswith("-") and len(text) > 1 and text != "--":
                letters = text[1:]
                for position, letter in enumerate(letters):
                    if letter in valued:
                        last = position == len(letters) - 1
                        skip = last
                        if letter == "a" and base == "read" and last and index + 1 < len(args):
                            names.append(args[index + 1])  # read -a NAME: an array of the words read
                        break
                continue
            if text != "--":
                names.append(arg)
        if not names:  # read's REPLY, mapfile's MAPFILE: bash's own names, holding the value
            self.tainted.setdefault("REPLY" if base == "read" else "MAPFILE", _Taint(label, start.start_point[0] + 1))
        for name in names:
            self._taint(name, label, start)
            self.read_targets.add(name.start_byte)

    def _follow_variables(self) -> None:
        """Every use of a variable holding a value must itself be a safe position."""
        if not self.tainted:
            return
        assert self.root is not None
        for node in _walk(self.root):
            if node.type == "command":
                base = self._program(node).rsplit("/", 1)[-1]
                if base in _SAME_SHELL_CODE or (base == "set" and _sets_allexport(node, self.source)):
                    name, taint = next(iter(self.tainted.items()))
                    raise self._refuse(node, taint.label, f"is held in ${name}, and this command also runs "
                                       f"{base!r}, which could evaluate it", "pass the value directly to the "
                                       "command that uses it")
        for node in _walk(self.root):
            if (node.type == "word" and re.split(r"[\[=]", _text(node, self.source))[0] in self.tainted
                    and node.start_byte not in self.read_targets):
                self._named(node)
        checked: set[int] = set()
        while True:
            pending = [n for n in _walk(self.root) if n.type == "variable_name"
                       and _text(n, self.source) in self.tainted and n.start_byte not in checked]
            if not pending:
                break
            for node in pending:
                checked.add(node.start_byte)
                self._use(node)
        for name, expansion, argument in self.word_starts:
            direct, slots = self._held_whole(name, set())
            if not direct and not self._options_harmless(argument):
                taint = self.tainted[name]
                raise self._refuse(expansion, f"${name} (which holds {taint.label})", "starts an argument word with "
                                   "no '--' before it, and the variable holds more than the value alone (text "
                                   "around it, a substitution, what read or mapfile took in), so MCS cannot check "
                                   "at the call that it does not start with '-' (an option: git grep -O runs its "
                                   "value)", "write -- before it, or pass the placeholder itself there")
            self.starts_through_variables |= slots

    def _options_harmless(self, argument: Node) -> bool:
        """Whether a word starting with '-' at ``argument`` cannot choose an option that matters:
        an operand of ``echo`` (its options only change how it prints), of ``printf`` after its
        format (read as data), or of a program the operator trusts (who vouches for what it does
        with its arguments)."""
        command = argument.parent
        if command is None or command.type != "command":
            return False
        name = self._program(command)
        base = _listed_name(name)
        if name in self.trusted and base not in DATA_PROGRAMS:
            return True
        if base == "echo":
            return True
        words = [_bare(a, self.source) for a in _field_children(command, "argument")]
        own = _field_children(command, "argument").index(argument)
        if base == "printf":
            first = next((i for i, w in enumerate(words) if not w.startswith("-") or w == "-"), None)
            if words[:1] == ["--"]:
                first = 1
            return first is not None and first < own
        return False

    def _held_whole(self, name: str, seen: set[str]) -> tuple[bool, set[int]]:
        """Whether every assignment of ``name`` (and of each variable it copies) is one value
        alone, and the slots of those values."""
        taint = self.tainted.get(name)
        if taint is None or not taint.direct:
            return False, set()
        seen.add(name)
        slots = set(taint.slots)
        for copied in taint.copies - seen:
            direct, more = self._held_whole(copied, seen)
            if not direct:
                return False, set()
            slots |= more
        return True, slots

    def _refuse_internal_names(self) -> None:
        """In a command that takes a model's values, refuse what reaches a value past the
        placeholders: ``$_`` (the last argument of the previous command) and the names MCS
        keeps the values in (``declare -n r=__MCS_ARGS``)."""
        assert self.root is not None
        label = next((spec.label for spec in self.slots.values() if not spec.trusted), None)
        if label is None:
            return
        for node in _walk(self.root):
            if node.type == "special_variable_name" and _text(node, self.source) == "_":
                raise self._refuse(node, label, "may be what $_ holds (the last argument of the command before), "
                                   "which MCS cannot follow", f"write {label} again where $_ stands")
            if b"__MCS_" in self.source[node.start_byte:node.end_byte] and not node.children:
                raise self._refuse(node, label, "may be reached through __MCS_..., the names MCS keeps the values "
                                   "in", "reach the value only through its placeholder")

    def _named(self, word: Node) -> None:
        """A word spelling a variable that holds a value: harmless as text for most
        programs, but name-taking builtins (declare -n, read, test -v...) would evaluate it."""
        name = re.split(r"[\[=]", _text(word, self.source))[0]
        for parent in _ancestors(word):
            kind = parent.type
            if kind in ("declaration_command", "unset_command", "test_command"):
                break
            if kind == "command":
                base = self._program(parent).rsplit("/", 1)[-1]
                if base in BASH_BUILTINS and base not in ("echo", "cd", "pwd", "true", "false", ":", "kill"):
                    break
                return
        else:
            return
        raise self._refuse(word, f"${name} (which holds {self.tainted[name].label})", "is named where bash "
                           "evaluates it or reads it as a name (arithmetic, [[ ]], a subscript, ${...} operators, "
                           "declare, read, unset...)", f"use it only as \"${name}\" in a command's arguments")

    def _use(self, node: Node) -> None:
        name = _text(node, self.source)
        label = f"${name} (which holds {self.tainted[name].label})"
        parent = node.parent
        if parent is None:
            raise self._refuse(node, label, "is not used in any command", "use it as \"$" + name + "\"")
        kind = parent.type
        if kind == "variable_assignment" and node == parent.child_by_field_name("name"):
            holder = parent.parent
            if holder is not None and holder.type in ("command", "declaration_command"):
                raise self._refuse(node, label, "is assigned in front of a command or by declare",
                                   "keep it a plain variable")
            return
        if kind == "for_statement" and node == parent.child_by_field_name("variable"):
            return
        if kind == "simple_expansion" or (kind == "expansion" and [c.type for c in parent.children] == ["${", "variable_name", "}"]):
            position = self._position(parent, label, origin="expansion", spec=None)
            if (position.argument is not None and not position.after_double_dash
                    and self._starts_word(position.argument, parent.start_byte)):
                self.word_starts.append((name, parent, position.argument))
            return
        raise self._refuse(node, label, "is used where bash evaluates it or reads it as a name (arithmetic, "
                           "[[ ]], a subscript, ${...} operators, declare, read, unset...)",
                           "use it only as \"$" + name + "\" in a command's arguments")

    # ------------------------------------------------------------------ errors

    def _refuse(self, node: Node, label: str, what: str, advice: str) -> Refused:
        return Refused(f"{self._where(node)}: {label} {what}; {advice}")

    def _where(self, node: Node) -> str:
        """``line N ('the line')``, each placeholder shown as the file wrote it."""
        line = node.start_point[0] + 1
        lines = self.script.splitlines()
        excerpt = self._shown(lines[min(line, len(lines)) - 1].strip() if lines else "")
        return f"line {line} ({excerpt[:80]!r})"

    def _shown(self, text: str) -> str:
        return shown(text, self.slots)


@dataclass(frozen=True, slots=True)
class _Position:
    argument: Node | None = None
    after_double_dash: bool = False
    arithmetic: bool = False


_QUOTES = str.maketrans("", "", "\"'$\\")


def shown(text: str, slots: Mapping[int, SlotSpec]) -> str:
    """``text`` with each sentinel word replaced by its placeholder as the file wrote it."""
    return SENTINEL_WORD.sub(lambda m: (slots.get(int(m.group(1))) or SlotSpec("{?}")).label.encode(),
                             text.encode()).decode()


def _value_is_indirect(arg: Node, analysis: _Analysis) -> bool:
    """Whether a value reaches ``arg`` other than as a placeholder written in it: a
    variable holding one, or a ``$(...)``/``<(...)`` substitution."""
    for node in _walk(arg):
        if node.type in ("command_substitution", "process_substitution"):
            return True
        if node.type == "variable_name" and _text(node, analysis.source) in analysis.tainted:
            return True
    return False


def _literal_start(word: Node, source: bytes) -> str:
    """The literal text a word starts with before any expansion or value, quotes removed
    (``x`` for ``x{a}`` and ``"x$v"``; empty for ``{a}x``, ``"$v"`` and ``$(...)``)."""
    out = ""
    for node in [word, *_walk(word)]:
        if node.type in _EXPANSIONS:
            break
        if node.type in ("word", "string_content") and not node.children:
            text = _text(node, source)
            cut = SENTINEL_WORD.search(text.encode())
            text = text[: cut.start()] if cut else text
            out += re.split(r"[$\\`*?\[{~]", text)[0]
            if out != "" or cut:
                break
    return out


def _bare(node: Node, source: bytes) -> str:
    """A word as the program receives it, near enough to compare with option names: bash
    removes quotes and backslashes, so ``"-c"``, ``'-v'``, ``-\\v`` and ``-"e"`` are options."""
    literal = _literal_word(node, source)
    return literal if literal is not None else _text(node, source).translate(_QUOTES)


def _cluster(word: str) -> bool:
    """A word of short options (``-xvI``), as getopt reads it."""
    return len(word) > 1 and word[0] == "-" and word[1] != "-"


def _listed_name(name: str) -> str | None:
    """The name to look up in the lists for a program written ``name``: itself, or its base
    name under a system directory (``/usr/bin/git``); ``None`` for any other path."""
    base = name.rsplit("/", 1)[-1]
    return base if name == base or name[: len(name) - len(base)] in _SYSTEM_DIRS else None


def _ways_out(name: str, condition: str | None = None) -> str:
    return (f"if {condition or f'{name} takes this value as data'}, the operator can trust it with the driver option "
            f"cli_trusted_programs (in Python cli_trusted_programs=[{name!r}], on the command line "
            f"-o cli_trusted_programs={name}), or the file can mark the argument x-mcs-runsAsCode: true "
            "in its templateVariables entry")


def _git_subcommand(words: list[str]) -> tuple[str, int | None]:
    """git's subcommand among ``words`` (its arguments) and its index: the first word that
    is neither a global option nor the value of one."""
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word in _GIT_VALUED:
            skip = True
            continue
        if not word.startswith("-"):
            return word, index
    return "", None


# --------------------------------------------------------------------------- tree helpers


def _text(node: Node | None, source: bytes) -> str:
    if node is None:
        return ""
    return source[node.start_byte:node.end_byte].decode(errors="replace")


def _literal_word(node: Node, source: bytes) -> str | None:
    """The text of a word bash reads literally (plain, '...' or "..." without expansions)."""
    text = _text(node, source)
    if node.type == "word":
        return None if any(c in text for c in "\\$`*?[{~") else text
    if node.type == "raw_string":
        return text[1:-1]
    if node.type == "string" and all(c.type in ('"', "string_content") for c in node.children):
        inner = text[1:-1]
        return None if any(c in inner for c in "\\$`") else inner
    return None


def _walk(node: Node) -> Iterator[Node]:
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _ancestors(node: Node, *, inclusive: bool = False) -> Iterator[Node]:
    current = node if inclusive else node.parent
    while current is not None:
        yield current
        current = current.parent


def _field_children(node: Node, name: str) -> list[Node]:
    return list(node.children_by_field_name(name))


def _first_token(node: Node) -> str:
    return node.children[0].type if node.children else ""


def _plain_glob(word: Node, source: bytes) -> bool:
    """Whether ``word`` is an unquoted pathname pattern and nothing else bash expands
    (``*.txt``, ``logs/?/a[0-9]``): no quotes, variables, substitutions, ``~``, braces or escapes."""
    text = _text(word, source)
    return (word.type == "word" and any(c in text for c in "*?[")
            and not any(c in text for c in "\\$`{}'\"") and not text.startswith("~"))


def _test_words(test: Node) -> list[Node]:
    """The words of a ``[ ... ]`` test in order, operators and operands alike (the parser's
    nesting of them is not bash's precedence, so only their order is used)."""
    inner = test.children[1:-1]  # without "[" and "]"
    out: list[Node] = []
    for node in _walk(test):
        parent = node.parent
        if node.type in _ARITH_EXPRESSIONS or parent is None:
            continue
        if (parent == test and node in inner) or parent.type in _ARITH_EXPRESSIONS:
            out.append(node)
    return sorted(out, key=lambda n: n.start_byte)


def _in_arithmetic(node: Node) -> bool:
    for parent in _ancestors(node, inclusive=True):
        kind = parent.type
        if kind == "arithmetic_expansion" or kind == "c_style_for_statement":
            return True
        if kind == "compound_statement":
            return _first_token(parent) == "(("
        if kind == "test_command":
            return False
        if kind not in _ARITH_EXPRESSIONS:
            return False
    return False


def _enclosing_test(node: Node) -> Node | None:
    for parent in _ancestors(node, inclusive=True):
        if parent.type == "test_command":
            return parent
        if parent.type not in _ARITH_EXPRESSIONS:
            return None
    return None


def _quoting(leaf: Node, source: bytes) -> Literal["word", "dq", "sq", "ansi", "heredoc", "heredoc_literal"]:
    kind = leaf.type
    if kind == "raw_string":
        return "sq"
    if kind == "ansi_c_string":
        return "ansi"
    if kind in ("string_content", "string"):
        return "dq"
    if kind in ("heredoc_body", "heredoc_content"):
        redirect = next((a for a in _ancestors(leaf) if a.type == "heredoc_redirect"), None)
        start = next((c for c in redirect.children if c.type == "heredoc_start"), None) if redirect else None
        delimiter = _text(start, source)
        return "heredoc_literal" if any(q in delimiter for q in "'\"\\") else "heredoc"
    return "word"


def _sets_allexport(command: Node, source: bytes) -> bool:
    words = [_bare(a, source) for a in _field_children(command, "argument")]
    return any(w.startswith("-") and not w.startswith("--") and "a" in w for w in words) or "allexport" in words


def _refuse_parse_errors(root: Node, source: bytes) -> None:
    if not root.has_error:
        return
    bad = next((n for n in _walk(root) if n.type == "ERROR" or n.is_missing), root)
    line = bad.start_point[0] + 1
    lines = source.decode(errors="replace").splitlines()
    excerpt = lines[min(line, len(lines)) - 1].strip() if lines else ""
    excerpt = SENTINEL_WORD.sub(b"{...}", excerpt.encode()).decode()
    raise ConfigurationError(f"line {line} ({excerpt[:80]!r}) is not valid bash: a quote, bracket or keyword "
                             "is missing or out of place")


def _refuse_words_after_redirects(root: Node, source: bytes) -> None:
    """Refuse a word written after a redirection and before the end of its command (``cat <
    notes.txt {path}``, ``rm > /dev/null -- {path}``, ``cat <<EOF {path}``): bash passes it to
    the program as an argument, but tree-sitter-bash reads it as another target of the
    redirection (or an argument of the here-document), so nothing MCS checks for a program's
    arguments would see it.

    Raises:
        ConfigurationError: naming the line and the way to write it.
    """
    for node in _walk(root):
        if node.type == "file_redirect":
            misread = node.children_by_field_name("destination")[1:]
        elif node.type == "heredoc_redirect":
            misread = node.children_by_field_name("argument")
        else:
            continue
        if not misread:
            continue
        line = node.start_point[0] + 1
        lines = source.decode(errors="replace").splitlines()
        excerpt = SENTINEL_WORD.sub(b"{...}", lines[line - 1].strip().encode()).decode() if lines else ""
        raise ConfigurationError(f"line {line} ({excerpt[:80]!r}): a word follows a redirection in its command "
                                 f"({SENTINEL_WORD.sub(b'{...}', misread[0].text or b'').decode(errors='replace')[:40]!r}); bash passes it to the program, but the "
                                 "parser MCS checks commands with reads it as part of the redirection; write the "
                                 "redirections after the arguments (cat -- {file} < notes.txt > out.txt)")
