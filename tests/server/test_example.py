"""The example server: denies writes in prod, audits every execution as JSON lines."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import httpx
from rfc0001_helpers import running_app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rfc0001_server.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rfc0001_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the models' annotations through it
    spec.loader.exec_module(module)
    return module


def _post(url: str, tool: str, arguments: dict[str, str], request_id: str) -> httpx.Response:
    return httpx.post(url + "/mcp/execute", json={"tool": tool, "arguments": arguments},
                      headers={"X-Agent-Id": "support-bot", "X-Request-Id": request_id})


def test_prod_denies_writes_and_the_audit_records_every_execution(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    server = _example().build_server("prod", audit)
    with running_app(server.asgi_app()) as url:
        read = _post(url, "get_customer", {"customer_id": "c-1"}, "r1")
        write = _post(url, "set_status", {"customer_id": "c-1", "status": "closed"}, "r2")
        missing = _post(url, "get_customer", {"customer_id": "c-404"}, "r3")
    server.close()
    assert read.json()["result"] == {"customer_id": "c-1", "status": "active"}
    assert write.status_code == 403
    assert write.json() == {"error": "POLICY_DENIED", "message":
                            "The call to set_status was denied by policy: "
                            "set_status changes data and is blocked in prod"}
    assert missing.status_code == 502 and "no customer 'c-404'" in missing.json()["message"]
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["request_id"], r["phase"], r.get("error")) for r in lines] == [
        ("r1", "start", None), ("r1", "end", None),
        ("r2", "start", None), ("r2", "error", "POLICY_DENIED"),
        ("r3", "start", None), ("r3", "error", "EXECUTION_ERROR"),
    ]
    assert {r["agent_id"] for r in lines} == {"support-bot"}
    assert all(r["environment"] == "prod" for r in lines)


def test_dev_allows_writes(tmp_path: Path) -> None:
    server = _example().build_server("dev", tmp_path / "audit.jsonl")
    with running_app(server.asgi_app()) as url:
        write = _post(url, "set_status", {"customer_id": "c-2", "status": "active"}, "w1")
    server.close()
    assert write.status_code == 200 and write.json()["result"]["status"] == "active"
