"""Template tags of the app's admin pages: ``{% load affordances_admin %}``."""

from __future__ import annotations

from django import template
from django.template import Context, Engine, TemplateDoesNotExist
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

__all__ = ["admin_breadcrumbs", "breadcrumbs_are_a_list"]

register = template.Library()


def breadcrumbs_are_a_list(engine: Engine) -> bool:
    """Whether the admin's ``base.html`` (the one ``engine`` finds: the installed
    Django's, or a project's own) writes its breadcrumbs as ``<ol class="breadcrumbs">``
    of ``<li>`` (Django 6.1 on, which styles only that) rather than ``<div
    class="breadcrumbs">`` joined by &rsaquo; (5.2, 6.0): the app's pages follow whichever
    markup the admin around them is styled for."""
    try:
        base = engine.get_template("admin/base.html")
    except TemplateDoesNotExist:
        return False
    return '<ol class="breadcrumbs">' in base.source


@register.simple_tag(takes_context=True)
def admin_breadcrumbs(context: Context, *crumbs: str) -> SafeString:
    """The admin's breadcrumbs in the installed Django's markup: ``crumbs`` are label and
    URL pairs, then the current page's label; a pair with an empty label is left out
    (``{% admin_breadcrumbs home_label home_url … title %}``)."""
    *pairs, current = crumbs
    links = [(label, url) for label, url in zip(pairs[::2], pairs[1::2], strict=True) if label]
    page = context.template
    if breadcrumbs_are_a_list(page.engine if page is not None else Engine.get_default()):
        return format_html(
            '<ol class="breadcrumbs">{}<li aria-current="page">{}</li></ol>',
            format_html_join("", '<li><a href="{}">{}</a></li>', ((u, t) for t, u in links)),
            current,
        )
    return format_html(
        '<div class="breadcrumbs">\n{}{}\n</div>',
        format_html_join("", '<a href="{}">{}</a>\n&rsaquo; ', ((u, t) for t, u in links)),
        current,
    )
