"""A profile is what one MCP endpoint tells an agent — plain data; the server is shared.

Every endpoint runs the same JSON-RPC dispatch over the same catalog and execution
path. What differs is the tool set offered, whether representations carry their
affordances, whether problems carry ``current``, and the instructions
(docs/protocol.md#mcp-profiles).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["COMPACT", "FORMS", "HYBRID", "PROFILES", "STATIC", "Profile", "ToolSetKind"]


class ToolSetKind(StrEnum):
    # One tool per catalog operation the caller may know about (docs/protocol.md#mcp).
    CATALOG = "catalog"
    # read_resource and submit_form over HAL-FORMS (docs/protocol.md#mcp-profiles).
    FORMS = "forms"


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    instructions: str
    tools: ToolSetKind = ToolSetKind.CATALOG
    # Representations carry `affordances`/`unavailableAffordances` (docs/protocol.md#affordances)…
    affordances: bool = True
    # …in their compact shape: only what varies per object (affordances.entries).
    compact: bool = False
    # 409/412 problems carry `current`, the object as it is now.
    problem_current: bool = True
    # Objects are MCP resources too (template, list, read), named by their `url`.
    resources: bool = True
    # tools/list and resources/list page size; clients must not assume it.
    page_size: int = 50
    # How long a caller may cache tools/list and the templates (2026-07-28 ttlMs): the
    # catalog changes with deployments, never with requests.
    list_ttl_ms: int = 300_000


_HYBRID_INSTRUCTIONS = """\
Operations on these resources are tools of one stable catalog; which of them applies \
to an object right now is stated by the object itself.

1. Read before you act: fetch the object with its get_* tool (many with list_*, or \
resources/read on its `url`). Its `affordances` are the operations that apply now: the \
tool `name`, the bound `arguments` (the object's id), `constraints` (a JSON Schema that \
narrows the tool's inputSchema: only these values will be accepted{compact}) and \
`validForVersion`. `unavailableAffordances` lists operations you could use that do not \
apply now, each with a machine `reason`: do not call them.
2. Act only on an affordance: call its tool with its `arguments`, values within its \
`constraints`, and `expectedVersion` set to its `validForVersion`.
3. A success returns the new representation with fresh affordances; continue from it. \
A refusal is a tool result with isError and a problem whose `code` says why: \
not_found, stale_version, operation_not_available (with `reason`), validation_error \
(with `errors` per argument), idempotency_key_reused or idempotency_key_in_use. \
stale_version and operation_not_available carry `current`, the object as it is now. \
On stale_version the object changed since you read it: read it again (or use \
`current`) and decide anew; never resend the same call blindly.
4. To retry safely after a lost answer, send the same \
`_meta["affordances/idempotencyKey"]` again: the first success is replayed, nothing \
runs twice.
"""

HYBRID_INSTRUCTIONS = _HYBRID_INSTRUCTIONS.format(compact="")

HYBRID = Profile(
    name="hybrid",
    title="Affordances (catalog + affordances)",
    instructions=HYBRID_INSTRUCTIONS,
)

# The hybrid profile's tools and rules; an affordance names its tool and carries only what
# varies, the rest is in the tool's definition (docs/protocol.md#compact).
COMPACT_INSTRUCTIONS = _HYBRID_INSTRUCTIONS.format(
    compact="; absent when nothing is narrowed; the rest is in the tool's definition"
)

COMPACT = Profile(
    name="compact",
    title="Affordances (catalog + compact affordances)",
    instructions=COMPACT_INSTRUCTIONS,
    compact=True,
)

STATIC_INSTRUCTIONS = """\
Operations on these resources are tools of one stable catalog. Read an object with its \
get_* tool (many with list_*) and call the tool of the operation you need with the \
object's id and the arguments its inputSchema describes. A refusal is a tool result with \
isError and a problem whose `code` says why: not_found, stale_version, \
operation_not_available (with `reason`), validation_error (with `errors` per argument), \
idempotency_key_reused or idempotency_key_in_use. Pass `expectedVersion` (the object's \
`version`) to be refused with stale_version if it changed since you read it.
"""

# The catalog's tools, told nothing about what applies now (docs/protocol.md#mcp-profiles).
STATIC = Profile(
    name="static",
    title="Affordances (static catalog)",
    instructions=STATIC_INSTRUCTIONS,
    affordances=False,
    problem_current=False,
)

FORMS_INSTRUCTIONS = """\
This API is hypermedia (HAL-FORMS). Start with read_resource on the entry point named \
in that tool's description and follow `_links`. A document's `_templates` are the only \
actions it offers you now: run one with submit_form(url, template, arguments), giving \
values for its `properties` (only offered `options`, within `min`/`max`/`regex`) and \
copying hidden properties such as `expectedVersion`. A success returns the resource \
after the action with fresh templates. A refusal is a problem with a `code`: on \
stale_version or operation_not_available read the resource again and decide anew.
"""

# Two generic tools over HAL-FORMS; everything else is in the documents
# (docs/protocol.md#mcp-profiles).
FORMS = Profile(
    name="forms",
    title="Affordances (HAL-FORMS navigation)",
    instructions=FORMS_INSTRUCTIONS,
    tools=ToolSetKind.FORMS,
    affordances=False,
    problem_current=False,
    resources=False,
)

PROFILES = {profile.name: profile for profile in (HYBRID, COMPACT, STATIC, FORMS)}
