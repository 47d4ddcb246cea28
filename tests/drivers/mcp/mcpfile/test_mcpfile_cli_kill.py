"""``kill {pid}``: the process a value names may not be the server's.

``kill`` is on the allow-list (a model stops what an earlier call started), but bash's kill
also reads ``0`` (its group), ``-1`` (every process the user may signal) and ``-PGID``, also
written `` -1`` (bash skips the blank, so the leading '-' check missed it) or after ``--``;
and a plain pid may be the server itself. Real bash signals the test process, which plays
the server: a handler records what it got; signal 0 (nothing delivered) stands in where a
real signal would reach other processes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcpfile_support import mcp_file, tool

from mcs.errors import ConfigurationError, InvalidInputError, PolicyDeniedError

STRING = {"type": "string"}


def kill_driver(new_driver, write_file, command: str, properties: dict | None = None, **options):
    invocation = {"cli": {"command": command}}
    return new_driver(write_file(mcp_file(tool("t", invocation, properties or {"pid": STRING}))), **options)


@pytest.fixture
def received() -> Iterator[list[int]]:
    """The SIGUSR1s this process (the server) receives during the test."""
    got: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda number, frame: got.append(number))
    yield got
    signal.signal(signal.SIGUSR1, previous)


@pytest.mark.parametrize("command", ["kill -s USR1 {pid}", "kill -USR1 -- {pid}", "/bin/kill -s USR1 {pid}"])
def test_kill_cannot_signal_the_server_itself(new_driver, write_file, tmp_path: Path, received: list[int],
                                              command: str) -> None:
    driver = kill_driver(new_driver, write_file, command, cli_cwd=tmp_path)
    with pytest.raises(PolicyDeniedError, match="the server"):
        driver.call_tool("t", {"pid": str(os.getpid())})
    assert received == []


@pytest.mark.parametrize("pid", ["parent", "group", "session"])
def test_kill_cannot_signal_the_servers_parent_group_or_session(new_driver, write_file, tmp_path: Path,
                                                                pid: str) -> None:
    value = {"parent": os.getppid(), "group": os.getpgrp(), "session": os.getsid(0)}[pid]
    driver = kill_driver(new_driver, write_file, "kill -0 -- {pid} && echo signalled", cli_cwd=tmp_path)
    # In a container the session (or parent) may lie outside this pid namespace and read as 0,
    # which is refused before the server's own ids are looked at.
    refusal = (PolicyDeniedError, "the server") if value > 0 else (InvalidInputError, "one process id")
    with pytest.raises(refusal[0], match=refusal[1]):
        driver.call_tool("t", {"pid": str(value)})


@pytest.mark.parametrize("value", ["-1", " -1", "0", " 0", "+1", "-{group}", "%1", "1 2", "0x10"])
def test_kill_takes_one_process_id_never_a_group_or_every_process(new_driver, write_file, tmp_path: Path,
                                                                  value: str) -> None:
    driver = kill_driver(new_driver, write_file, "kill -0 -- {pid} && echo signalled", cli_cwd=tmp_path)
    with pytest.raises(InvalidInputError, match="one process id"):
        driver.call_tool("t", {"pid": value.format(group=os.getpgrp())})


def test_an_integer_property_that_names_the_server_is_refused_too(new_driver, write_file, tmp_path: Path,
                                                                  received: list[int]) -> None:
    driver = kill_driver(new_driver, write_file, "kill -s USR1 {pid}", {"pid": {"type": "integer"}}, cli_cwd=tmp_path)
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"pid": os.getpid()})
    assert received == []


def test_a_process_an_earlier_command_left_in_the_background_can_be_signalled(
    new_driver, write_file, tmp_path: Path
) -> None:
    path = write_file(mcp_file(
        tool("start", {"cli": {"command": "sleep 60 > /dev/null 2>&1 & echo $!"}}),
        tool("stop", {"cli": {"command": "kill -s TERM {pid} && echo sent"}}, {"pid": STRING}),
    ))
    driver = new_driver(path, cli_cwd=tmp_path)
    pid = int(driver.call_tool("start", {}).split()[0])
    try:
        assert driver.call_tool("stop", {"pid": str(pid)}) == "sent\n"
        for _ in range(100):  # reaped by whoever adopted it once the start command exited
            if not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.05)
        assert not Path(f"/proc/{pid}").exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, signalled to death and not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_kill_cannot_signal_an_mcp_server_the_server_bridges_over_stdio(
    new_driver, write_file, tmp_path: Path
) -> None:
    from mcp import StdioServerParameters
    from mcs_mcp.client.stdio import bounded_stdio_client

    pidfile = tmp_path / "upstream.pid"
    upstream = StdioServerParameters(command=sys.executable, args=[
        "-c", f"import os, sys; open({str(pidfile)!r}, 'w').write(str(os.getpid())); sys.stdin.read()"])
    driver = kill_driver(new_driver, write_file, "kill -s TERM {pid} && echo sent", cli_cwd=tmp_path)

    async def main() -> tuple[int, str, bool]:
        with open(os.devnull, "w") as errlog:
            async with bounded_stdio_client(upstream, errlog):
                while not pidfile.exists() or not pidfile.read_text():
                    await anyio.sleep(0.02)
                pid = int(pidfile.read_text())
                assert os.getsid(pid) != os.getsid(0) and os.getpgid(pid) != os.getpgrp()
                try:
                    answer = await anyio.to_thread.run_sync(driver.call_tool, "t", {"pid": str(pid)})
                except PolicyDeniedError as exc:
                    answer = exc.message
                await anyio.sleep(0.2)
                return pid, answer, alive(pid)

    _, answer, running = anyio.run(main)
    assert "started" in answer and running, answer


def test_kill_cannot_signal_a_process_a_child_of_the_server_started(new_driver, write_file, tmp_path: Path) -> None:
    parent = subprocess.Popen(["bash", "-c", "sleep 60 & echo $!; wait"], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        assert parent.stdout is not None
        grandchild = int(parent.stdout.readline())
        driver = kill_driver(new_driver, write_file, "kill -s TERM {pid} && echo sent", cli_cwd=tmp_path)
        with pytest.raises(PolicyDeniedError, match="started"):
            driver.call_tool("t", {"pid": str(grandchild)})
        assert alive(grandchild)
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()
        parent.stdout.close()


def test_the_signal_kill_sends_stays_data(new_driver, write_file, tmp_path: Path) -> None:
    driver = kill_driver(new_driver, write_file, "kill -s {sig} -- 999999 2>&1 || echo refused",
                         {"sig": STRING}, cli_cwd=tmp_path)
    out = driver.call_tool("t", {"sig": "$(touch MARKER)"})
    assert "$(touch MARKER)" in out and out.endswith("refused\n")
    assert not (tmp_path / "MARKER").exists()


def test_kill_lists_signals_with_any_value(new_driver, write_file, tmp_path: Path) -> None:
    driver = kill_driver(new_driver, write_file, "kill -l {pid}", cli_cwd=tmp_path)
    assert driver.call_tool("t", {"pid": "9"}) == "KILL\n"


@pytest.mark.parametrize("command", ['p={pid}; kill -0 "$p"', "for p in {pid}; do kill -0 -- \"$p\"; done",
                                     'kill -0 $(echo {pid})'])
def test_a_value_reaching_kill_through_a_variable_is_refused_at_load(new_driver, write_file, command: str) -> None:
    with pytest.raises(ConfigurationError, match="kill"):
        kill_driver(new_driver, write_file, command)


def test_a_literal_kill_beside_a_value_is_unchanged(new_driver, write_file, tmp_path: Path) -> None:
    driver = kill_driver(new_driver, write_file, "echo {pid}; kill -0 $$ && echo alive", cli_cwd=tmp_path)
    assert driver.call_tool("t", {"pid": "0"}) == "0\nalive\n"


def test_kill_cannot_signal_the_server_through_the_id_of_one_of_its_threads(new_driver, write_file, tmp_path: Path,
                                                                            received: list[int]) -> None:
    # Linux's kill(2) takes a thread's id for its whole process
    started = threading.Event()
    stop = threading.Event()

    def idle() -> None:
        started.set()
        stop.wait(30)

    thread = threading.Thread(target=idle, daemon=True)
    thread.start()
    started.wait(5)
    try:
        assert thread.native_id is not None and thread.native_id != os.getpid()
        driver = kill_driver(new_driver, write_file, "kill -s USR1 {pid}", cli_cwd=tmp_path)
        with pytest.raises(PolicyDeniedError, match="the server"):
            driver.call_tool("t", {"pid": str(thread.native_id)})
        assert received == []
    finally:
        stop.set()
        thread.join()


def test_each_process_of_a_list_is_checked(new_driver, write_file, tmp_path: Path, received: list[int]) -> None:
    pids = {"type": "array", "items": {"type": "integer"}}
    driver = kill_driver(new_driver, write_file, "kill -s USR1 -- {pids}", {"pids": pids}, cli_cwd=tmp_path)
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"pids": [999999, os.getpid()]})
    assert received == []


@pytest.mark.parametrize("command", ["kill -s {signal} -- {pid}", "kill -n {signal} {pid}"])
def test_a_list_as_the_signal_cannot_add_the_server_to_the_processes_kill_signals(
    new_driver, write_file, tmp_path: Path, received: list[int], command: str
) -> None:
    other = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        properties = {"signal": {"type": "array", "items": STRING}, "pid": STRING}
        driver = kill_driver(new_driver, write_file, command, properties, cli_cwd=tmp_path)
        number = str(int(signal.SIGUSR1)) if "-n" in command else "USR1"
        with pytest.raises(InvalidInputError, match="one word only"):
            driver.call_tool("t", {"signal": [number, str(os.getpid())], "pid": str(other.pid)})
        assert received == []
    finally:
        other.kill()
        other.wait()


#: Run in a mount namespace of its own whose /proc is an empty directory: a system without /proc.
WITHOUT_PROC = """
import os, sys, yaml
from mcs_mcp.mcpfile.driver import MCPFileDriver
from mcs.errors import PolicyDeniedError
path, cwd = sys.argv[1], sys.argv[2]
assert not os.path.isdir("/proc/self")
driver = MCPFileDriver(path, cli_cwd=cwd)
try:
    print(driver.call_tool("t", {"pid": sys.argv[3]}))
except PolicyDeniedError as error:
    print("REFUSED", error.message)
finally:
    driver.close()
"""


def test_on_a_system_without_proc_kill_takes_no_value(write_file, tmp_path: Path) -> None:
    unshare = "/usr/bin/unshare"
    probe = subprocess.run([unshare, "-m", "--propagation", "private", "true"], capture_output=True)
    if not Path(unshare).exists() or probe.returncode != 0:
        pytest.skip("no mount namespace can be made here (unshare -m needs root)")
    sleeper = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        path = write_file(mcp_file(tool("t", {"cli": {"command": "kill -s TERM {pid} && echo sent"}},
                                        {"pid": STRING})))
        script = tmp_path / "without_proc.py"
        script.write_text(WITHOUT_PROC)
        run = subprocess.run(
            [unshare, "-m", "--propagation", "private", "sh", "-c",
             'mount -t tmpfs none /proc && exec "$@"', "sh", sys.executable, str(script), str(path),
             str(tmp_path), str(sleeper.pid)],
            capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("REFUSED") and "no /proc" in run.stdout, run.stdout
        assert sleeper.poll() is None, "kill signalled a process whose parents could not be read"
    finally:
        sleeper.kill()
        sleeper.wait()
