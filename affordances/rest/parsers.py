"""What the app's views accept as a body: JSON, and forms without files.

JSON is the API's language; the forms are the browsable API's. Both are bounded: a body
over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is a ``request_too_large`` problem (413), more than
``DATA_UPLOAD_MAX_NUMBER_FIELDS`` fields a ``malformed_request`` (400), JSON nested
deeper than :data:`~affordances.encoding.MAX_DEPTH` a ``malformed_request`` too, and a
file part an ``unsupported_media_type`` (415) before a byte of it is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.files.uploadhandler import FileUploadHandler
from rest_framework import exceptions, parsers

from affordances.encoding import MAX_DEPTH, nesting_depth

__all__ = ["PARSER_CLASSES", "FormsOnlyMultiPartParser", "JSONParser", "RequestTooLarge"]


class RequestTooLarge(exceptions.APIException):
    status_code = 413
    default_detail = "The request body is too large."
    default_code = "request_too_large"


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing nesting deeper than ``MAX_DEPTH`` with a 400."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            # The decoder gives up at the interpreter's recursion limit.
            raise exceptions.ParseError("The request body is nested too deeply.") from None
        if nesting_depth(data) > MAX_DEPTH:
            raise exceptions.ParseError(
                f"The request body is nested too deeply (at most {MAX_DEPTH} levels)."
            )
        return data


class _NoFiles(FileUploadHandler):
    """Refuses the first file part, before any of it is read into memory or a file."""

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        raise exceptions.UnsupportedMediaType(
            "multipart/form-data with files",
            detail="File parts are not accepted: send the fields only (or JSON).",
        )

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


class FormsOnlyMultiPartParser(parsers.MultiPartParser):
    """Multipart forms (the browsable API's) whose parts are all plain fields."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        request = (parser_context or {}).get("request")
        if request is not None:
            # DRF reads the handlers off its request, which proxies Django's otherwise.
            request.upload_handlers = [_NoFiles(request)]
        return super().parse(stream, media_type, parser_context)


# The app's views; a project may use the same list as DEFAULT_PARSER_CLASSES.
PARSER_CLASSES: Sequence[type[parsers.BaseParser]] = [
    JSONParser,
    parsers.FormParser,
    FormsOnlyMultiPartParser,
]
