"""The app's admin pages write their breadcrumbs in the markup the admin around them is
styled for (issue 52 item 6): Django 5.2 and 6.0 style ``<div class="breadcrumbs">``,
6.1 only ``<ol class="breadcrumbs">`` of ``<li>``. Each page is compared with Django's own
change form, then with an admin ``base.html`` of the other release's markup."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth import get_user_model
from django.template import Engine
from django.test import Client, override_settings

from tests.generic import parcels_api
from tests.generic.parcels import Parcel

ADMIN = "/parcels-admin/generic/parcel/"
DIV = '<div class="breadcrumbs">\n<a href="/parcels-admin/">Home</a>\n&rsaquo; '
OL = '<ol class="breadcrumbs"><li><a href="/parcels-admin/">Home</a></li>'


@pytest.fixture
def admin_client(db: None) -> Iterator[Client]:
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": {"generic.Parcel": parcels_api.REGISTRATION},
    }
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(parcels_api)
        with override_settings(ROOT_URLCONF="tests.generic.parcels_api"):
            client = Client()
            client.force_login(get_user_model().objects.create_superuser("root"))
            yield client


def _pages(client: Client) -> dict[str, str]:
    parcel = Parcel.objects.create()
    bulk = client.post(
        ADMIN, {"action": "operation_dispatch_parcel", ACTION_CHECKBOX_NAME: [parcel.pk]}
    )
    pages = {
        "change form": client.get(f"{ADMIN}{parcel.pk}/change/"),
        "operation form": client.get(f"{ADMIN}{parcel.pk}/operation/dispatch_parcel/"),
        "catalog": client.get(f"{ADMIN}catalog/"),
        "bulk operation": bulk,
    }
    assert {name: page.status_code for name, page in pages.items()} == dict.fromkeys(pages, 200)
    return {name: page.content.decode() for name, page in pages.items()}


def _breadcrumbs(html: str) -> tuple[str, list[str]]:
    """The breadcrumbs' element and its crumbs' texts."""
    found = re.search(r'<(div|ol) class="breadcrumbs">(.*?)</\1>', html, re.S)
    assert found is not None
    tag, inner = found.groups()
    if tag == "ol":
        crumbs = re.findall(r"<li[^>]*>(.*?)</li>", inner, re.S)
    else:
        crumbs = inner.split("&rsaquo;")
    return tag, [re.sub(r"<[^>]+>", "", crumb).strip() for crumb in crumbs]


def test_the_apps_pages_write_the_installed_admins_breadcrumbs(admin_client: Client) -> None:
    pages = _pages(admin_client)
    tags = {name: _breadcrumbs(html)[0] for name, html in pages.items()}
    assert set(tags.values()) == {tags["change form"]}
    assert _breadcrumbs(pages["operation form"])[1] == [
        "Home",
        "Generic",
        "Parcels",
        str(Parcel.objects.get()),
        "Dispatch parcel",
    ]
    assert _breadcrumbs(pages["catalog"])[1] == ["Home", "Parcels", "Operations"]
    assert _breadcrumbs(pages["bulk operation"])[1] == ["Home", "Parcels", "Dispatch parcel"]


def _other_release_base(directory: Path) -> str:
    """An admin ``base.html`` with the other release's breadcrumbs markup; which one."""
    source = Engine.get_default().get_template("admin/base.html").source
    block = re.search(r"{% block breadcrumbs %}(.*?){% endblock %}", source, re.S)
    assert block is not None
    if '<ol class="breadcrumbs">' in source:
        markup, other = '<div class="breadcrumbs"><a href="/">Home</a></div>', "div"
    else:
        markup, other = '<ol class="breadcrumbs"><li><a href="/">Home</a></li></ol>', "ol"
    (directory / "admin").mkdir()
    (directory / "admin" / "base.html").write_text(source.replace(block.group(1), markup))
    return other


def test_a_release_with_the_other_markup_gets_it(admin_client: Client, tmp_path: Path) -> None:
    other = _other_release_base(tmp_path)
    templates = [{**django_settings.TEMPLATES[0], "DIRS": [str(tmp_path)]}]
    with override_settings(TEMPLATES=templates):
        pages = _pages(admin_client)
    for name in ("operation form", "catalog", "bulk operation"):
        tag, crumbs = _breadcrumbs(pages[name])
        assert tag == other, name
        assert crumbs[0] == "Home"
        assert pages[name].count('class="breadcrumbs"') == 1, name
    assert (OL if other == "ol" else DIV) in pages["catalog"]
