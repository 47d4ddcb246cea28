"""A real MCP server (official SDK) whose tool takes a secret, and that logs it back.

Run as ``python vault_server.py`` (stdio) or ``python vault_server.py --http PORT``
(streamable HTTP on 127.0.0.1). ``unlock``'s ``password`` is a ``SecretStr`` (its schema
says ``format: password``, ``writeOnly``); the tool sends the client a log message quoting
it (a careless server) and answers whether it was right.
"""

from __future__ import annotations

from _transport import serve_as_asked
from mcp.server.mcpserver import Context, MCPServer
from pydantic import SecretStr

PASSWORD = "open-sesame-4711"

server = MCPServer("vault", version="1.0.0")


@server.tool(description="Unlock the vault with its password.")
async def unlock(password: SecretStr, ctx: Context) -> str:
    await ctx.info(f"unlock tried with {password.get_secret_value()}")
    return "unlocked" if password.get_secret_value() == PASSWORD else "wrong password"


def main() -> None:
    serve_as_asked(server)


if __name__ == "__main__":
    main()
