"""Django REST framework's private API, used in exactly one place each."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from rest_framework import serializers
from rest_framework.request import Request

__all__ = ["django_request", "field_validators", "field_with"]


def django_request(request: Request) -> HttpRequest:
    """The ``HttpRequest`` a DRF ``Request`` wraps (``Request._request``).

    DRF proxies attribute reads to it but keeps its own ``user``: whether Django's
    middleware set a user on the underlying request can only be read there.
    """
    wrapped: HttpRequest = request._request
    return wrapped


def field_with(
    field: serializers.Field[Any, Any, Any, Any], **changes: Any
) -> serializers.Field[Any, Any, Any, Any]:
    """A new, unbound field of ``field``'s class and arguments, some of them changed.

    DRF keeps a field's constructor arguments as ``_args``/``_kwargs`` (its own
    ``Field.__deepcopy__`` rebuilds fields from them): the only way to make the same
    field with a narrower bound, whatever the project's field class takes.
    """
    args: tuple[Any, ...] = field._args  # type: ignore[attr-defined]
    kwargs: dict[str, Any] = field._kwargs  # type: ignore[attr-defined]
    made: serializers.Field[Any, Any, Any, Any] = type(field)(*args, **{**kwargs, **changes})
    return made


def field_validators(field: serializers.Field[Any, Any, Any, Any]) -> list[Any]:
    """The validators a field was constructed with (``_kwargs["validators"]``), not the
    ones DRF derives from its other arguments (``max_length``…), which a rebuilt field
    derives again."""
    kwargs: dict[str, Any] = getattr(field, "_kwargs", {})
    return list(kwargs.get("validators", []))
