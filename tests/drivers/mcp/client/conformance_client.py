"""The bridge's MCP client as the official conformance suite drives it.

The suite runs ``python conformance_client.py SERVER_URL`` with ``MCP_CONFORMANCE_SCENARIO``
(and ``MCP_CONFORMANCE_CONTEXT``, JSON, for credentials) in the environment. Every
scenario goes through the MCS driver: connect, list tools, and for ``tools_call`` run an
LLM-style call through ``process_llm_response``.
"""

from __future__ import annotations

import json
import os
import sys

from mcs_mcp.client_driver import MCPDriver


def main() -> int:
    url = sys.argv[1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    options: dict[str, object] = {"url": url, "timeout": 20}
    if "client_id" in context:
        options["client_id"] = context["client_id"]
        if "client_secret" in context:
            options["client_secret"] = context["client_secret"]
        if "private_key_pem" in context:
            options["private_key_pem"] = context["private_key_pem"]
            options["signing_algorithm"] = context.get("signing_algorithm", "RS256")
    with MCPDriver(**options) as driver:  # type: ignore[arg-type]
        tools = driver.list_tools()
        print(f"{scenario}: {len(tools)} tools: {', '.join(t.name for t in tools)}")
        if scenario == "tools_call":
            result = driver.process_llm_response({"tool": "add_numbers", "arguments": {"a": 5, "b": 3}})
            print(f"add_numbers -> {result!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
