"""drf-spectacular's private API, in one place: an incompatible release fails here."""

from __future__ import annotations

from rest_framework import serializers

from affordances.compat.spectacular import check_spectacular


def test_the_installed_drf_spectacular_has_what_the_openapi_face_uses():
    check_spectacular()  # raises ImportError naming what is missing


def test_every_private_helper_the_library_reaches_still_exists():
    """An upgrade that renames one fails here, by name, not at a request."""
    from affordances.compat import django, drf, fsm, oauth_toolkit, regex

    for module in (django, drf, fsm, oauth_toolkit, regex):
        for name in module.__all__:
            assert getattr(module, name) is not None, f"{module.__name__}.{name}"
    for name in oauth_toolkit.__all__:
        assert callable(getattr(oauth_toolkit, name)), name


def test_the_regex_parser_still_gives_the_tree_the_engine_runs():
    from affordances.compat import regex

    tree = list(regex.parse("^a+$"))
    assert tree[0] == (regex.constants.AT, regex.constants.AT_BEGINNING)
    assert tree[1][0] is regex.constants.MAX_REPEAT


def test_drf_fields_are_rebuilt_from_their_own_arguments():
    from affordances.compat.drf import field_validators, field_with

    def positive(value: int) -> None: ...

    field = serializers.IntegerField(max_value=10, validators=[positive], help_text="n")
    narrowed = field_with(field, max_value=5)
    assert type(narrowed) is serializers.IntegerField
    assert (narrowed.max_value, narrowed.help_text) == (5, "n")
    assert field_validators(field) == [positive]
