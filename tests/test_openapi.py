"""The OpenAPI document (drf-spectacular) describes the action endpoints, offline."""

from __future__ import annotations

import pytest
import yaml
from django.core.management import call_command
from drf_spectacular.validation import validate_schema


@pytest.fixture
def schema(api) -> dict:
    response = api("admin").get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def test_schema_is_valid_openapi(schema):
    validate_schema(schema)


def test_every_transition_has_an_action_endpoint_with_its_input(schema):
    paths = schema["paths"]
    for transition in ("confirm", "ship", "deliver", "cancel", "refund"):
        assert "post" in paths[f"/api/orders/{{id}}/{transition}/"]
    cancel = paths["/api/orders/{id}/cancel/"]["post"]
    body = cancel["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    component = schema["components"]["schemas"][body.rsplit("/", 1)[-1]]
    assert component["required"] == ["reason"]
    assert set(cancel["responses"]) >= {"200", "400", "404", "409", "412"}
    assert cancel["operationId"] == "cancel_order"
    assert "Cancel an order before fulfilment begins" in cancel["description"]


def test_operations_without_inputs_have_no_request_body(schema):
    confirm = schema["paths"]["/api/orders/{id}/confirm/"]["post"]
    assert "requestBody" not in confirm


def test_schema_generation_has_no_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/operations/" in yaml.safe_load(out.read_text())["paths"]


def test_swagger_ui_is_served_from_local_static_files(api):
    response = api("support").get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "cdn.jsdelivr.net" not in html


def test_a_callers_document_leaves_out_the_operations_it_may_not_use(api):
    document = api("alice").get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    text = document.content.decode()
    paths = document.json()["paths"]
    assert "post" in paths["/api/orders/{id}/cancel/"]
    for hidden in ("ship", "confirm", "deliver", "refund"):
        assert f"/api/orders/{{id}}/{hidden}/" not in paths
    assert "ShipOrderInput" not in text and "RefundOrderInput" not in text


def test_every_operation_documents_problem_responses(schema):
    for methods in schema["paths"].values():
        for operation in methods.values():
            for status in ("400", "401", "404"):
                content = operation["responses"][status]["content"]
                assert list(content) == ["application/problem+json"]
