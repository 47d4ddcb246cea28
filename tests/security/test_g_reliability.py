"""SECURITY.md G1-G4: retries, the circuit breaker, cancellation, rate and concurrency
limits, against the hostile peer on loopback (which counts what reaches it)."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hostile_drivers import rest_spec
from mcs_mcp.mcpfile.driver import MCPFileDriver
from mcs_rest import RestDriver
from support.hostile import HostilePeer
from support.processes import assert_process_gone
from support.servers import free_port

from mcs import ToolDriver
from mcs.context import AgentContext, PolicyDecision
from mcs.errors import (
    ExecutionError,
    InvalidInputError,
    PolicyDeniedError,
    ToolNotFoundError,
    ToolTimeoutError,
)
from mcs.limits import CircuitBreaker, RateLimit
from mcs.pipeline import ExecutionEvent, Invocation
from mcs.tools import Tool


def _driver(peer: HostilePeer, **options: Any) -> RestDriver:
    options.setdefault("retries", 2)
    options.setdefault("backoff", 0.01)
    return RestDriver(rest_spec(), base_url=peer.url, **options)


# ----------------------------------------------------------------------------- G1


def test_g1a_a_post_whose_connection_resets_after_sending_is_not_retried(peer: HostilePeer) -> None:
    with _driver(peer) as driver, pytest.raises(ExecutionError):
        driver.call_tool("post_reset", {})
    assert peer.count("/reset") == 1


def test_g1b_a_get_answered_503_is_retried_after_retry_after_with_capped_attempts(peer: HostilePeer) -> None:
    started = time.monotonic()
    with _driver(peer) as driver:
        assert driver.call_tool("flaky", {})["attempts"] == 2
    assert time.monotonic() - started >= 1.0  # Retry-After: 1
    peer.flaky_failures = 100
    with _driver(peer, retries=1) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("flaky", {})
    assert info.value.details["status"] == 503 and info.value.details["retry_after"] == 1.0
    assert peer.count("/flaky") == 2 + 2  # two attempts each time, never more


def test_g1c_a_post_with_an_idempotency_key_is_retried_with_the_same_key(peer: HostilePeer) -> None:
    with _driver(peer, idempotency_header="Idempotency-Key") as driver:
        answer = driver.call_tool("post_flaky", {})
    keys = [r.headers.get("idempotency-key") for r in peer.requests]
    assert answer["attempts"] == 2 and keys[0] == keys[1] == answer["key"] and keys[0]
    plain = HostilePeer()
    try:
        with _driver(plain) as driver, pytest.raises(ExecutionError):
            driver.call_tool("post_flaky", {})  # no key: a 503 to a POST is not retried
        assert plain.count("/flaky") == 1
    finally:
        plain.close()


def test_g1d_a_connection_refused_before_sending_may_be_retried_for_any_method() -> None:
    spec = rest_spec()
    with RestDriver(spec, base_url=f"http://127.0.0.1:{free_port()}", retries=2, backoff=0.05) as driver:
        started = time.monotonic()
        with pytest.raises(ExecutionError) as info:
            driver.call_tool("post_flaky", {})
    assert info.value.details["category"] == "connect"
    assert time.monotonic() - started >= 0.07  # two backoffs happened: it was retried


@pytest.mark.parametrize("asked", ["86400", "Wed, 21 Oct 2099 07:28:00 GMT", "9" * 30])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_g1b_a_retry_after_longer_than_the_longest_wait_ends_the_retries_without_a_deadline(
    peer: HostilePeer, asked: str, mode: str
) -> None:
    peer.flaky_failures, peer.flaky_retry_after = 100, asked
    driver = _driver(peer, timeout=None)  # no deadline caps the wait: only the driver's own bound
    call: Any = (lambda: driver.call_tool("flaky", {})) if mode == "sync" else (
        lambda: asyncio.run(driver.acall_tool("flaky", {})))
    outcome: queue.Queue[BaseException | None] = queue.Queue()

    def run() -> None:
        try:
            call()
        except BaseException as exc:
            outcome.put(exc)
        else:
            outcome.put(None)

    threading.Thread(target=run, daemon=True).start()
    error = outcome.get(timeout=20)  # a slept Retry-After would block here (and fail the test)
    driver.close()
    assert isinstance(error, ExecutionError) and error.details["status"] == 503
    assert error.details["retryable"] and error.details["retry_after"] >= 86400  # the model is told how long
    assert peer.count("/flaky") == 1  # not retried: the server asked for longer than the driver waits


# ----------------------------------------------------------------------------- G2


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_g2_the_circuit_opens_fails_fast_lets_one_probe_through_and_closes(peer: HostilePeer) -> None:
    clock = Clock()
    breaker = CircuitBreaker(failures=3, cooldown=30, clock=clock)
    with _driver(peer, retries=0, circuit_breaker=breaker) as driver:
        for _ in range(2):
            with pytest.raises(ExecutionError):
                driver.call_tool("fail", {})
        with pytest.raises(InvalidInputError):  # the caller's mistakes never count
            driver.call_tool("profile", {"id": "x", "unknown": 1})
        with pytest.raises(ExecutionError):
            driver.call_tool("fail", {})
        assert breaker.state() == "open" and peer.count("/fail") == 3
        started = time.perf_counter()
        with pytest.raises(ExecutionError, match="the circuit is open after 3 failures") as info:
            driver.call_tool("echo", {})
        assert time.perf_counter() - started < 0.010  # no I/O at all
        assert info.value.details == {"retryable": True, "retry_after": 30.0, "category": "circuit_open"}
        assert peer.count("/echo") == 0
        clock.now += 30  # the cool-down passed: one probe, which fails, re-opens
        with pytest.raises(ExecutionError):
            driver.call_tool("fail", {})
        assert peer.count("/fail") == 4 and breaker.state() == "open"
        with pytest.raises(ExecutionError, match="is open"):
            driver.call_tool("echo", {})
        clock.now += 30  # the next probe succeeds and closes it
        assert driver.call_tool("echo", {})["path"] == "/echo"
        assert breaker.state() == "closed"
        assert driver.call_tool("echo", {})["path"] == "/echo"


async def test_g2_exactly_one_probe_goes_while_the_circuit_is_half_open(peer: HostilePeer) -> None:
    clock = Clock()
    breaker = CircuitBreaker(failures=1, cooldown=5, clock=clock)
    driver = _driver(peer, retries=0, circuit_breaker=breaker)
    try:
        with pytest.raises(ExecutionError):
            await driver.acall_tool("fail", {})
        clock.now += 5
        probe = asyncio.create_task(driver.acall_tool("hold", {}))
        while peer.holding == 0:  # the probe is in flight at the peer
            await asyncio.sleep(0.01)
        with pytest.raises(ExecutionError, match="is open"):
            await driver.acall_tool("echo", {})
        peer.release.set()
        assert (await probe) == {"held": True}
        assert breaker.state() == "closed" and peer.count("/echo") == 0
    finally:
        await driver.aclose()


async def test_g2_a_cancelled_probe_leaves_the_circuit_open_for_the_next_probe(peer: HostilePeer) -> None:
    clock = Clock()
    breaker = CircuitBreaker(failures=3, cooldown=5, clock=clock)
    driver = _driver(peer, retries=0, circuit_breaker=breaker)
    try:
        for _ in range(3):
            with pytest.raises(ExecutionError):
                await driver.acall_tool("fail", {})
        clock.now += 5
        probe = asyncio.create_task(driver.acall_tool("hold", {}))
        while peer.holding == 0:
            await asyncio.sleep(0.01)
        probe.cancel()  # the probe ends with no outcome: it proved nothing
        with pytest.raises(asyncio.CancelledError):
            await probe
        assert breaker.state() == "half-open"
        peer.release.set()
        for _ in range(3):
            with pytest.raises(ExecutionError):
                await driver.acall_tool("fail", {})
        assert peer.count("/fail") == 3 + 1  # one new probe, which failed; the circuit opened again
        assert breaker.state() == "open"
    finally:
        await driver.aclose()


def test_g2_a_probe_refused_by_the_rate_limit_does_not_close_the_circuit(peer: HostilePeer) -> None:
    clock = Clock()
    breaker = CircuitBreaker(failures=2, cooldown=5, clock=clock)
    limit = RateLimit(calls=1, period=60, clock=clock)
    with _driver(peer, retries=0, circuit_breaker=breaker, rate_limit=limit) as driver:
        for agent in ("a1", "a2"):
            with pytest.raises(ExecutionError):
                driver.call_tool("fail", {}, context=AgentContext(agent_id=agent))
        clock.now += 5
        with pytest.raises(PolicyDeniedError, match="rate limit"):  # a1 drew the probe, over its quota
            driver.call_tool("fail", {}, context=AgentContext(agent_id="a1"))
        assert breaker.state() == "half-open" and peer.count("/fail") == 2
        for agent in ("a3", "a4"):
            with pytest.raises(ExecutionError):
                driver.call_tool("fail", {}, context=AgentContext(agent_id=agent))
        assert peer.count("/fail") == 2 + 1  # a3 was the probe; a4 met the re-opened circuit
        assert breaker.state() == "open"


# ----------------------------------------------------------------------------- G3


async def test_g3_cancelling_an_http_call_aborts_the_request_and_emits_nothing(peer: HostilePeer) -> None:
    driver = _driver(peer, timeout=30)
    try:
        task = asyncio.create_task(driver.acall_tool("drip_body", {}))
        while not peer.requests:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        deadline = time.monotonic() + 5
        while peer.broken == 0 and time.monotonic() < deadline:  # the peer sees the connection go
            await asyncio.sleep(0.05)
        assert peer.broken == 1
    finally:
        await driver.aclose()


async def test_g3_cancelling_a_cli_call_kills_its_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    data = {"mcpFileVersion": "0.1.0", "name": "g3", "version": "1", "tools": [{
        "name": "run", "description": "run", "inputSchema": {"type": "object", "properties": {}},
        "invocation": {"cli": {"command": f"sleep 600 & echo $! > '{pid_file}'; wait"}}}]}
    path = tmp_path / "g3.yaml"
    path.write_text(yaml.safe_dump(data))
    with MCPFileDriver(path, timeout=60) as driver:
        task = asyncio.create_task(driver.acall_tool("run", {}))
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert_process_gone(int(pid_file.read_text()))


async def test_g3_cancelling_a_grpc_call_cancels_it_on_the_server(grpc_lab: Any) -> None:
    from mcs_grpc import GrpcDriver

    grpc_lab.state.reset()
    with GrpcDriver(grpc_lab.target, timeout=30) as driver:
        task = asyncio.create_task(driver.acall_tool("Lab_Slow", {"seconds": 20}))
        while grpc_lab.state.calls.get("Slow", 0) == 0:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert await asyncio.to_thread(grpc_lab.state.cancelled.wait, 5)  # the server saw the call end early
    assert grpc_lab.state.calls["Slow"] == 1  # and it was not sent again


@pytest.mark.skip(reason="G3 for an MQTT QoS1 publish has no window to observe here: the MQTT driver publishes "
                         "and waits for the broker's PUBACK within the call, and a loopback mosquitto acknowledges "
                         "in about a millisecond, so a cancellation cannot land between send and acknowledgement")
def test_g3_cancelling_an_mqtt_publish_does_not_retry_it() -> None:
    raise AssertionError("not reached")


# ----------------------------------------------------------------------------- G4


async def test_g4_excess_calls_are_refused_at_once_and_other_agents_keep_their_quota(peer: HostilePeer) -> None:
    clock = Clock()  # the minute does not pass while the test runs, however slow the machine
    limit = RateLimit(concurrent=10, calls=20, period=60, clock=clock)
    driver = _driver(peer, rate_limit=limit, timeout=30)
    busy = AgentContext(agent_id="busy")
    try:
        started = time.monotonic()
        tasks = [asyncio.create_task(driver.acall_tool("hold", {}, context=busy)) for _ in range(200)]
        refused: list[PolicyDeniedError] = []
        while len(refused) < 190:
            done, _ = await asyncio.wait(tasks, timeout=5, return_when=asyncio.FIRST_COMPLETED)
            assert done, "the excess calls were not refused promptly"
            for task in done:
                tasks.remove(task)
                error = task.exception()
                assert isinstance(error, PolicyDeniedError)
                refused.append(error)
        assert time.monotonic() - started < 5
        while peer.holding < 10:
            await asyncio.sleep(0.01)
        assert peer.most_held == 10  # never more than the concurrency limit at the peer
        assert all(e.details["retryable"] and e.details["retry_after"] > 0 for e in refused)
        other = await driver.acall_tool("echo", {}, context=AgentContext(agent_id="other"))
        assert other["path"] == "/echo"  # another agent's quota is its own
        peer.release.set()
        assert [await task for task in tasks] == [{"held": True}] * 10
        for _ in range(10):  # 20 per minute on this tool: 10 used, 10 left (the refused ones took none)
            await driver.acall_tool("hold", {}, context=busy)
        with pytest.raises(PolicyDeniedError, match="made 20 calls in 60 s") as info:
            await driver.acall_tool("hold", {}, context=busy)
        assert info.value.details["retry_after"] == 3.0  # one call every 60 / 20 s
        clock.now += 3
        assert (await driver.acall_tool("hold", {}, context=busy)) == {"held": True}
    finally:
        await driver.aclose()



def test_g4_f3_a_stream_whose_opening_fails_gives_back_its_slot_and_is_audited_once(peer: HostilePeer) -> None:
    driver = _driver(peer, description_mode="discovery", rate_limit=RateLimit(concurrent=1))
    seen: list[str] = []
    driver.controls.on_execute_start(lambda event: seen.append("start"))
    driver.controls.on_execute_end(lambda event: seen.append("end"))
    driver.controls.on_execute_error(lambda event: seen.append(f"error:{event.error and event.error.code.value}"))
    with driver:
        for _ in range(3):  # describe_tool fails before its one-item stream opens
            with pytest.raises(ToolNotFoundError):
                list(driver.stream_call("describe_tool", {"name": "nope"}))
        assert [item["name"] for item in driver.stream_call("describe_tool", {"name": "echo"})] == ["echo"]
    assert seen == ["start", "error:TOOL_NOT_FOUND"] * 3 + ["start", "end"]


@contextlib.contextmanager
def _order_desk(ran: list[str], **controls: Any) -> Iterator[Callable[[str, str], dict[str, Any]]]:
    """An RFC-0001 server on loopback with one tool, ``order`` (each item is recorded in
    ``ran``; the item "broken" fails as an unreachable warehouse), ``controls`` set on its
    controls; yields ``call(item, agent)``, the server's JSON answer to that agent's call."""
    import uvicorn
    from pydantic import BaseModel
    from support.servers import uvicorn_on_loopback

    from mcs.server import McpServer

    class Order(BaseModel):
        item: str

    class Done(BaseModel):
        ok: bool

    server = McpServer(name="g4", version="1")

    @server.tool(name="order", idempotent=False)
    def order(req: Order) -> Done:
        ran.append(req.item)
        if req.item == "broken":
            raise ConnectionError("the warehouse is down")
        return Done(ok=True)

    for name, value in controls.items():
        setattr(server.controls, name, value)
    config = uvicorn.Config(server.asgi_app(), log_level="critical", lifespan="off")
    try:
        with uvicorn_on_loopback(config, timeout=10) as url:

            def call(item: str, agent: str) -> dict[str, Any]:
                answer = httpx.post(url + "/mcp/execute", json={"tool": "order", "arguments": {"item": item}},
                                    headers={"X-Agent-Id": agent}, timeout=10)
                body: dict[str, Any] = answer.json()
                return body

            yield call
    finally:
        server.close()


def test_g2_g4_the_rfc0001_server_applies_the_limits_set_on_its_controls() -> None:
    ran: list[str] = []
    clock = Clock()
    with _order_desk(ran, rate_limit=RateLimit(calls=3, period=60, clock=clock),
                     circuit_breaker=CircuitBreaker(failures=2, cooldown=30, clock=clock)) as call:
        assert [call("tea", "busy")["result"] for _ in range(3)] == [{"ok": True}] * 3
        refused = call("tea", "busy")
        assert refused["error"] == "POLICY_DENIED" and "3 calls in 60 s" in refused["message"]
        assert call("tea", "other")["result"] == {"ok": True}  # another agent's quota is its own
        assert ran == ["tea"] * 4
        assert [call("broken", f"b{i}")["error"] for i in range(2)] == ["EXECUTION_ERROR"] * 2
        open_circuit = call("tea", "fresh")
        assert open_circuit["error"] == "EXECUTION_ERROR" and "circuit is open" in open_circuit["message"]
        assert ran == ["tea"] * 4 + ["broken"] * 2  # the open circuit sent nothing


def test_g4_a_budget_shared_by_all_agents_cannot_be_escaped_by_choosing_a_new_agent_id() -> None:
    ran: list[str] = []
    with _order_desk(ran, rate_limit=RateLimit(calls=3, period=60, per_agent=False, clock=Clock())) as call:
        answers = [call(f"tea{i}", f"agent-{i}") for i in range(5)]
    assert [answer.get("error") for answer in answers] == [None] * 3 + ["POLICY_DENIED"] * 2
    assert "all agents together made 3 calls in 60 s" in answers[3]["message"]
    assert ran == ["tea0", "tea1", "tea2"]  # the fresh ids ran nothing past the shared budget


class _Orders(ToolDriver):
    """A driver written the plain way (``_call_tool`` only): its calls with a deadline run on
    a worker thread; each posts an order to the peer."""

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(**options)
        self.url = url
        self.posted = threading.Event()

    def _list_tools(self) -> list[Tool]:
        return [Tool(name="order", input_schema={"type": "object", "properties": {}})]

    def _call_tool(self, invocation: Invocation) -> Any:
        answer = httpx.post(self.url + "/echo", content=b"order", timeout=5).json()
        self.posted.set()
        return answer


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_g3_a_call_whose_deadline_passed_during_admission_times_out_without_acting(
    peer: HostilePeer, mode: str
) -> None:
    driver = _Orders(peer.url, timeout=0.2)
    ends: list[ExecutionEvent] = []
    driver.controls.on_execute_end(ends.append)
    driver.controls.on_execute_error(ends.append)

    @driver.add_policy
    def slow(context: AgentContext, tool: str, args: Any) -> PolicyDecision:
        time.sleep(0.3)  # a slow policy (a remote policy engine, an audit store) eats the deadline
        return PolicyDecision.allow()

    with pytest.raises(ToolTimeoutError, match="was not run"):
        if mode == "sync":
            driver.call_tool("order", {})
        elif mode == "async":
            asyncio.run(driver.acall_tool("order", {}))
        else:
            list(driver.stream_call("order", {}))
    assert not driver.posted.wait(2)  # no worker thread went on to post it
    assert peer.count("/echo") == 0
    assert len(ends) == 1 and ends[0].error is not None and ends[0].error.code.value == "TIMEOUT"


class _Holder(_Orders):
    """Each call waits at the peer's ``/hold`` until the peer releases it."""

    def _list_tools(self) -> list[Tool]:
        return [Tool(name="hold", input_schema={"type": "object", "properties": {}})]

    def _call_tool(self, invocation: Invocation) -> Any:
        return httpx.get(self.url + "/hold", timeout=30).json()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_g4_a_call_abandoned_at_its_deadline_keeps_its_concurrency_slot_while_it_still_runs(
    peer: HostilePeer, mode: str
) -> None:
    driver = _Holder(peer.url, timeout=0.2, rate_limit=RateLimit(concurrent=2))

    def call() -> Any:
        return driver.call_tool("hold", {}) if mode == "sync" else asyncio.run(driver.acall_tool("hold", {}))

    try:
        for _ in range(2):
            with pytest.raises(ToolTimeoutError, match=r"did not finish within 0\.2 s"):
                call()
        for _ in range(3):  # both abandoned calls still hold a request open at the peer
            with pytest.raises(PolicyDeniedError, match="2 calls of 'anonymous' are already running"):
                call()
        assert peer.most_held == 2
    finally:
        peer.release.set()
    deadline = time.monotonic() + 10
    while True:  # once the abandoned threads end, their slots come back
        try:
            assert driver.call_tool("hold", {}) == {"held": True}
            break
        except PolicyDeniedError:
            assert time.monotonic() < deadline, "the slots of the ended calls never came back"
            time.sleep(0.05)
    assert peer.count("/hold") == 3
