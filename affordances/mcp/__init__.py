"""The MCP face of the catalog: JSON-RPC over Streamable HTTP, stateless (docs/protocol.md#mcp).

``transport`` is a generic MCP server (JSON-RPC, protocol revisions, the HTTP view);
the rest binds it to the catalog: tools, resources and the three profiles of
docs/protocol.md#mcp-profiles.
No business rule lives in this package. Import what a URLconf needs from here::

    from affordances.mcp import FORMS, HYBRID, STATIC, McpView
"""

from __future__ import annotations

from affordances.mcp.authorization import protected_resource_urls
from affordances.mcp.profiles import COMPACT, FORMS, HYBRID, PROFILES, STATIC, Profile
from affordances.mcp.views import McpView

__all__ = [
    "COMPACT",
    "FORMS",
    "HYBRID",
    "PROFILES",
    "STATIC",
    "McpView",
    "Profile",
    "protected_resource_urls",
]
