"""A HAL-FORMS validator, written from mamund's spec (REFERENCES.md "HAL-FORMS").

Independent of :mod:`affordances.rest.renderers`: the library's and the demo's tests
check every HAL-FORMS document they read with :func:`hal_forms_violations`.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

HAL_FORMS_TYPES = frozenset(
    {
        "hidden",
        "text",
        "textarea",
        "search",
        "tel",
        "url",
        "email",
        "password",
        "date",
        "month",
        "week",
        "time",
        "datetime-local",
        "number",
        "range",
        "color",
    }
)
# The values an HTML input of these types takes (and so its min and max).
HTML_DATE_VALUES = {
    "date": r"[0-9]{4}-[0-9]{2}-[0-9]{2}",
    "datetime-local": r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}"
    r"(?::[0-9]{2}(?:\.[0-9]{1,3})?)?",
}
NUMBER_KEYS = ("min", "max", "step", "minLength", "maxLength", "cols", "rows")
BOOLEAN_KEYS = ("required", "readOnly", "templated")
STRING_KEYS = ("prompt", "regex", "placeholder")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_absolute(url: Any) -> bool:
    if not isinstance(url, str):
        return False
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _link_violations(links: Any, where: str) -> list[str]:
    if not isinstance(links, dict):
        return [f"{where}: _links is not an object"]
    problems = []
    for rel, link in links.items():
        for item in link if isinstance(link, list) else [link]:
            if not isinstance(item, dict) or not isinstance(item.get("href"), str):
                problems.append(f"{where}: _links.{rel} has no string href")
    return problems


def _options_violations(options: Any, where: str) -> list[str]:
    if not isinstance(options, dict):
        return [f"{where}: options is not an object"]
    problems = []
    if "inline" in options:
        inline = options["inline"]
        if not isinstance(inline, list):
            problems.append(f"{where}: options.inline is not a list")
        else:
            for item in inline:
                plain = isinstance(item, str)
                pair = (
                    isinstance(item, dict)
                    and set(item) <= {"prompt", "value"}
                    and isinstance(item.get("value"), str)
                    and isinstance(item.get("prompt", ""), str)
                )
                if not (plain or pair):
                    problems.append(f"{where}: options.inline item {item!r} is not allowed")
    for key in ("minItems", "maxItems"):
        value = options.get(key)
        if key in options and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            problems.append(f"{where}: options.{key} is not a non-negative integer")
    if "link" in options and not (
        isinstance(options["link"], dict) and isinstance(options["link"].get("href"), str)
    ):
        problems.append(f"{where}: options.link has no string href")
    if "selectedValues" in options and not isinstance(options["selectedValues"], list):
        problems.append(f"{where}: options.selectedValues is not a list")
    return problems


def _property_violations(prop: Any, where: str) -> list[str]:
    if not isinstance(prop, dict):
        return [f"{where}: property is not an object"]
    problems = []
    name = prop.get("name")
    if not isinstance(name, str) or not name:
        problems.append(f"{where}: name missing or empty")
    if "value" in prop and not isinstance(prop["value"], str):
        problems.append(f"{where}: value {prop['value']!r} is not a string")
    if "type" in prop and prop["type"] not in HAL_FORMS_TYPES:
        problems.append(f"{where}: type {prop['type']!r} is not a HAL-FORMS type")
    for key in NUMBER_KEYS:
        if key in ("min", "max") and prop.get("type") in HTML_DATE_VALUES and key in prop:
            # HTML's numeric types include the dates: min/max spelled as a value of the type.
            if not re.fullmatch(HTML_DATE_VALUES[prop["type"]], str(prop[key])):
                problems.append(f"{where}: {key} {prop[key]!r} is no {prop['type']} value")
        elif key in prop and not _is_number(prop[key]):
            problems.append(f"{where}: {key} {prop[key]!r} is not a number")
    for key in BOOLEAN_KEYS:
        if key in prop and not isinstance(prop[key], bool):
            problems.append(f"{where}: {key} {prop[key]!r} is not a boolean")
    for key in STRING_KEYS:
        if key in prop and not isinstance(prop[key], str):
            problems.append(f"{where}: {key} {prop[key]!r} is not a string")
    if isinstance(prop.get("regex"), str):
        try:
            re.compile(prop["regex"])
        except re.error:
            problems.append(f"{where}: regex does not compile")
    if "options" in prop:
        problems += _options_violations(prop["options"], where)
    return problems


def _template_violations(template: Any, where: str) -> list[str]:
    if not isinstance(template, dict):
        return [f"{where}: template is not an object"]
    problems = []
    method = template.get("method")
    if not isinstance(method, str) or not method.strip():
        problems.append(f"{where}: method missing or empty")
    for key in ("contentType", "title"):
        if key in template and not isinstance(template[key], str):
            problems.append(f"{where}: {key} is not a string")
    if "target" in template and not _is_absolute(template["target"]):
        problems.append(f"{where}: target {template['target']!r} is not an absolute URL")
    properties = template.get("properties")
    if not isinstance(properties, list):
        return [*problems, f"{where}: properties is not a list"]
    names = []
    for index, prop in enumerate(properties):
        problems += _property_violations(prop, f"{where}.properties[{index}]")
        if isinstance(prop, dict):
            names.append(prop.get("name"))
    if len(names) != len(set(names)):
        problems.append(f"{where}: duplicate property names {names}")
    return problems


def hal_forms_violations(document: Any) -> list[str]:
    """Every rule of the HAL-FORMS spec ``document`` breaks; ``[]`` when it is valid."""
    if not isinstance(document, dict):
        return ["document is not an object"]
    problems = []
    if "_links" in document:
        problems += _link_violations(document["_links"], "document")
    templates = document.get("_templates")
    if not isinstance(templates, dict):
        return [*problems, "_templates missing or not an object"]
    for key, template in templates.items():
        problems += _template_violations(template, f"_templates.{key}")
    embedded = document.get("_embedded", {})
    if not isinstance(embedded, dict):
        return [*problems, "_embedded is not an object"]
    for rel, items in embedded.items():
        for index, item in enumerate(items if isinstance(items, list) else [items]):
            problems += [f"_embedded.{rel}[{index}]: {p}" for p in hal_forms_violations(item)]
    return problems
