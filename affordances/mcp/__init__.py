"""The MCP face of the catalog: JSON-RPC over Streamable HTTP, stateless (SPEC §7).

``views.McpView`` takes the HTTP request, ``dispatch.Dispatcher`` the JSON-RPC message,
``profiles.Profile`` says what one endpoint offers; tools and resources translate to
the catalog and to the one execution path. No business rule lives in this package.
"""
