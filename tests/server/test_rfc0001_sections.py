"""RFC-0001 section by section, where the audit of the seed found gaps: strict schemas (3),
the RFC's own examples (7, 8, 13, 14), agent context injection (10), policy arguments (11),
the hook rule for every server (12), versioning (16) and policies in production (17)."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ConfigDict
from rfc0001_helpers import running_app

import mcs
from mcs.errors import ConfigurationError
from mcs.server import (
    AgentContext,
    DriverBackend,
    ExecutionEvent,
    McpServer,
    PolicyDecision,
    ToolMetadata,
    tool,
)
from mcs.server.app import create_app
from mcs.server.client import RFC0001Driver

# ------------------------------------------------------------------ the RFC's own examples


class CustomerRequest(BaseModel):
    customer_id: str


class CustomerResponse(BaseModel):
    customer_id: str
    status: str


@tool(name="get_customer")
def get_customer(req: CustomerRequest) -> CustomerResponse:
    ...


@tool(name="get_customer")
def get_customer_for_real(req: CustomerRequest) -> CustomerResponse:
    return CustomerResponse(customer_id=req.customer_id, status="active")


def test_rfc0001_s7_s8_the_examples_run_as_written() -> None:
    server = McpServer(name="customer-mcp", version="1.0.0", transport="http", description=None)
    server.add_tool(get_customer)  # the section 8 example, body and all
    [metadata] = server.tools
    assert isinstance(metadata, ToolMetadata)
    assert (metadata.name, metadata.timeout_ms, metadata.idempotent) == ("get_customer", 1000, True)
    outcome = server.execute("get_customer", {"customer_id": "c-1"})
    assert outcome.body()["error"] == "EXECUTION_ERROR"  # its body is `...`: it returns None
    assert "not its declared output model CustomerResponse" in outcome.body()["message"]


def test_rfc0001_s13_s14_the_wire_shapes_are_the_rfcs() -> None:
    server = McpServer(name="customer-mcp", version="1.0.0")
    server.add_tool(get_customer_for_real)

    @server.add_policy
    def prod(ctx: AgentContext, tool_name: str, args: dict[str, Any]) -> PolicyDecision:
        return PolicyDecision.deny("Blocked in prod") if ctx.metadata.get("env") == "prod" else PolicyDecision.allow()

    with running_app(server.asgi_app()) as url:
        capabilities = httpx.get(url + "/mcp/capabilities", timeout=5).json()
        assert {"server", "version", "tools"} <= set(capabilities)
        assert (capabilities["server"], capabilities["version"]) == ("customer-mcp", "1.0.0")
        request = {"tool": "get_customer", "arguments": {"customer_id": "c-1"}}
        done = httpx.post(url + "/mcp/execute", json=request, timeout=5)
        assert done.status_code == 200 and done.json()["result"] == {"customer_id": "c-1", "status": "active"}
        denied = httpx.post(url + "/mcp/execute", json=request, headers={"X-Agent-Meta-Env": "prod"}, timeout=5)
    assert denied.status_code == 403
    body = denied.json()
    assert set(body) == {"error", "message"} and body["error"] == "POLICY_DENIED"
    assert body["message"].endswith("Blocked in prod")
    server.close()


def test_rfc0001_s13_the_capabilities_document_is_pinned() -> None:
    server = McpServer(name="customer-mcp", version="1.0.0", description="Customers.")
    server.add_tool(get_customer_for_real)
    document = server.capabilities()
    assert list(document) == ["server", "version", "description", "protocol", "tools"]
    assert (type(document["server"]), type(document["version"]), type(document["protocol"])) == (str, str, str)
    assert document["description"] == "Customers." and document["protocol"] == "1.0"
    [entry] = document["tools"]
    assert list(entry) == ["name", "description", "input_schema", "output_schema", "timeout_ms", "idempotent"]
    types = [type(entry[k]) for k in ("name", "input_schema", "output_schema", "timeout_ms", "idempotent")]
    assert types == [str, dict, dict, int, bool] and entry["description"] is None
    json.dumps(document)  # plain JSON all the way down
    server.close()


# ------------------------------------------------------------------ section 3: strict schemas


class Order(BaseModel):
    quantity: int
    tags: list[str] = []


class Placed(BaseModel):
    quantity: int


class StrictOrder(BaseModel):
    model_config = ConfigDict(strict=True)
    quantity: int


def _place(req: Order) -> Placed:
    return Placed(quantity=req.quantity)


def _place_strict(req: StrictOrder) -> Placed:
    return Placed(quantity=req.quantity)


def test_rfc0001_s3_the_wire_is_strict_by_default() -> None:
    server = McpServer(name="shop", version="1")
    server.add_tool(tool(name="place")(_place))
    server.add_tool(tool(name="place_strict")(_place_strict))
    for name, arguments in [("place", {"quantity": "5"}), ("place", {"quantity": 5, "tags": "a"}),
                            ("place_strict", {"quantity": "5"})]:
        body = server.execute(name, arguments).body()
        assert body["error"] == "INVALID_INPUT", (name, arguments)
    assert server.execute("place", {"quantity": 5, "tags": ["a"]}).result == {"quantity": 5}
    server.close()


def test_rfc0001_s3_the_repairs_for_llm_output_are_opt_in_on_the_server() -> None:
    server = McpServer(name="shop", version="1", strict=False)
    server.add_tool(tool(name="place")(_place))
    assert server.execute("place", {"quantity": "5", "tags": "a"}).result == {"quantity": 5}
    server.close()


def test_rfc0001_s3_the_mcs_driver_path_still_repairs_what_models_write() -> None:
    server = McpServer(name="shop", version="1")
    server.add_tool(tool(name="place")(_place))
    with running_app(server.asgi_app()) as url, RFC0001Driver(url) as driver:
        assert driver.process_llm_response('{"tool": "place", "arguments": {"quantity": "5"}}') == {"quantity": 5}
    server.close()


def test_rfc0001_s3_a_served_driver_is_strict_on_the_wire_too() -> None:
    backend = DriverBackend(mcs.load_driver("functions"))
    assert backend.execute("add", {"a": "2", "b": 3}).body()["error"] == "INVALID_INPUT"
    assert backend.execute("add", {"a": 2, "b": 3}).result == 5
    assert DriverBackend(mcs.load_driver("functions"), strict=False).execute("add", {"a": "2", "b": 3}).result == 5


# ------------------------------------------------------------------ section 10: context injection


class Empty(BaseModel):
    pass


class Who(BaseModel):
    agent: str | None


def _who(req: Empty, ctx: AgentContext | None = None) -> Who:
    return Who(agent=ctx.agent_id if ctx is not None else None)


def test_rfc0001_s10_an_optional_context_parameter_is_injected() -> None:
    server = McpServer(name="s", version="1")
    server.add_tool(tool(name="who")(_who))
    assert server.execute("who", {}, AgentContext(agent_id="a-7")).result == {"agent": "a-7"}
    assert "ctx" not in json.dumps(server.tools[0].input_schema)
    server.close()

    @mcs.tool
    def whoami(ctx: AgentContext | None = None) -> str:
        """Who calls."""
        return ctx.agent_id if ctx is not None else "nobody"

    assert mcs.FunctionDriver([whoami]).call_tool("whoami", context=AgentContext(agent_id="b-2")) == "b-2"


# ------------------------------------------------------------------ sections 11 and 12


def _hooked_backend(driver: mcs.ToolDriver) -> tuple[DriverBackend, list[tuple[str, str, str | None]]]:
    seen: list[tuple[str, str, str | None]] = []
    driver.on_execute_start(lambda e: seen.append(("start", e.tool, None)))
    driver.on_execute_end(lambda e: seen.append(("end", e.tool, None)))
    driver.on_execute_error(lambda e: seen.append(("error", e.tool, e.error.code.value if e.error else None)))
    return DriverBackend(driver), seen


def test_rfc0001_s12_a_served_driver_fires_start_and_one_terminal_hook_for_every_execution() -> None:
    driver = mcs.load_driver("functions")
    driver.add_policy(lambda ctx, name, args: PolicyDecision.deny("no") if args.get("a") == 13 else PolicyDecision.allow())
    backend, seen = _hooked_backend(driver)
    backend.execute("nope", {})
    backend.execute("add", {"a": "x", "b": 1})
    backend.execute("add", {"a": 13, "b": 1})
    backend.execute("add", {"a": 1, "b": 1})
    assert seen == [
        ("start", "nope", None), ("error", "nope", "TOOL_NOT_FOUND"),
        ("start", "add", None), ("error", "add", "INVALID_INPUT"),
        ("start", "add", None), ("error", "add", "POLICY_DENIED"),
        ("start", "add", None), ("end", "add", None),
    ]


def test_rfc0001_s12_mcs_serve_fires_the_drivers_hooks_for_refused_calls_too() -> None:
    driver = mcs.load_driver("functions")
    backend, seen = _hooked_backend(driver)
    with running_app(create_app(backend)) as url:
        httpx.post(url + "/mcp/execute", json={"tool": "nope", "arguments": {}}, timeout=5)
    assert seen == [("start", "nope", None), ("error", "nope", "TOOL_NOT_FOUND")]


def test_rfc0001_s11_s12_policies_and_audit_hooks_get_a_dict_and_hook_errors_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = McpServer(name="shop", version="1")
    server.add_tool(tool(name="place")(_place))
    audit: list[str] = []

    @server.add_policy
    def log_args(ctx: AgentContext, tool_name: str, args: dict[str, Any]) -> PolicyDecision:
        audit.append("policy " + json.dumps(args))
        return PolicyDecision.allow()

    @server.on_execute_start
    def record(event: ExecutionEvent) -> None:
        audit.append("hook " + json.dumps(event.arguments))

    @server.on_execute_end
    def broken(event: ExecutionEvent) -> None:
        raise RuntimeError("audit sink is down")

    with caplog.at_level(logging.ERROR, "mcs.pipeline"):
        assert server.execute("place", {"quantity": 2}).ok
    assert audit == ['hook {"quantity": 2}', 'policy {"quantity": 2}']
    [logged] = [r for r in caplog.records if r.name == "mcs.pipeline"]
    assert "end hook" in logged.getMessage() and "broken" in logged.getMessage() and "place" in logged.getMessage()
    assert logged.exc_info is not None
    server.close()


# ------------------------------------------------------------------ sections 16 and 17


def _refund(req: Order) -> Placed:
    return Placed(quantity=-req.quantity)


def test_rfc0001_s17_non_idempotent_tools_without_a_policy_are_warned_about_or_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lax = McpServer(name="shop", version="1")
    lax.add_tool(tool(name="refund", idempotent=False)(_refund))
    with caplog.at_level(logging.WARNING, "mcs.server"):
        lax.asgi_app()
    assert "refund" in caplog.text and "section 17" in caplog.text
    strict = McpServer(name="shop", version="1", require_policies=True)
    strict.add_tool(tool(name="refund", idempotent=False)(_refund))
    with pytest.raises(ConfigurationError, match="policies mandatory in production"):
        strict.asgi_app()
    strict.add_policy(lambda ctx, name, args: PolicyDecision.allow())
    strict.asgi_app()
    lax.close()
    strict.close()


def test_rfc0001_s16_the_client_refuses_another_major_version_of_the_wire() -> None:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def capabilities(request: Any) -> JSONResponse:
        return JSONResponse({"server": "future", "version": "9", "protocol": "2.0", "tools": []})

    with running_app(Starlette(routes=[Route("/mcp/capabilities", capabilities)])) as url:
        driver = RFC0001Driver(url)
        with pytest.raises(ConfigurationError, match=r"protocol 2\.0; this client speaks 1\.0"):
            driver.list_tools()
        assert driver.healthcheck()["status"] == "error"
        driver.close()
