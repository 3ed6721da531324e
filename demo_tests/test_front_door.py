"""The front door (affordances.rest.front_door): a browser without credentials gets a page
with a login link that comes back to where it started; every other client keeps the
401 problem document; /api/docs/ says that it needs a login.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from django.test import Client

from demo_tests.conftest import DEMO_PASSWORD, Demo

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
KETTING = (
    "application/prs.hal-forms+json;q=1.0, application/hal+json;q=0.9, "
    "application/vnd.collection+json;q=0.8, application/json;q=0.7, text/html;q=0.6"
)
PROBLEM = "application/problem+json"


def _login_link(page: str) -> str:
    links = set(re.findall(r'<a [^>]*href="(/api-auth/login/[^"]*)"', page))
    assert len(links) == 1, links
    return links.pop()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path", ["/api/", "/api/orders/", "/api/orders/1/", "/api/operations/", "/api/orders/?page=2"]
)
def test_a_browser_without_credentials_gets_a_page_with_a_login_link_back(path: str) -> None:
    response = Client().get(path, HTTP_ACCEPT=BROWSER)
    json = Client().get(path, HTTP_ACCEPT="application/json")
    assert response.status_code == json.status_code == 401
    assert response["Content-Type"] == "text/html; charset=utf-8"
    # The same challenge as the problem's, and caches told that the answer follows Accept.
    assert response["WWW-Authenticate"] == json["WWW-Authenticate"] == 'Bearer realm="api"'
    assert "accept" in {part.strip().lower() for part in response["Vary"].split(",")}
    page = response.content.decode()
    assert '<html lang="en' in page
    assert _login_link(page) == "/api-auth/login/?" + urlencode({"next": path}, safe="/")


@pytest.mark.django_db
@pytest.mark.parametrize("accept", ["application/json", "*/*", "", PROBLEM, KETTING])
def test_every_other_client_keeps_the_problem_document(accept: str) -> None:
    response = Client().get("/api/orders/", HTTP_ACCEPT=accept)
    assert response.status_code == 401
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


@pytest.mark.django_db
def test_only_a_read_asks_for_the_page_and_format_decides_first() -> None:
    client = Client()
    posted = client.post("/api/orders/", {}, HTTP_ACCEPT=BROWSER)
    assert (posted.status_code, posted["Content-Type"]) == (401, PROBLEM)
    assert client.get("/api/orders/?format=json", HTTP_ACCEPT=BROWSER)["Content-Type"] == PROBLEM
    browsable = client.get("/api/orders/?format=api", HTTP_ACCEPT="application/json")
    assert browsable["Content-Type"].startswith("text/html")
    assert (
        _login_link(browsable.content.decode())
        == "/api-auth/login/?next=/api/orders/%3Fformat%3Dapi"
    )


@pytest.mark.django_db
def test_the_page_tells_no_route_from_a_made_up_one(demo: Demo) -> None:
    # A browser gets the same page, headers and status on a route that exists, on one
    # hidden from everybody without credentials and on one that does not exist; only the
    # path it comes back to differs.
    pk = demo.orders["demo-01"].pk
    answers = []
    for path in (f"/api/orders/{pk}/", f"/api/orders/{pk}/cancel/", f"/api/orders/{pk}/nope/"):
        response = Client().get(path, HTTP_ACCEPT=BROWSER)
        answers.append(
            (
                response.status_code,
                # Content-Length follows the path's length; the content is compared.
                sorted(item for item in response.headers.items() if item[0] != "Content-Length"),
                response.content.replace(path.encode(), b"PATH"),
            )
        )
    assert answers[0] == answers[1] == answers[2]


@pytest.mark.django_db
def test_the_login_lands_back_where_it_started_or_on_the_entry_point(demo: Demo) -> None:
    credentials = {"username": "support", "password": DEMO_PASSWORD}
    client = Client()
    link = _login_link(client.get("/api/orders/", HTTP_ACCEPT=BROWSER).content.decode())
    form = client.get(link)
    assert form.status_code == 200 and '<html lang="en' in form.content.decode()
    back = client.post(link, {**credentials, "next": "/api/orders/"})
    assert (back.status_code, back["Location"]) == (302, "/api/orders/")
    assert client.get("/api/orders/", HTTP_ACCEPT=BROWSER).status_code == 200

    plain = Client().post("/api-auth/login/", credentials)
    assert (plain.status_code, plain["Location"]) == (302, "/api/")


@pytest.mark.django_db
def test_the_documentation_says_it_needs_a_login(demo: Demo) -> None:
    anonymous = Client().get("/api/docs/")
    page = anonymous.content.decode()
    assert anonymous.status_code == 200
    assert "Log in to use this API" in page
    assert _login_link(page) == "/api-auth/login/?next=/api/docs/"
    assert "swagger-ui" not in page

    client = Client()
    assert client.login(username="support", password=DEMO_PASSWORD)
    swagger = client.get("/api/docs/").content.decode()
    assert 'id="swagger-ui"' in swagger and "Log in to use this API" not in swagger
    assert '<html lang="en' in swagger
