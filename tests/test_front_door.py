"""affordances.rest.front_door: which requests get the login page, and where its link goes."""

from __future__ import annotations

import pytest
from django.test import RequestFactory, override_settings

from affordances.rest.front_door import login_page, login_url, prefers_html

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.mark.parametrize(
    ("method", "path", "accept", "page"),
    [
        ("get", "/x/", BROWSER, True),
        ("head", "/x/", BROWSER, True),
        ("get", "/x/", "text/html", True),
        ("get", "/x/", "text/html;q=0.5, application/json", False),
        ("get", "/x/", "text/html, application/json", False),  # a tie: JSON
        ("get", "/x/", "application/json, text/html;q=0", False),
        ("get", "/x/", "*/*", False),
        ("get", "/x/", "", False),
        ("get", "/x/", "application/problem+json", False),
        ("get", "/x/", "text/*", True),
        ("get", "/x/", "not a media type", False),
        ("post", "/x/", BROWSER, False),
        ("options", "/x/", BROWSER, False),
        ("get", "/x/?format=json", BROWSER, False),
        ("get", "/x/?format=api", "application/json", True),
        ("get", "/x/?format=", BROWSER, False),
    ],
)
def test_a_page_only_for_a_read_that_ranks_html_first(
    method: str, path: str, accept: str, page: bool
) -> None:
    request = getattr(RequestFactory(), method)(path, HTTP_ACCEPT=accept)
    assert prefers_html(request) is page


@override_settings(ROOT_URLCONF="tests.generic.shop_api")
def test_the_link_is_drfs_login_coming_back_to_the_page() -> None:
    request = RequestFactory().get("/api/things/?page=2&q=a+b")
    assert login_url(request) == "/api-auth/login/?next=/api/things/%3Fpage%3D2%26q%3Da%2Bb"
    assert login_url(request, "/elsewhere/") == "/api-auth/login/?next=/elsewhere/"


@override_settings(ROOT_URLCONF="tests.generic.shop_api", LOGIN_URL="/accounts/sign-in/?via=api")
def test_a_projects_login_url_comes_first_and_keeps_its_query() -> None:
    request = RequestFactory().get("/api/")
    assert login_url(request) == "/accounts/sign-in/?via=api&next=/api/"


@override_settings(ROOT_URLCONF="tests.urls")
def test_without_a_login_page_the_page_has_no_link() -> None:
    request = RequestFactory().get("/api/")
    assert login_url(request) is None
    response = login_page(
        request, status=401, detail="Authentication credentials were not provided."
    )
    assert response.status_code == 401
    content = response.content.decode()
    assert "Log in to use this API" in content and 'href="/' not in content.split("<body")[1]
    assert "Authorization" in content  # what a program does instead
