"""A generic MCP server transport: JSON-RPC over stateless Streamable HTTP.

Nothing here knows the catalog: :class:`~affordances.mcp.transport.server.Server` answers
the lifecycle methods and dispatches every other method to the handlers an application
gives it; :class:`~affordances.mcp.transport.http.StreamableHttpView` is the HTTP side.
"""
