"""The admin's change notice: a page that hears when its object changed.

An open change page, operation form or confirmation page says "This order changed since
you opened it — reload" within a second of another run on the object — on any face,
through ``perform()`` or an admin edit — so that a person does not submit a stale form
(the execution path would refuse it: the form carries the version it was rendered for).

The page asks ``<pk>/version/`` every 700 ms while it is visible
(``affordances/static/affordances/admin/changed.js``) and stops after the first change.
A poll rather than a stream (``affordances.events``, which the MCP listeners use): one
small read per page and tick, served by any worker under WSGI and ASGI alike, where a
stream would hold a WSGI worker for as long as the page stays open.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.db.models import Model
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse

from affordances import reads
from affordances.catalog import get_catalog
from affordances.events import POLL_MILLISECONDS
from affordances.problems import Problem

__all__ = ["POLL_MILLISECONDS", "notice_context", "version_response"]


def version_response(modeladmin: Any, request: HttpRequest, object_id: str) -> HttpResponse:
    """``{"version": N}``: the object's version as ``request.user`` may see it now.

    Staff only, as the admin is; an object the user may not see (the registration's
    ``QUERYSET``, the one read path every face shares) or may not view in the admin is
    a 404 exactly like a missing one, and so is a user the admin would not let in (a
    script's poll needs no login page). Never cached.
    """
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    site: admin.AdminSite = modeladmin.admin_site
    if not site.has_permission(request):
        raise Http404("No such object.")
    resource = get_catalog().registered(modeladmin.model)
    try:
        obj = reads.find(resource, request.user, unquote(object_id), request=request)
    except Problem:
        raise Http404("No such object.") from None
    if not modeladmin.has_view_or_change_permission(request, obj):
        raise Http404("No such object.")
    response = JsonResponse({"version": int(getattr(obj, resource.version_field))})
    response["Cache-Control"] = "no-store"
    return response


def notice_context(
    modeladmin: Any, request: HttpRequest, obj: Model, version: Any, *, form: bool
) -> dict[str, Any]:
    """What ``affordances/admin/changed_notice.html`` needs: the version the page was
    rendered for, where to ask for the current one, and where reloading goes (a GET of
    the page; for a form reached by a POST, the form afresh)."""
    opts = modeladmin.model._meta
    try:
        version = int(version)
    except (TypeError, ValueError):
        version = int(getattr(obj, get_catalog().registered(modeladmin.model).version_field))
    return {
        "affordances_live": {
            "url": modeladmin._url("version", obj.pk),
            "version": version,
            "every": POLL_MILLISECONDS,
            "reload": request.get_full_path(),
            "noun": opts.verbose_name,
            "form": form,
        }
    }
