"""MCS bridge to MCP: gen-mcp files and MCP servers as drivers, any driver as an MCP server."""
