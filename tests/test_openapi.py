"""The OpenAPI document (drf-spectacular) describes the action endpoints, offline — on the
shop of ``tests.generic.shop``."""

from __future__ import annotations

import pytest
import yaml
from django.core.management import call_command
from drf_spectacular.validation import validate_schema


@pytest.fixture
def schema(shop_api) -> dict:
    response = shop_api("admin").get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def test_schema_is_valid_openapi(schema):
    validate_schema(schema)


def test_every_transition_has_an_action_endpoint_with_its_input(schema):
    paths = schema["paths"]
    for transition in ("confirm", "ship", "deliver", "cancel", "refund"):
        assert "post" in paths[f"/api/purchases/{{id}}/{transition}/"]
    cancel = paths["/api/purchases/{id}/cancel/"]["post"]
    body = cancel["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    component = schema["components"]["schemas"][body.rsplit("/", 1)[-1]]
    assert component["required"] == ["reason"]
    assert set(cancel["responses"]) >= {"200", "400", "404", "409", "412"}
    assert cancel["operationId"] == "cancel_purchase"
    assert "Cancel a purchase before it ships" in cancel["description"]


def test_operations_without_inputs_take_their_version_in_an_optional_body(schema):
    for path in ("/api/purchases/{id}/confirm/",):
        body = schema["paths"][path]["post"]["requestBody"]
        assert body.get("required", False) is False, path  # an empty body is fine
        component = _request_schema(schema, path)
        assert set(component["properties"]) == {"expectedVersion"}, path
        assert component["additionalProperties"] is False, path


def test_schema_generation_has_no_warnings(shop_registered, tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/operations/" in yaml.safe_load(out.read_text())["paths"]


def test_a_callers_document_leaves_out_the_operations_it_may_not_use(shop_api):
    document = shop_api("alice").get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    text = document.content.decode()
    paths = document.json()["paths"]
    assert "post" in paths["/api/purchases/{id}/cancel/"]
    for hidden in ("ship", "confirm", "deliver", "refund"):
        assert f"/api/purchases/{{id}}/{hidden}/" not in paths
    assert "ShipInput" not in text and "RefundInput" not in text


def test_every_operation_documents_problem_responses(schema):
    for methods in schema["paths"].values():
        for operation in methods.values():
            for status in ("400", "401", "404"):
                content = operation["responses"][status]["content"]
                assert list(content) == ["application/problem+json"]


# --- the document is as strict as the server (issue: third-party clients) -------------

METHODS = {"get", "post", "put", "patch", "delete"}


def _served(shop_api, role: str) -> dict:
    response = shop_api(role).get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def _operations(document: dict):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield path, method, operation


def _request_schema(document: dict, path: str) -> dict:
    body = document["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    ref = body["schema"]["$ref"]
    return document["components"]["schemas"][ref.rsplit("/", 1)[-1]]


def test_the_document_names_its_server_summaries_and_security(schema):
    # Redocly's recommended ruleset: no-empty-servers, operation-summary, security-defined
    # (the token endpoints take no credentials: security: []). info-license is the
    # project's setting (demo_tests/test_openapi.py).
    assert schema["servers"] == [{"url": "http://testserver"}]
    for path, method, operation in _operations(schema):
        assert operation.get("summary"), (method, path)
        assert "security" in operation, (method, path)
    assert schema["paths"]["/api/token/"]["post"]["security"] == []
    assert schema["paths"]["/api/purchases/"]["get"]["security"] != []


def test_operation_inputs_refuse_unknown_properties_and_transitions_take_a_version(schema):
    for path in ("/api/purchases/", "/api/purchases/{id}/cancel/", "/api/purchases/{id}/refund/"):
        component = _request_schema(schema, path)
        assert component["additionalProperties"] is False, path
    cancel = _request_schema(schema, "/api/purchases/{id}/cancel/")
    assert "expectedVersion" in cancel["properties"]
    assert "expectedVersion" not in _request_schema(schema, "/api/purchases/")["properties"]


def test_a_create_input_says_this_callers_constraints(shop_api):
    # Staff name the customer; a customer may name only herself (purchases.rules).
    staff = _request_schema(_served(shop_api, "support"), "/api/purchases/")
    customer = _request_schema(_served(shop_api, "alice"), "/api/purchases/")
    assert "customer" in staff["required"]
    assert customer["properties"]["customer"]["enum"] == ["alice"]
    assert "customer" not in customer.get("required", [])


def _created(shop_api, shop, **arguments) -> int:
    body = {"description": "A lamp", "total": "12.50", "customer": "alice", **arguments}
    return shop_api("support").post("/api/purchases/", body, format="json").status_code


@pytest.mark.parametrize(
    "description", ["", " ", "\t\n", "\x1c", "\u3000", "a", " a ", "\ufeff", "a\x00b", "x" * 200]
)
def test_a_text_inputs_schema_admits_exactly_what_the_server_takes(
    shop_api, shop, schema, description
):
    import re

    prop = _request_schema(schema, "/api/purchases/")["properties"]["description"]
    admitted = len(description) >= prop["minLength"] and bool(
        re.search(prop["pattern"], description)
    )
    assert admitted == (_created(shop_api, shop, description=description) == 201), description


@pytest.mark.parametrize(
    "total",
    ["1", "0.01", "12.5", "0012.50", "9999999999.99", "0", "0.00", "-1", "1.234", "1.", ".5",
     "10000000000", "1e2", "1_0", "\u0661\u0662", " 1", "0x10"],
)  # fmt: skip
def test_a_decimal_strings_pattern_admits_exactly_what_the_server_takes(
    shop_api, shop, schema, total
):
    import re

    prop = _request_schema(schema, "/api/purchases/")["properties"]["total"]
    (text,) = [branch for branch in prop["anyOf"] if branch["type"] == "string"]
    admitted = re.search(text["pattern"], total) is not None
    assert admitted == (_created(shop_api, shop, total=total) == 201), total


@pytest.mark.parametrize("total", [1, 0.01, 12.5, 9999999999.99, 0, -1, 1.234, 1e10])
def test_a_decimal_numbers_bounds_admit_exactly_what_the_server_takes(
    shop_api, shop, schema, total
):
    from decimal import Decimal

    prop = _request_schema(schema, "/api/purchases/")["properties"]["total"]
    (number,) = [branch for branch in prop["anyOf"] if branch["type"] == "number"]
    value = Decimal(str(total))
    admitted = (
        value >= Decimal(str(number["minimum"]))
        and value < Decimal(str(number["maximum"]))
        and value % Decimal(str(number["multipleOf"])) == 0
    )
    assert number["exclusiveMaximum"] is True
    assert admitted == (_created(shop_api, shop, total=total) == 201), total


def test_list_parameters_say_what_the_server_takes(schema):
    parameters = {
        p["name"]: p["schema"] for p in schema["paths"]["/api/purchases/"]["get"]["parameters"]
    }
    assert parameters["page"] == {"type": "integer", "minimum": 1}
    assert parameters["page_size"] == {"type": "integer", "minimum": 1, "maximum": 200}
    assert "" in parameters["status"]["enum"]  # the filter form's "any"


@pytest.mark.parametrize(
    "version",
    ["1", "0001", "999999999999999999", "0", "000", " 1", "+1", "\u0661", "*", "1.0", "", "-1",
     "9223372036854775807", "9223372036854775808", "09223372036854775807"],
)  # fmt: skip
def test_a_version_strings_pattern_admits_exactly_what_the_server_reads(
    shop_api, shop, schema, version
):
    import re

    prop = _request_schema(schema, "/api/purchases/{id}/cancel/")["properties"]["expectedVersion"]
    (text,) = [branch for branch in prop["anyOf"] if branch["type"] == "string"]
    purchase = shop.purchase("p-01").pk
    body = {"reason": "customer_request", "expectedVersion": version}
    answer = shop_api("support").post(f"/api/purchases/{purchase}/cancel/", body, format="json")
    read = answer.status_code != 400  # 200, or 412 for a version that is not the current one
    assert answer.status_code in (200, 400, 412)
    assert (re.search(text["pattern"], version) is not None) == read, (version, answer.content)


# --- the whole contract, as generated clients read it (issue 38) ----------------------


def _component(document: dict, node: dict) -> dict:
    return document["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]


def test_every_resource_schema_lists_its_affordances_in_the_protocols_entries(schema):
    from affordances.catalog import get_catalog
    from affordances.protocol import protocol_schemas

    resources = [r for r in get_catalog().resources if r.serializer_class is not None]
    assert len(resources) >= 1  # purchases
    checked = []
    for path, method, operation in _operations(schema):
        if method != "get" or not path.endswith("{id}/") or path.startswith("/api/operations/"):
            continue
        checked.append(path)
        body = operation["responses"]["200"]["content"]["application/json"]["schema"]
        properties = _component(schema, body)["properties"]
        assert properties["affordances"]["items"]["oneOf"] == [
            {"$ref": "#/components/schemas/AffordanceEntry"},
            {"$ref": "#/components/schemas/AffordanceEntryCompact"},
        ], path
        unavailable = properties["unavailableAffordances"]["items"]["oneOf"]
        assert [_component(schema, ref) for ref in unavailable] == [
            schema["components"]["schemas"]["UnavailableEntry"],
            schema["components"]["schemas"]["UnavailableEntryCompact"],
        ]
    assert checked == ["/api/purchases/{id}/"]
    # The components are the protocol's own schemas (one source), in OpenAPI's dialect.
    published = protocol_schemas()["affordance-entry"]
    component = schema["components"]["schemas"]["AffordanceEntry"]
    assert component["required"] == published["required"]
    assert set(component["properties"]) == set(published["properties"])
    assert "$schema" not in component and "$id" not in component


def test_reads_and_runs_declare_the_affordances_shape_and_transitions_their_headers(schema):
    shape = {"type": "string", "enum": ["none", "compact"]}
    for path, method, operation in _operations(schema):
        found = {(p["in"], p["name"]): p["schema"] for p in operation.get("parameters", [])}
        resource = path.startswith("/api/purchases/")
        assert (found.get(("query", "affordances")) == shape) == resource, (method, path)
        if resource and method == "post" and "{id}" in path:  # a transition
            assert ("header", "If-Match") in found and ("header", "Idempotency-Key") in found
            assert "requestBody" in operation, path
            assert "expectedVersion" in _request_schema(schema, path)["properties"]
            headers = operation["responses"]["200"]["headers"]
            assert {"ETag", "Idempotent-Replayed"} <= set(headers), path
            for status in ("409", "412"):
                problem = operation["responses"][status]["content"]["application/problem+json"]
                current = _component(schema, problem["schema"])["properties"]["current"]
                assert current["allOf"] == [
                    operation["responses"]["200"]["content"]["application/json"]["schema"]
                ]
    create = schema["paths"]["/api/purchases/"]["post"]
    assert {"ETag", "Location", "Idempotent-Replayed"} <= set(create["responses"]["201"]["headers"])
    assert "412" not in create["responses"]
    assert "409" not in schema["paths"]["/api/purchases/"]["get"]["responses"]


def test_the_catalog_entry_point_and_hal_bodies_have_schemas(schema):
    paths = schema["paths"]
    bodies = {
        "/api/": "EntryPoint",
        "/api/operations/": "Catalog",
        "/api/operations/{ident}/": "CatalogEntry",
    }
    for path, component in bodies.items():
        content = paths[path]["get"]["responses"]["200"]["content"]
        assert content["application/json"]["schema"] == {
            "$ref": f"#/components/schemas/{component}"
        }
        assert content["application/prs.hal-forms+json"]["schema"] == {
            "$ref": "#/components/schemas/HalFormsDocument"
        }
        assert content["application/hal+json"]["schema"] == {
            "$ref": "#/components/schemas/HalDocument"
        }
    assert "304" in paths["/api/operations/"]["get"]["responses"]
    templates = schema["components"]["schemas"]["HalFormsDocument"]["properties"]["_templates"]
    assert templates["additionalProperties"] == {"$ref": "#/components/schemas/HalFormsTemplate"}


def test_every_tag_is_defined_with_a_description(schema):
    defined = {tag["name"]: tag["description"] for tag in schema["tags"]}
    for path, method, operation in _operations(schema):
        assert operation["tags"], (method, path)
        assert set(operation["tags"]) <= set(defined), (method, path)
    assert defined["purchases"] == "Purchases: the collection, each one and its operations."


def test_the_documented_bodies_are_what_the_server_answers(shop_api, schema):
    import jsonschema

    # Resolve the document's components in place (OpenAPI 3.0 schemas are close enough
    # to draft 4 for these bodies: no nullable among them).
    def validate(instance, component):
        wrapper = {"$ref": f"#/components/schemas/{component}", **schema}
        jsonschema.validate(instance, wrapper, cls=jsonschema.Draft4Validator)

    admin = shop_api("admin")
    purchase = admin.get("/api/purchases/").json()["results"][0]["id"]
    validate(admin.get("/api/").json(), "EntryPoint")
    validate(admin.get("/api/operations/").json(), "Catalog")
    hal = admin.get(f"/api/purchases/{purchase}/", HTTP_ACCEPT="application/prs.hal-forms+json")
    validate(hal.json(), "HalFormsDocument")
    page = admin.get("/api/purchases/", HTTP_ACCEPT="application/hal+json")
    validate(page.json(), "HalDocument")
    for shape in ("", "?affordances=compact"):
        body = admin.get(f"/api/purchases/{purchase}/{shape}").json()
        for entry in body["affordances"]:
            validate(entry, "AffordanceEntryCompact" if shape else "AffordanceEntry")
