"""``make bench-peers``: this library next to its peers, on the tutorial's help desk.

A project of its own (``bench.peers.settings``, the app ``bench.peers.helpdesk``) in its
own virtualenv (``.venv-peers``, the ``peers`` extra): django-mcp-server 0.5.7 needs the
MCP SDK 1.x, this repository's ``dev`` extra the 2.x. ``python -m bench.peers.run``.
"""
