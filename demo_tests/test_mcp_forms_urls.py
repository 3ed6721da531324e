"""Interface C takes URLs as the API spells them and follows the API's own redirects.

An agent that writes ``/api/orders/5`` (no trailing slash) used to get Django's 301 back
as ``malformed_request``; the face now adds the slash the URLconf wants, collapses
repeated slashes, and follows redirects the API answers — within the API only, at most
``MAX_REDIRECTS`` hops, a submission resent only where HTTP says so (307/308).

This module is also the URLconf of its redirect tests: the project's URLs behind a few
redirecting ones under ``/api/``.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpResponse, HttpResponseRedirect
from django.test import RequestFactory, override_settings
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from rest_framework_simplejwt.tokens import AccessToken

from affordances.mcp.forms_profile import MAX_REDIRECTS, _fetch, canonical_url
from affordances.mcp.subrequest import OutsideApi
from affordances.models import AuditRecord
from config.urls import urlpatterns as project_patterns
from demo_tests.conftest import Demo
from tests.mcp_wire import Wire

FORMS = "/mcp/forms"
HERE = __name__


def _redirect(to: str, status: int = 302) -> Any:
    def view(request: Any, **kwargs: Any) -> HttpResponse:
        response = HttpResponseRedirect(to.format(**kwargs))
        response.status_code = status
        return response

    return csrf_exempt(view)  # as the API's own views are (token authentication)


urlpatterns = [
    # A URL the API renamed, answered with where it lives now (relative and absolute).
    path("api/old-orders/<int:pk>/", _redirect("/api/orders/{pk}/", 301)),
    path("api/older-orders/<int:pk>/", _redirect("../../old-orders/{pk}/", 302)),
    path("api/orders/<int:pk>/approve/", _redirect("/api/orders/{pk}/confirm/", 307)),
    path("api/orders/<int:pk>/okay/", _redirect("/api/orders/{pk}/confirm/", 301)),
    path("api/loop/", _redirect("/api/loop/")),
    path("api/away/", _redirect("http://evil.example/api/orders/")),
    path("api/outside/", _redirect("/admin/")),
    *project_patterns,
]


def forms(demo: Demo, username: str) -> Wire:
    return Wire(str(AccessToken.for_user(demo.users[username])), path=FORMS)


def read(wire: Wire, url: str) -> tuple[bool, dict[str, Any]]:
    result = wire.tool("read_resource", {"url": url})
    return not result["isError"], result["structuredContent"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "written",
    [
        "http://testserver/api/orders/{pk}",
        "http://testserver/api/orders//{pk}",
        "http://testserver//api/orders/{pk}/",
        "/api/orders/{pk}",
        "http://testserver/api/orders/{pk}#top",
    ],
)
def test_a_url_without_its_trailing_slash_reads_the_resource(demo: Demo, written: str) -> None:
    pk = demo.orders["demo-01"].pk
    ok, document = read(forms(demo, "support"), written.format(pk=pk))
    assert ok, document
    assert document["id"] == pk
    assert document["_links"]["self"]["href"] == f"http://testserver/api/orders/{pk}/"
    assert "confirm_order" in document["_templates"]


@pytest.mark.django_db
def test_the_entry_point_and_collections_read_without_the_slash_too(demo: Demo) -> None:
    wire = forms(demo, "support")
    ok, entry = read(wire, "http://testserver/api")
    assert ok and "orders" in entry["_links"], entry
    ok, page = read(wire, "http://testserver/api/orders?status=pending")
    assert ok and page["_links"]["self"]["href"].endswith("/api/orders/?status=pending"), page


@pytest.mark.django_db
def test_a_form_submitted_to_a_url_without_the_slash_runs(demo: Demo) -> None:
    order = demo.orders["demo-01"]
    wire = forms(demo, "support")
    result = wire.tool(
        "submit_form",
        {
            "url": f"http://testserver/api/orders/{order.pk}",
            # An operation that runs on the call (cancel_order asks the person first:
            # demo_tests/test_mcp_confirmations.py).
            "template": "confirm_order",
            "arguments": {"expectedVersion": str(order.version)},
        },
    )
    assert not result["isError"], result
    assert demo.order("demo-01").status == "confirmed"
    # A template the document does not offer is still answered by the core, for the
    # object the slashless URL names (not not_found because the URL did not resolve).
    refused = wire.tool(
        "submit_form",
        {"url": f"http://testserver/api/orders/{order.pk}", "template": "confirm_order"},
    )
    assert refused["isError"]
    assert refused["structuredContent"]["code"] == "operation_not_available"
    assert refused["structuredContent"]["reason"] == "already_confirmed"


@pytest.mark.django_db
def test_a_url_that_does_not_exist_with_or_without_the_slash_is_not_found(demo: Demo) -> None:
    ok, problem = read(forms(demo, "support"), "http://testserver/api/nothing-here")
    assert not ok and problem["code"] == "not_found"


@pytest.mark.django_db
def test_urls_of_other_hosts_or_outside_the_api_are_still_refused(demo: Demo) -> None:
    wire = forms(demo, "support")
    for url in (
        "http://evil.example/api/orders/1",
        "//evil.example/api/",
        "/admin",
        "/api/../admin",
    ):
        ok, problem = read(wire, url)
        assert not ok and problem["code"] == "validation_error", (url, problem)
        assert "url" in problem["errors"]


@pytest.mark.django_db
@override_settings(ROOT_URLCONF=HERE)
def test_the_apis_own_redirects_are_followed(demo: Demo) -> None:
    pk = demo.orders["demo-01"].pk  # pending: confirm_order runs on the call
    wire = forms(demo, "support")
    for old in (f"/api/old-orders/{pk}", f"http://testserver/api/older-orders/{pk}/"):
        ok, document = read(wire, old)
        assert ok, (old, document)
        assert document["_links"]["self"]["href"] == f"http://testserver/api/orders/{pk}/"
    # submit_form reads the resource at its old URL, and acts on the one it moved to.
    result = wire.tool(
        "submit_form",
        {
            "url": f"http://testserver/api/old-orders/{pk}/",
            "template": "confirm_order",
            "arguments": {"expectedVersion": "1"},
        },
    )
    assert not result["isError"], result
    assert demo.order("demo-01").status == "confirmed"


@pytest.mark.django_db
@override_settings(ROOT_URLCONF=HERE)
@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("/api/loop/", f"more than {MAX_REDIRECTS} times"),
        ("/api/away/", "Only URLs of this API"),
        ("/api/outside/", "Only URLs under"),
    ],
)
def test_redirects_that_loop_or_leave_the_api_are_refused(demo: Demo, url: str, why: str) -> None:
    ok, problem = read(forms(demo, "support"), url)
    assert not ok and problem["code"] == "validation_error"
    assert why in problem["errors"]["url"][0]


def _request_as(demo: Demo, username: str) -> Any:
    token = AccessToken.for_user(demo.users[username])
    return RequestFactory().post(FORMS, HTTP_AUTHORIZATION=f"Bearer {token}")


@pytest.mark.django_db
@override_settings(ROOT_URLCONF=HERE)
def test_a_submission_is_resent_on_307_and_never_on_301(demo: Demo) -> None:
    from affordances.mcp.forms_profile import _Moved

    request = _request_as(demo, "support")
    pending = demo.orders["demo-01"]
    answer, final = _fetch(request, "POST", f"/api/orders/{pending.pk}/approve/", {})
    assert answer.status == 200 and final.endswith(f"/api/orders/{pending.pk}/confirm/")
    assert demo.order("demo-01").status == "confirmed"

    other = demo.orders["demo-10"]
    before = AuditRecord.objects.count()
    with pytest.raises(_Moved, match="not resent"):
        _fetch(request, "POST", f"/api/orders/{other.pk}/okay/", {})
    assert demo.order("demo-10").status == "pending"
    assert AuditRecord.objects.count() == before


@pytest.mark.django_db
def test_canonical_urls_keep_the_query_and_refuse_what_is_not_the_api(demo: Demo) -> None:
    request = _request_as(demo, "support")
    assert canonical_url(request, "/api/orders?status=pending") == "/api/orders/?status=pending"
    assert canonical_url(request, "/api/orders/") == "/api/orders/"
    with pytest.raises(OutsideApi):
        canonical_url(request, "")
    with pytest.raises(OutsideApi):
        canonical_url(request, "https://testserver/api/")  # another scheme: another origin
