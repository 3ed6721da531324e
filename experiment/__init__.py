"""The seed's experiment: the same tasks driven through interfaces A, B and C
(docs/protocol.md#mcp-profiles, docs/experiment/index.md).

``python manage.py run_experiment`` starts a live server, resets the demo data before
every run, lets an agent work each task over real MCP traffic, checks the final state
in the database and measures what happened from the recorded traffic.
"""
