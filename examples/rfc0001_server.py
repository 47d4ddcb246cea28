"""An RFC-0001 server: two tools, a policy that denies by environment, a JSON-lines audit.

    pip install 'mcs-framework[server]'
    python examples/rfc0001_server.py --env prod --audit audit.jsonl --port 8000

    curl -s localhost:8000/mcp/capabilities
    curl -s localhost:8000/mcp/execute -H 'content-type: application/json' \
         -H 'X-Agent-Id: support-bot' -d '{"tool": "get_customer", "arguments": {"customer_id": "c-1"}}'

In ``prod`` the policy refuses every tool that is not idempotent (``set_status``
changes data); every execution, allowed or not, leaves a start line and one end or
error line in the audit file. A tool raises ``ExecutionError`` for a failure the model
should read about; any other exception reaches the client as its type only (the text
goes to the server's log).
"""

from __future__ import annotations

import argparse
import json
import os
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from mcs.errors import ExecutionError
from mcs.server import AgentContext, ExecutionEvent, McpServer, PolicyDecision, tool

_CUSTOMERS: dict[str, str] = {"c-1": "active", "c-2": "suspended"}


class CustomerRequest(BaseModel):
    customer_id: str


class CustomerResponse(BaseModel):
    customer_id: str
    status: str


class StatusChange(BaseModel):
    customer_id: str
    status: Literal["active", "suspended", "closed"]


@tool(name="get_customer", description="Look up a customer's status by id.")
def get_customer(req: CustomerRequest) -> CustomerResponse:
    status = _CUSTOMERS.get(req.customer_id)
    if status is None:
        raise ExecutionError(f"no customer {req.customer_id!r}")
    return CustomerResponse(customer_id=req.customer_id, status=status)


@tool(name="set_status", description="Change a customer's status.", idempotent=False, timeout_ms=2000)
def set_status(req: StatusChange, ctx: AgentContext) -> CustomerResponse:
    if req.customer_id not in _CUSTOMERS:
        raise ExecutionError(f"no customer {req.customer_id!r}")
    _CUSTOMERS[req.customer_id] = req.status
    return CustomerResponse(customer_id=req.customer_id, status=req.status)


def build_server(environment: str, audit_path: Path) -> McpServer:
    """The example server for ``environment`` ("dev", "staging", "prod"), auditing to ``audit_path``."""
    server = McpServer(name="customer-mcp", version="1.0.0",
                       description=f"Customer records ({environment})")
    server.add_tool(get_customer)
    server.add_tool(set_status)
    idempotent = {meta.name: meta.idempotent for meta in server.tools}

    @server.add_policy
    def read_only_in_prod(ctx: AgentContext, tool_name: str, args: Any) -> PolicyDecision:
        if environment == "prod" and not idempotent.get(tool_name, False):
            return PolicyDecision.deny(f"{tool_name} changes data and is blocked in prod")
        return PolicyDecision.allow()

    lock = threading.Lock()

    def audit(phase: str, event: ExecutionEvent) -> None:
        record: dict[str, Any] = {
            "phase": phase,
            "tool": event.tool,
            "agent_id": event.context.agent_id,
            "model": event.context.model,
            "request_id": event.context.request_id,
            "started_at": event.started_at,
            "environment": environment,
        }
        if event.duration_ms is not None:
            record["duration_ms"] = round(event.duration_ms, 3)
        if event.error is not None:
            record["error"] = event.error.code.value
            record["message"] = event.error.message
        with lock, audit_path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")

    server.on_execute_start(lambda event: audit("start", event))
    server.on_execute_end(lambda event: audit("end", event))
    server.on_execute_error(lambda event: audit("error", event))
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default=os.environ.get("APP_ENV", "dev"))
    parser.add_argument("--audit", type=Path, default=Path("audit.jsonl"))
    parser.add_argument("--transport", choices=["http", "websocket", "stdio"], default="http")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    build_server(args.env, args.audit).run(host=args.host, port=args.port, transport=args.transport)


if __name__ == "__main__":
    main()
