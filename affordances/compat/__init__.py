"""Every use of a dependency's private API, in one module per dependency.

A private name (``_result_cache``, ``re._parser``, a DRF field's ``_kwargs``…) may change
in any release of its package. Each one this library relies on is reached through a
small function here, which says what it relies on and why no public API serves, so an
upgrade that breaks one fails in one place (and in ``tests/test_compat.py``), and
``tests/test_private_api.py`` fails when a private name is used anywhere else.

- :mod:`.django`: Django.
- :mod:`.drf`: Django REST framework.
- :mod:`.spectacular`: drf-spectacular (the catalog's serializer mapping).
- :mod:`.oauth_toolkit`: django-oauth-toolkit (dynamic client registration).
- :mod:`.fsm`: django-fsm-2.
- :mod:`.regex`: the standard library's regular-expression parser.
"""
