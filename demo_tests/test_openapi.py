"""The demo's OpenAPI deployment: its licence and a Swagger UI served from local files.

What the library's document guarantees on any model is tested on its own shop, in
tests/test_openapi.py.
"""

from __future__ import annotations


def test_the_document_names_the_demos_licence(api):
    # Redocly's recommended ruleset: info-license (SPECTACULAR_SETTINGS["LICENSE"]).
    response = api("admin").get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    assert response.json()["info"]["license"]["name"] == "MIT"


def test_swagger_ui_is_served_from_local_static_files(api):
    response = api("support").get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "cdn.jsdelivr.net" not in html
