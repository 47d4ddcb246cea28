"""A git repository a value names goes through the egress policy (SECURITY.md B3-B5).

``git clone {repoUrl}`` (the gen-mcp corpus has it) let the model choose what git contacts:
a metadata address, loopback in any spelling, a private network, a local path, ssh, git://,
a transport helper. Here the value must be an http(s) URL the driver's egress policy allows;
git then runs pinned to the checked address, follows no redirect and reaches no other
transport (a submodule cannot go elsewhere). Real peers: a recording TCP listener, a git
repository served over dumb HTTP on loopback, and the real git.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcpfile_support import git_repository_with_a_change, mcp_file, tool

from mcs.errors import ConfigurationError, ExecutionError, InvalidInputError, PolicyDeniedError
from mcs.urls import EgressPolicy

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

STRING = {"type": "string"}


class Listener:
    """A TCP listener that records every connection (and the first bytes sent on it)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.sock = socket.socket()
        self.sock.bind((host, port))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    self.received.append(conn.recv(4096))
                except OSError:
                    self.received.append(b"")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() of the thread
        self._thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def run_git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main",
                    *args], cwd=cwd, check=True, capture_output=True)


def bare_repository(folder: Path, name: str = "r.git", *, files: dict[str, str] | None = None,
                    submodule: str | None = None) -> Path:
    """A bare repository holding ``files`` (and a submodule entry pointing at ``submodule``),
    prepared to be served over git's dumb HTTP protocol."""
    work = folder / f"{name}-work"
    run_git("init", "-q", str(work))
    for path, text in (files or {"README": "hello from the served repository\n"}).items():
        (work / path).write_text(text)
    run_git("add", ".", cwd=work)
    if submodule is not None:
        (work / ".gitmodules").write_text(f'[submodule "sub"]\n\tpath = sub\n\turl = {submodule}\n')
        run_git("add", ".gitmodules", cwd=work)
        run_git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},sub", cwd=work)
    run_git("commit", "-q", "-m", "first", cwd=work)
    bare = folder / name
    run_git("clone", "-q", "--bare", str(work), str(bare))
    run_git("update-server-info", cwd=bare)
    return bare


class IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


@contextmanager
def serving(root: Path, *, redirect_to: str | None = None, host: str = "127.0.0.1",
            port: int = 0) -> Iterator[tuple[int, list[str]]]:
    """Serve ``root`` over HTTP on ``host`` (git's dumb protocol needs only files); yields
    the port and the list of ``Host`` and path of each request. ``redirect_to``: answer every
    request with 302 to that base URL instead."""
    seen: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            seen.append(f"{self.headers.get('Host')} {self.path}")
            if redirect_to is not None:
                self.send_response(302)
                self.send_header("Location", redirect_to + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            super().do_GET()

    server_class = IPv6Server if ":" in host else ThreadingHTTPServer
    server = server_class((host, port), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def git_driver(new_driver, write_file, tmp_path: Path) -> Callable[..., Any]:
    """A driver with one CLI tool ``t`` running ``command`` in ``tmp_path / 'work'``."""
    work = tmp_path / "work"
    work.mkdir()

    def build(command: str, properties: dict[str, Any] | None = None, **options: Any) -> Any:
        invocation = {"cli": {"command": command}}
        return new_driver(write_file(mcp_file(tool("t", invocation, properties or {"x": STRING}))),
                          cli_cwd=work, **options)

    return build


# ----------------------------------------------------------------------------- refused, nothing runs


def refused_values(port: int, local: Path) -> list[str]:
    return [
        "http://169.254.169.254/latest/meta-data/",
        f"http://127.0.0.1:{port}/r.git",
        f"http://127.1:{port}/r.git",
        f"http://2130706433:{port}/r.git",
        f"http://0x7f.1:{port}/r.git",
        f"http://[::1]:{port}/r.git",
        f"http://[::ffff:127.0.0.1]:{port}/r.git",
        "http://10.0.0.5/r.git",
        "http://100.64.0.1/r.git",
        f"http://user@evil@127.0.0.1:{port}/r.git",
        f"https://localhost:{port}/r.git",
        "http://metadata.google.internal/r.git",
        f"file://{local}",
        str(local),
        "../" + local.name,
        f"ssh://127.0.0.1:{port}/r.git",
        f"git://127.0.0.1:{port}/r.git",
        f"127.0.0.1:{local}",
        f"git@127.0.0.1:{local}",
        "ext::sh -c touch% MARKER",
        "fd::0",
        "origin",
        f"http::http://127.0.0.1:{port}/r.git",
        f"HTTP://127.0.0.1:{port}/r.git",
    ]


def test_a_repository_the_model_chooses_outside_the_egress_policy_is_refused_before_git_runs(
    git_driver, listener: Listener, tmp_path: Path
) -> None:
    local = bare_repository(tmp_path)
    driver = git_driver("git clone {x} out")
    work = tmp_path / "work"
    for value in refused_values(listener.port, local):
        with pytest.raises(PolicyDeniedError) as error:
            driver.call_tool("t", {"x": value})
        assert "egress policy" in error.value.message and "egress_allow" in error.value.message, value
        assert not (work / "out").exists(), value  # git never ran
    assert listener.received == []
    assert not (work / "MARKER").exists()


def test_a_value_in_the_host_part_of_a_repository_url_is_checked_as_the_whole_url(
    git_driver, listener: Listener
) -> None:
    driver = git_driver('git clone "http://{x}/r.git" out')
    for host in (f"127.0.0.1:{listener.port}", f"127.1:{listener.port}", "169.254.169.254"):
        with pytest.raises(PolicyDeniedError):
            driver.call_tool("t", {"x": host})
    assert listener.received == []


def test_the_corpus_clone_tool_checks_its_repository_url(corpus: Path, new_driver, listener: Listener,
                                                         tmp_path: Path) -> None:
    driver = new_driver(corpus / "testdata" / "pkg__mcpfile__testdata__one-server-cli-tools.yaml", cli_cwd=tmp_path)
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("clone_repo", {"repoUrl": f"http://127.0.0.1:{listener.port}/r.git", "depth": 1})
    assert listener.received == []


def test_when_the_first_operand_is_absent_the_next_one_is_the_repository_and_is_checked(
    git_driver, listener: Listener, tmp_path: Path
) -> None:
    local = bare_repository(tmp_path)
    driver = git_driver("git clone {x} {y}", {"x": STRING, "y": STRING})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"y": str(local)})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"y": f"http://127.0.0.1:{listener.port}/r.git"})
    assert listener.received == []
    assert not any((tmp_path / "work").iterdir())


@pytest.mark.parametrize("command", ["git fetch --multiple origin {x}", "git fetch -vm origin {x}",
                                     "git fetch --mult origin {x}"])
def test_with_fetch_multiple_every_operand_is_a_repository(git_driver, tmp_path: Path, command: str) -> None:
    local = bare_repository(tmp_path)
    with pytest.raises(PolicyDeniedError):
        git_driver(command).call_tool("t", {"x": str(local)})


def test_a_remote_name_is_never_taken_from_a_value_but_a_refspec_after_a_literal_remote_is_data(
    git_driver, tmp_path: Path
) -> None:
    with pytest.raises(PolicyDeniedError) as error:
        git_driver("git fetch {x}").call_tool("t", {"x": "origin"})
    assert "git fetch origin {ref}" in error.value.message
    # the remote is written in the command: the value is a refspec, and git runs (no repository here)
    with pytest.raises(ExecutionError) as failed:
        git_driver("git fetch origin {x}").call_tool("t", {"x": "main"})
    assert not isinstance(failed.value, PolicyDeniedError)
    assert "not a git repository" in failed.value.message


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ('u={x}; git clone "$u" out', "through a variable or a substitution"),
        ('git clone "$(printf %s {x})" out', "through a variable or a substitution"),
        ("git clone --reference {x} https://example.org/r.git out", "git clone --reference"),
        ("git clone --bundle-uri={x} https://example.org/r.git out", "git clone --bundle-uri"),
        ("git clone --some-future-option 1 {x}", "an option MCS does not know"),
        ("git clone http://$HOST/{x}", "cannot tell what this word becomes"),
        ("git clone $'{x}' out", "in git clone, \"$'{x}'\" may be the repository"),
    ],
)
def test_where_mcs_cannot_tell_whether_a_value_is_the_repository_the_file_is_refused(
    git_driver, command: str, expected: str
) -> None:
    with pytest.raises(ConfigurationError) as error:
        git_driver(command)
    assert expected in str(error.value)


# ----------------------------------------------------------------------------- allowed, and held there


def test_an_allowed_loopback_repository_is_cloned(git_driver, tmp_path: Path) -> None:
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={"README": "served\n"})
    with serving(tmp_path / "served") as (port, seen):
        with pytest.raises(PolicyDeniedError):  # loopback: only where the operator allows it
            git_driver("git clone -q {x} out").call_tool("t", {"x": f"http://127.0.0.1:{port}/r.git"})
        assert seen == []
        driver = git_driver("git clone -q {x} out", egress_allow=["localhost"])
        driver.call_tool("t", {"x": f"http://127.0.0.1:{port}/r.git"})
    assert (tmp_path / "work" / "out" / "README").read_text() == "served\n"
    assert seen


def test_the_clone_is_pinned_to_the_address_the_policy_checked(new_driver, write_file, tmp_path: Path) -> None:
    # git's own DNS cannot resolve repo.example; only the pin (http.curloptResolve) makes it reach
    # the address the policy's resolver answered.
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={"README": "pinned\n"})
    asked: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]

    work = tmp_path / "work"
    work.mkdir()
    policy = EgressPolicy(allow=["localhost"], resolver=resolver)
    invocation = {"cli": {"command": "git clone -q {x} out"}}
    driver = new_driver(write_file(mcp_file(tool("t", invocation, {"x": STRING}))), cli_cwd=work, egress=policy)
    with serving(tmp_path / "served") as (port, seen):
        driver.call_tool("t", {"x": f"http://repo.example:{port}/r.git"})
    assert (work / "out" / "README").read_text() == "pinned\n"
    assert asked == ["repo.example"]
    assert seen and all(line.startswith(f"repo.example:{port} ") for line in seen)


def test_a_name_that_resolves_to_a_refused_address_is_refused(new_driver, write_file, tmp_path: Path,
                                                              listener: Listener) -> None:
    policy = EgressPolicy(resolver=lambda host, port: ["127.0.0.1"])
    invocation = {"cli": {"command": "git clone -q {x} out"}}
    driver = new_driver(write_file(mcp_file(tool("t", invocation, {"x": STRING}))), cli_cwd=tmp_path, egress=policy)
    with pytest.raises(PolicyDeniedError) as error:
        driver.call_tool("t", {"x": f"http://rebind.example:{listener.port}/r.git"})
    assert "loopback" in error.value.message
    assert listener.received == []
    assert not (tmp_path / "out").exists()


def test_a_redirect_from_the_allowed_repository_is_not_followed(git_driver, tmp_path: Path) -> None:
    other = Listener("127.0.0.2")
    try:
        (tmp_path / "served").mkdir()
        driver = git_driver("git clone -q {x} out", egress_allow=["localhost"])
        redirect = f"http://127.0.0.2:{other.port}"
        with serving(tmp_path / "served", redirect_to=redirect) as (port, seen), pytest.raises(ExecutionError):
            driver.call_tool("t", {"x": f"http://127.0.0.1:{port}/r.git"})
        assert seen  # the allowed server was asked, and answered 302
        assert other.received == []
    finally:
        other.close()


def test_a_submodule_of_the_chosen_repository_is_not_fetched(git_driver, tmp_path: Path, listener: Listener) -> None:
    # .gitmodules is the repository's content, so the model's choice: it may name any URL.
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", submodule=f"http://127.0.0.1:{listener.port}/sub.git")
    driver = git_driver("git clone -q --recurse-submodules {x} out", egress_allow=["localhost"])
    with serving(tmp_path / "served") as (port, _), pytest.raises(ExecutionError) as error:
        driver.call_tool("t", {"x": f"http://127.0.0.1:{port}/r.git"})
    assert "transport 'http' not allowed" in error.value.message  # the clone itself succeeded
    assert (tmp_path / "work" / "out" / "README").is_file()
    assert listener.received == []


def test_a_value_after_a_literal_host_chooses_only_the_path(git_driver, tmp_path: Path) -> None:
    # the file's author wrote the destination: configuration, not the model's choice
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={"README": "literal host\n"})
    with serving(tmp_path / "served") as (port, _):
        driver = git_driver(f"git clone -q http://127.0.0.1:{port}/{{x}} out")
        driver.call_tool("t", {"x": "r.git"})
    assert (tmp_path / "work" / "out" / "README").read_text() == "literal host\n"


def test_a_git_too_old_to_pin_is_refused_rather_than_run_unpinned(git_driver, tmp_path: Path,
                                                                  monkeypatch) -> None:
    bin_dir = tmp_path / "oldgit"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text('#!/bin/sh\necho "$@" >> "$(dirname "$0")/calls"\necho "git version 2.30.2"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    driver = git_driver("git clone {x} out")
    with pytest.raises(PolicyDeniedError) as error:
        driver.call_tool("t", {"x": "https://example.org/r.git"})
    assert "2.37" in error.value.message
    assert (bin_dir / "calls").read_text() == "--version\n"



def test_git_lfs_downloads_nothing_for_a_repository_the_model_chose(git_driver, tmp_path: Path,
                                                                    monkeypatch) -> None:
    # With git-lfs installed in the user's configuration, a repository's .gitattributes sends
    # its files through git-lfs, which fetches their content from wherever .lfsconfig says,
    # past the pin. A stand-in git-lfs (the filter git runs) records what it was told.
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    bin_dir.mkdir()
    (home / ".gitconfig").write_text('[filter "lfs"]\n\tsmudge = git-lfs smudge %f\n\trequired = true\n')
    stand_in = bin_dir / "git-lfs"
    stand_in.write_text('#!/bin/sh\necho "skip=${GIT_LFS_SKIP_SMUDGE:-unset}" >> "$(dirname "$0")/seen"\nexec cat\n')
    stand_in.chmod(stand_in.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={".gitattributes": "*.bin filter=lfs\n", "a.bin": "pointer\n"})
    monkeypatch.setenv("HOME", str(home))  # the configuration the server's user would have
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with serving(tmp_path / "served") as (port, _):
        git_driver("git clone -q {x} out", egress_allow=["localhost"]).call_tool(
            "t", {"x": f"http://127.0.0.1:{port}/r.git"})
    assert (tmp_path / "work" / "out" / "a.bin").read_text() == "pointer\n"
    # git reads none of the user's configuration for a repository the model chose, so the filter
    # it installs does not run; where it would (a later pull in the clone), GIT_LFS_SKIP_SMUDGE
    # and the clone's lfs.fetchexclude hold it (see the tests of what the clone keeps)
    assert not (bin_dir / "seen").exists()


async def test_the_async_path_checks_and_pins_alike(new_driver, write_file, tmp_path: Path, listener: Listener) -> None:
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={"README": "async\n"})
    work = tmp_path / "work"
    work.mkdir()
    policy = EgressPolicy(allow=["localhost"], resolver=lambda host, port: ["127.0.0.1"])
    invocation = {"cli": {"command": "git clone -q {x} out"}}
    driver = new_driver(write_file(mcp_file(tool("t", invocation, {"x": STRING}))), cli_cwd=work, egress=policy)
    with pytest.raises(PolicyDeniedError):
        await driver.acall_tool("t", {"x": f"ssh://127.0.0.1:{listener.port}/r.git"})
    with serving(tmp_path / "served") as (port, seen):
        await driver.acall_tool("t", {"x": f"http://repo.example:{port}/r.git"})
    assert (work / "out" / "README").read_text() == "async\n"
    assert seen and all(line.startswith(f"repo.example:{port} ") for line in seen)  # reached through the pin
    assert listener.received == []


@pytest.mark.parametrize("variable", ["http_proxy", "ALL_PROXY", "all_proxy"])
def test_a_proxy_in_the_environment_does_not_carry_the_request_past_the_pin(
    git_driver, tmp_path: Path, listener: Listener, monkeypatch, variable: str
) -> None:
    # Through a proxy, the proxy resolves the name again (http.curloptResolve pins only a direct
    # connection); the HTTP tools' transport ignores proxies from the environment, and so does git here.
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={"README": "direct\n"})
    monkeypatch.setenv(variable, f"http://127.0.0.1:{listener.port}")
    driver = git_driver("git clone -q {x} out", egress_allow=["localhost"])
    with serving(tmp_path / "served") as (port, seen):
        driver.call_tool("t", {"x": f"http://127.0.0.1:{port}/r.git"})
    assert (tmp_path / "work" / "out" / "README").read_text() == "direct\n"
    assert seen
    assert listener.received == []


# ----------------------------------------------------------------------------- what the clone keeps

# The clone records the model's URL as its origin; a later tool of the same file that takes no
# value (git -C repo pull) contacts that URL again. The pins go with the clone, in .git/config.


def advance(served: Path, files: dict[str, str] | None = None, links: dict[str, str] | None = None) -> str:
    """A new commit in the repository :func:`bare_repository` serves from ``served``, writing
    ``files`` and symbolic links (name -> target); returns its hash."""
    work = served / "r.git-work"
    for name, text in (files or {"README": "second\n"}).items():
        (work / name).write_text(text)
    for name, target in (links or {}).items():
        (work / name).symlink_to(target)
    run_git("add", ".", cwd=work)
    run_git("commit", "-q", "-m", "next", cwd=work)
    run_git("push", "-q", "--no-verify", str(served / "r.git"), "HEAD:main", cwd=work)  # no git-lfs hook
    run_git("update-server-info", cwd=served / "r.git")
    return git_output("rev-parse", "HEAD", cwd=work)


def git_output(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


CLONE = {"command": "git clone -q {repoUrl} repo"}


def served_and_work(tmp_path: Path, files: dict[str, str] | None = None) -> tuple[Path, Path]:
    """A bare repository to serve (``files`` in its one commit) and an empty working directory."""
    served, work = tmp_path / "served", tmp_path / "work"
    served.mkdir()
    work.mkdir()
    bare_repository(served, files=files)
    return served, work


def clone_and_later(new_driver: Callable[..., Any], write_file: Callable[..., Path], work: Path, later: str,
                    clone: dict[str, Any] = CLONE, **options: Any) -> Any:
    """A driver whose file has ``clone`` (the model's repository into ``repo``; ``{quiet}`` is
    a boolean) and ``later`` (``later``, which takes no value)."""
    properties = {"repoUrl": STRING, "quiet": {"type": "boolean"}} if "{quiet}" in clone["command"] else None
    path = write_file(mcp_file(
        tool("clone", {"cli": clone}, properties or {"repoUrl": STRING}),
        tool("later", {"cli": {"command": later}}, {}),
    ))
    return new_driver(path, cli_cwd=work, **options)


@pytest.mark.parametrize(("clone", "later"), [
    (CLONE, "git -C repo pull -q"),
    (CLONE, "cd repo && git fetch -q"),
    ({"command": "git clone {quiet} -- {repoUrl} repo", "templateVariables": {"quiet": {"format": "-q"}}},
     "git -C repo fetch -q"),
])
def test_a_later_fetch_with_no_value_in_the_models_clone_goes_to_the_address_checked_at_the_clone(
    new_driver, write_file, tmp_path: Path, home: Path, clone: dict[str, Any], later: str
) -> None:
    # At the clone, the policy's resolver answered 127.0.0.2 for "localhost", where the repository
    # is served. The system's resolver answers 127.0.0.1, where another listener has the same port:
    # a fetch that resolved the name again (DNS rebinding) would reach that one.
    decoy = Listener("127.0.0.1")
    try:
        served, work = served_and_work(tmp_path, files={"README": "first\n"})
        policy = EgressPolicy(allow=["localhost"], resolver=lambda host, port: ["127.0.0.2"])
        driver = clone_and_later(new_driver, write_file, work, later, clone, egress=policy)
        with serving(served, host="127.0.0.2", port=decoy.port) as (port, seen):
            quiet = {"quiet": True} if "{quiet}" in clone["command"] else {}
            driver.call_tool("clone", {"repoUrl": f"http://localhost:{port}/r.git", **quiet})
            head = advance(served)
            cloned = len(seen)
            driver.call_tool("later", {})
            assert len(seen) > cloned
        assert decoy.received == []
        assert git_output("rev-parse", "origin/main", cwd=work / "repo") == head
        assert git_output("remote", "get-url", "origin", cwd=work / "repo") == f"http://localhost:{port}/r.git"
    finally:
        decoy.close()


def has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not has_ipv6_loopback(), reason="no IPv6 loopback here")
@pytest.mark.parametrize("host", ["repo.example", "[::1]"])
def test_a_clone_at_an_ipv6_address_keeps_its_pin_or_needs_none(
    new_driver, write_file, tmp_path: Path, home: Path, host: str
) -> None:
    # a name the policy's resolver answers with an IPv6 address is pinned as name:port:[address];
    # a URL whose host is an IPv6 address is not resolved, so it has no pin and needs none
    served, work = served_and_work(tmp_path)
    policy = EgressPolicy(allow=["localhost"], resolver=lambda name, port: ["::1"])
    driver = clone_and_later(new_driver, write_file, work, "git -C repo fetch -q", egress=policy)
    with serving(served, host="::1") as (port, seen):
        driver.call_tool("clone", {"repoUrl": f"http://{host}:{port}/r.git"})
        head = advance(served)
        driver.call_tool("later", {})
    assert git_output("rev-parse", "origin/main", cwd=work / "repo") == head
    assert seen and all(line.startswith(f"{host}:{port} ") for line in seen)


async def test_a_later_fetch_in_a_clone_made_on_the_async_path_is_pinned_alike(
    new_driver, write_file, tmp_path: Path, home: Path
) -> None:
    decoy = Listener("127.0.0.1")
    try:
        served, work = served_and_work(tmp_path)
        policy = EgressPolicy(allow=["localhost"], resolver=lambda host, port: ["127.0.0.2"])
        driver = clone_and_later(new_driver, write_file, work, "git -C repo fetch -q", egress=policy)
        with serving(served, host="127.0.0.2", port=decoy.port) as (port, _):
            await driver.acall_tool("clone", {"repoUrl": f"http://localhost:{port}/r.git"})
            head = advance(served)
            await driver.acall_tool("later", {})
        assert decoy.received == []
        assert git_output("rev-parse", "origin/main", cwd=work / "repo") == head
    finally:
        decoy.close()


def test_a_later_fetch_with_no_value_in_the_models_clone_follows_no_redirect(
    new_driver, write_file, tmp_path: Path, home: Path
) -> None:
    other = Listener("127.0.0.2")
    try:
        served, work = served_and_work(tmp_path)
        driver = clone_and_later(new_driver, write_file, work, "git -C repo fetch -q", egress_allow=["localhost"])
        with serving(served) as (port, _):
            driver.call_tool("clone", {"repoUrl": f"http://127.0.0.1:{port}/r.git"})
        # the checked address now sends every request to another host
        redirect = f"http://127.0.0.2:{other.port}"
        with serving(served, port=port, redirect_to=redirect) as (_, seen), pytest.raises(ExecutionError):
            driver.call_tool("later", {})
        assert seen  # asked, and answered 302
        assert other.received == []
    finally:
        other.close()


def test_a_later_fetch_with_no_value_in_the_models_clone_goes_through_no_proxy(
    new_driver, write_file, tmp_path: Path, home: Path, listener: Listener, monkeypatch
) -> None:
    # the proxy would resolve the name again; the clone's own run drops proxies from its environment,
    # a later run that takes no value keeps them, so the clone's config turns them off
    served, work = served_and_work(tmp_path)
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    driver = clone_and_later(new_driver, write_file, work, "git -C repo fetch -q", egress_allow=["localhost"])
    with serving(served) as (port, seen):
        driver.call_tool("clone", {"repoUrl": f"http://127.0.0.1:{port}/r.git"})
        head = advance(served)
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{listener.port}")
        cloned = len(seen)
        driver.call_tool("later", {})
        assert len(seen) > cloned
    assert listener.received == []
    assert git_output("rev-parse", "origin/main", cwd=work / "repo") == head


def test_a_symlink_a_later_pull_with_no_value_brings_into_the_models_clone_is_a_plain_file(
    new_driver, write_file, tmp_path: Path, home: Path
) -> None:
    served, work = served_and_work(tmp_path)
    driver = clone_and_later(new_driver, write_file, work, "git -C repo pull -q", egress_allow=["localhost"])
    with serving(served) as (port, _):
        driver.call_tool("clone", {"repoUrl": f"http://127.0.0.1:{port}/r.git"})
        advance(served, links={"NOTES": ".git/config"})
        driver.call_tool("later", {})
    notes = work / "repo" / "NOTES"
    assert notes.is_file() and not notes.is_symlink()
    assert notes.read_text() == ".git/config"


@pytest.mark.skipif(shutil.which("git-lfs") is None, reason="git-lfs is not installed")
def test_git_lfs_downloads_nothing_in_a_later_pull_with_no_value_in_the_models_clone(
    new_driver, write_file, tmp_path: Path, home: Path, listener: Listener
) -> None:
    # GIT_LFS_SKIP_SMUDGE holds for the clone's own run only. The repository's .lfsconfig names
    # where git-lfs downloads from (here a listener the policy never checked), even overriding
    # what to fetch; the clone's lfs.fetchexclude outranks it.
    subprocess.run(["git", "lfs", "install", "--skip-repo"], check=True, capture_output=True)  # in the test's HOME
    served, work = tmp_path / "served", tmp_path / "work"
    served.mkdir()
    work.mkdir()
    lfs_config = f"[lfs]\n\turl = http://127.0.0.1:{listener.port}/lfs\n\tfetchinclude = *\n\tfetchexclude =\n"
    bare_repository(served, files={".gitattributes": "*.bin filter=lfs -text\n", ".lfsconfig": lfs_config})
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{'a' * 64}\nsize 12\n"
    driver = clone_and_later(new_driver, write_file, work, "git -C repo pull -q", egress_allow=["localhost"])
    with serving(served) as (port, _):
        driver.call_tool("clone", {"repoUrl": f"http://127.0.0.1:{port}/r.git"})
        advance(served, files={"a.bin": pointer})
        driver.call_tool("later", {})
    assert (work / "repo" / "a.bin").read_text() == pointer
    assert listener.received == []


# ----------------------------------------------------------------------------- what another tool runs from a clone

# The repository an attacker publishes passes the egress policy (a public host); what it holds is
# theirs. Each file runs it from a second tool of the same server, which takes no value itself.
CLONED_CODE = {
    "Makefile": "all:\n\ttouch ../MARKER\n",
    "setup.sh": "touch ../MARKER\n",
    "main.py": "open('../MARKER', 'w')\n",
    "package.json": '{"scripts": {"test": "touch ../MARKER"}}\n',
}
RUNS_THE_CLONE = [("make -s -C repo", "make"), ("cd repo && npm test --silent", "npm"),
                  ("cd repo && bash setup.sh", "bash"), ("cd repo && python3 main.py", "python3")]


@pytest.mark.parametrize(("runner", "program"), RUNS_THE_CLONE, ids=[r for r, _ in RUNS_THE_CLONE])
def test_a_tool_that_runs_code_from_what_another_tool_cloned_is_refused_at_load(
    new_driver, write_file, tmp_path: Path, monkeypatch, runner: str, program: str
) -> None:
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed, so what it would run cannot be shown")
    for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):  # show make itself, not the runner's make
        monkeypatch.delenv(name, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files=CLONED_CODE)
    path = write_file(mcp_file(
        tool("clone_repo", {"cli": {"command": "git clone -q {repoUrl} repo"}}, {"repoUrl": STRING}),
        tool("run_tests", {"cli": {"command": runner}}, {}),
    ))
    with pytest.raises(ConfigurationError) as error:
        new_driver(path, cli_cwd=work, egress_allow=["localhost"])
    message = str(error.value)
    assert "tool 'run_tests'" in message and f"runs {program!r}" in message
    assert "tool 'clone_repo' of this file takes the model's values" in message and "cli_trusted_programs" in message
    # the operator's choice: trusting the program loads the file, and the clone's code then runs
    driver = new_driver(path, cli_cwd=work, egress_allow=["localhost"], cli_trusted_programs=[program])
    with serving(tmp_path / "served") as (port, _):
        driver.call_tool("clone_repo", {"repoUrl": f"http://127.0.0.1:{port}/r.git"})
    with contextlib.suppress(ExecutionError):
        driver.call_tool("run_tests", {})
    assert (work / "MARKER").exists(), f"{program} did not run the cloned code: the case shows nothing"


# ----------------------------------------------------------------------------- configuration a clone can bring


def served_with_symlink(folder: Path, links: dict[str, str]) -> Path:
    """A bare repository served like ``bare_repository``, with two commits (README changes)
    and symbolic links (name -> target) in the second."""
    work = folder / "linked-work"
    run_git("init", "-q", str(work))
    (work / "README").write_text("first\n")
    run_git("add", ".", cwd=work)
    run_git("commit", "-q", "-m", "first", cwd=work)
    (work / "README").write_text("second\n")
    for name, target in links.items():
        (work / name).symlink_to(target)
    run_git("add", ".", cwd=work)
    run_git("commit", "-q", "-m", "second", cwd=work)
    bare = folder / "r.git"
    run_git("clone", "-q", "--bare", str(work), str(bare))
    run_git("update-server-info", cwd=bare)
    return bare


def test_a_write_through_a_symlink_a_clone_brought_cannot_reach_git_config(
    new_driver, write_file, tmp_path: Path, home: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "served").mkdir()
    served_with_symlink(tmp_path / "served", {"NOTES": ".git/config"})
    path = write_file(mcp_file(
        tool("clone", {"cli": {"command": "git clone -q {repoUrl} repo"}}, {"repoUrl": STRING}),
        tool("note", {"cli": {"command": "printf '%s\\n' {text} > repo/NOTES"}}, {"text": STRING}),
        tool("diff", {"cli": {"command": "cd repo && git diff HEAD~1"}}, {}),
    ))
    with pytest.raises(ConfigurationError) as error:
        new_driver(path, cli_cwd=work, egress_allow=["localhost"])
    message = str(error.value)
    assert "tool 'clone'" in message and "runs 'git'" in message
    assert "tool 'note' writes files from the model's values" in message and "cli_trusted_programs" in message
    # the operator trusts git: the clone's symlink is checked out as a plain file, so the
    # model's line lands in it, not in .git/config
    driver = new_driver(path, cli_cwd=work, egress_allow=["localhost"], cli_trusted_programs=["git"])
    with serving(tmp_path / "served") as (port, _):
        url = f"http://127.0.0.1:{port}/r.git"
        driver.call_tool("clone", {"repoUrl": url})
        assert not (work / "repo" / "NOTES").is_symlink()
        driver.call_tool("note", {"text": "[diff] external = touch ../MARKER #"})
        assert "+second" in driver.call_tool("diff", {})
        assert not (work / "MARKER").exists()
        assert "external" not in (work / "repo" / ".git" / "config").read_text()
        # what the plain file prevents, shown with the same steps and git's defaults
        run_git("clone", "-q", url, "plain", cwd=work)
    (work / "plain" / "NOTES").write_text("[diff] external = touch ../MARKER #\n")
    subprocess.run(["git", "diff", "HEAD~1"], cwd=work / "plain", check=False, capture_output=True)
    assert (work / "MARKER").exists(), "the symlink chain ran nothing: the case shows nothing"


def test_a_clone_into_a_directory_the_model_chooses_can_be_gits_user_configuration(
    new_driver, write_file, tmp_path: Path, home: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    git_repository_with_a_change(work)
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={"config": "[diff]\n\texternal = touch MARKER #\n"})
    path = write_file(mcp_file(
        tool("clone", {"cli": {"command": "git clone -q {repoUrl} {path}"}}, {"repoUrl": STRING, "path": STRING}),
        tool("diff", {"cli": {"command": "git diff"}}, {}),
    ))
    with pytest.raises(ConfigurationError) as error:
        new_driver(path, cli_cwd=work, egress_allow=["localhost"])
    message = str(error.value)
    assert "tool 'diff'" in message and "runs 'git'" in message and "~/.config/git/config" in message
    assert "tool 'clone' writes files" in message and "a directory a model's value may choose" in message
    # trusting git loads the same file, and the clone still may not leave the working directory
    driver = new_driver(path, cli_cwd=work, egress_allow=["localhost"], cli_trusted_programs=["git"])
    arguments = {"path": str(home / ".config" / "git")}
    with serving(tmp_path / "served") as (port, seen):
        with pytest.raises(PolicyDeniedError):
            driver.call_tool("clone", {"repoUrl": f"http://127.0.0.1:{port}/r.git", **arguments})
        assert seen == [] and not (home / ".config").exists()
        # the operator's choice: HOME as a directory the commands may write, and
        # ~/.config/git/config is the clone's
        driver = new_driver(path, cli_cwd=work, egress_allow=["localhost"], cli_trusted_programs=["git"],
                            cli_write_roots=[str(home)])
        driver.call_tool("clone", {"repoUrl": f"http://127.0.0.1:{port}/r.git", **arguments})
    with contextlib.suppress(ExecutionError):
        driver.call_tool("diff", {})
    assert (work / "MARKER").exists(), "git did not read the cloned configuration: the case shows nothing"


def test_a_work_tree_a_value_chooses_can_be_the_clones_git_directory_so_the_file_is_refused_at_load(
    new_driver, write_file, tmp_path: Path, home: Path
) -> None:
    # the clone's files are the model's; --work-tree=.git checks them out over .git/config, whose
    # filter the next checkout runs for every file .gitattributes marks
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={
        "config": '[core]\n\trepositoryformatversion = 0\n[filter "x"]\n\tsmudge = touch ../MARKER; cat\n',
        ".gitattributes": "* filter=x\n", "README": "served\n"})
    path = write_file(mcp_file(
        tool("clone", {"cli": {"command": "git clone -q {repoUrl} repo"}}, {"repoUrl": STRING}),
        tool("export", {"cli": {"command": "cd repo && git --work-tree={dir} checkout HEAD -- ."}}, {"dir": STRING}),
    ))
    with pytest.raises(ConfigurationError) as error:
        new_driver(path, cli_cwd=work, egress_allow=["localhost"])
    message = str(error.value)
    assert "tool 'clone'" in message and "runs 'git'" in message
    assert "tool 'export' writes files" in message and "--work-tree" in message and "cli_trusted_programs" in message
    # the operator's choice: trusting git loads the file, and the model's configuration then runs
    driver = new_driver(path, cli_cwd=work, egress_allow=["localhost"], cli_trusted_programs=["git"])
    with serving(tmp_path / "served") as (port, _):
        driver.call_tool("clone", {"repoUrl": f"http://127.0.0.1:{port}/r.git"})
    driver.call_tool("export", {"dir": ".git"})
    assert "smudge" in (work / "repo" / ".git" / "config").read_text()
    driver.call_tool("export", {"dir": "."})
    assert (work / "MARKER").exists(), "git did not run the checked-out configuration: the case shows nothing"


def test_git_tools_beside_a_clone_into_a_literal_directory_load_and_run(
    new_driver, write_file, tmp_path: Path, home: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={"README": "served\n"})
    path = write_file(mcp_file(
        tool("clone", {"cli": {"command": "git clone -q {repoUrl} repo"}}, {"repoUrl": STRING}),
        tool("log", {"cli": {"command": "cd repo && git log --format=%s"}}, {}),
        tool("status", {"cli": {"command": "cd repo && git status --short"}}, {}),
        tool("diff", {"cli": {"command": "cd repo && git diff -- {path}"}}, {"path": STRING}),
        tool("ensure_dir", {"cli": {"command": "mkdir -p -- {path}"}}, {"path": STRING}),
    ))
    driver = new_driver(path, cli_cwd=work, egress_allow=["localhost"])
    with serving(tmp_path / "served") as (port, _):
        driver.call_tool("clone", {"repoUrl": f"http://127.0.0.1:{port}/r.git"})
    assert driver.call_tool("log", {}) == "first\n"
    driver.call_tool("ensure_dir", {"path": "repo/sub"})
    assert driver.call_tool("status", {}) == ""
    assert driver.call_tool("diff", {"path": "README"}) == ""


def test_a_clone_into_the_directory_its_url_names_can_be_gits_user_configuration(
    new_driver, write_file, tmp_path: Path, home: Path
) -> None:
    # git clone {repoUrl} with no directory clones into the URL's last component: ".config",
    # in a working directory that is HOME (a container's /root often has no ~/.config)
    source = tmp_path / "source"
    run_git("init", "-q", str(source))
    (source / "git").mkdir()
    (source / "git" / "config").write_text("[diff]\n\texternal = touch MARKER #\n")
    run_git("add", ".", cwd=source)
    run_git("commit", "-q", "-m", "first", cwd=source)
    (tmp_path / "served").mkdir()
    run_git("clone", "-q", "--bare", str(source), str(tmp_path / "served" / ".config"))
    run_git("update-server-info", cwd=tmp_path / "served" / ".config")
    project = home / "project"
    project.mkdir()
    git_repository_with_a_change(project)
    path = write_file(mcp_file(
        tool("clone", {"cli": {"command": "git clone -q {repoUrl}"}}, {"repoUrl": STRING}),
        tool("diff", {"cli": {"command": "cd project && git diff"}}, {}),
    ))
    with pytest.raises(ConfigurationError) as error:
        new_driver(path, cli_cwd=home, egress_allow=["localhost"])
    assert "tool 'diff'" in str(error.value) and "tool 'clone' writes files" in str(error.value)
    driver = new_driver(path, cli_cwd=home, egress_allow=["localhost"], cli_trusted_programs=["git"])
    with serving(tmp_path / "served") as (port, _):
        driver.call_tool("clone", {"repoUrl": f"http://127.0.0.1:{port}/.config"})
    assert (home / ".config" / "git" / "config").is_file()
    with contextlib.suppress(ExecutionError):
        driver.call_tool("diff", {})
    assert (project / "MARKER").exists(), "git did not read the cloned configuration: the case shows nothing"


# ----------------------------------------------------------------------------- the server user's git configuration


@pytest.mark.parametrize("setting", ["insteadOf", "proxy", "include"])
def test_the_server_users_git_configuration_does_not_carry_a_models_clone_past_the_pin(
    git_driver, tmp_path: Path, home: Path, listener: Listener, setting: str
) -> None:
    # ~/.gitconfig outranks nothing git is told on its command line, except where its rule is more
    # specific: a url.<base>.insteadOf rewrites the model's URL to another address, and an
    # http.<url>.proxy matches the URL better than the pinned http.proxy. Only the pins may apply.
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={"README": "direct\n"})
    with serving(tmp_path / "served") as (port, seen):
        base = f"http://127.0.0.1:{port}/"
        rules = {
            "insteadOf": f'[url "http://127.0.0.1:{listener.port}/"]\n\tinsteadOf = {base}\n',
            "proxy": f'[http "{base}"]\n\tproxy = http://127.0.0.1:{listener.port}\n',
        }
        if setting == "include":
            (home / "more.conf").write_text(rules["insteadOf"])
            (home / ".gitconfig").write_text(f"[include]\n\tpath = {home / 'more.conf'}\n")
        else:
            (home / ".gitconfig").write_text(rules[setting])
        driver = git_driver("git clone -q {x} out", egress_allow=["localhost"])
        driver.call_tool("t", {"x": f"{base}r.git"})
    assert (tmp_path / "work" / "out" / "README").read_text() == "direct\n"
    assert seen
    assert listener.received == []


def test_git_configuration_in_the_servers_environment_does_not_carry_a_models_clone_past_the_pin(
    git_driver, tmp_path: Path, home: Path, listener: Listener, monkeypatch
) -> None:
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={"README": "direct\n"})
    with serving(tmp_path / "served") as (port, seen):
        monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
        monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.http://127.0.0.1:{listener.port}/.insteadOf")
        monkeypatch.setenv("GIT_CONFIG_VALUE_0", f"http://127.0.0.1:{port}/")
        driver = git_driver("git clone -q {x} out", egress_allow=["localhost"])
        driver.call_tool("t", {"x": f"http://127.0.0.1:{port}/r.git"})
    assert (tmp_path / "work" / "out" / "README").read_text() == "direct\n"
    assert seen
    assert listener.received == []


@pytest.mark.parametrize("command", [
    "git clone -q --depth {x} https://example.invalid/r.git",
    "git clone -q -b {x} https://example.invalid/r.git",
    "git ls-remote --sort {x} https://example.invalid/r.git",
])
def test_a_list_as_the_value_of_a_git_option_cannot_become_the_repository(
    git_driver, listener: Listener, command: str
) -> None:
    driver = git_driver(command, {"x": {"type": "array", "items": STRING}})
    with pytest.raises(InvalidInputError, match="one word only"):
        driver.call_tool("t", {"x": ["1", f"http://127.0.0.1:{listener.port}/r.git"]})
    assert listener.received == []
