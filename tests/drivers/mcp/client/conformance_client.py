"""The bridge's MCP client as the official conformance suite drives it.

The suite runs ``python conformance_client.py SERVER_URL`` with ``MCP_CONFORMANCE_SCENARIO``
(and ``MCP_CONFORMANCE_CONTEXT``, JSON, for credentials) in the environment. Every
scenario goes through the MCS ``mcp`` driver and its documented options only: connect,
list tools, and run a call as an LLM would (``process_llm_response``) or by name.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from mcs_mcp.client import elicit_defaults, headless_authorize
from mcs_mcp.client_driver import MCPDriver

from mcs.errors import ToolCallError

REDIRECT_URI = "http://localhost:3000/callback"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def options_for(scenario: str, url: str, context: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {"url": url, "timeout": 20, "on_elicit": elicit_defaults}
    if scenario.startswith("auth/client-credentials"):
        options["client_id"] = context["client_id"]
        if "client_secret" in context:
            options["client_secret"] = context["client_secret"]
        if "private_key_pem" in context:
            options["private_key_pem"] = context["private_key_pem"]
            options["signing_algorithm"] = context.get("signing_algorithm", "RS256")
    elif scenario.startswith("auth/"):
        options.update(
            oauth_redirect_uri=REDIRECT_URI,
            oauth_authorize=headless_authorize,
            oauth_client_metadata_url=CLIENT_METADATA_URL,
            oauth_client_name="mcs-conformance-client",
        )
        if "client_id" in context:  # a pre-registered client
            options["client_id"] = context["client_id"]
            if context.get("client_secret"):
                options["client_secret"] = context["client_secret"]
    return options


def main() -> int:
    url = sys.argv[1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with MCPDriver(**options_for(scenario, url, context)) as driver:
        tools = driver.list_tools()
        print(f"{scenario}: {len(tools)} tools: {', '.join(t.name for t in tools)}")
        if scenario == "tools_call":
            result = driver.process_llm_response({"tool": "add_numbers", "arguments": {"a": 5, "b": 3}})
        elif scenario == "sse-retry":
            result = driver.process_llm_response({"tool": "test_reconnection", "arguments": {}})
        elif scenario == "elicitation-sep1034-client-defaults":
            result = driver.process_llm_response({"tool": "test_client_elicitation_defaults", "arguments": {}})
        elif scenario.startswith("auth/") and tools:
            try:  # the first tool, as the SDK's own conformance client does
                result = driver.call_tool(tools[0].name, {})
            except ToolCallError as error:
                result = error.to_dict()
        else:
            return 0
        print(f"-> {result!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
