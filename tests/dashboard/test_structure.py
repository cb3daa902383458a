"""How the dashboard is built: pages reached by name (no path is written into a template or
a view, so moving a page is one change in dashboard/urls.py), queries in selectors, and one
base for the standalone pages."""

import re
from pathlib import Path

import pytest
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = [*ROOT.glob("templates/**/*.html"), *ROOT.glob("integrations/kinds/*/card.html")]
CODE = [*ROOT.glob("dashboard/**/*.py"), ROOT / "integrations/google_views.py",
        ROOT / "config/urls.py"]
LINK = re.compile(r'(?:href|action)="/(?:dashboard|api)[^"]*"')
PATH_IN_CODE = re.compile(r'["\']/dashboard')


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_templates_link_by_name(path):
    assert LINK.findall(path.read_text()) == []


@pytest.mark.parametrize("path", CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_views_redirect_by_name(path):
    assert PATH_IN_CODE.findall(path.read_text()) == []


def test_names_give_the_documented_paths():
    assert reverse("dashboard:home") == "/dashboard/"
    assert reverse("dashboard:form", args=["abc"]) == "/dashboard/forms/abc"
    assert reverse("dashboard:integration-create") == "/dashboard/integrations/new"


def test_the_root_and_sign_in_redirects_still_land(client):
    assert client.get("/")["Location"] == "/dashboard/"
    signed_out = client.get("/dashboard/account")

    assert signed_out["Location"] == "/dashboard/login?next=%2Fdashboard%2Faccount"


def test_standalone_pages_share_one_base():
    pages = [ROOT / "templates" / name for name in
             ("404.html", "500.html", "submissions/error.html", "submissions/thanks.html")]

    assert all(page.read_text().startswith('{% extends "standalone.html" %}') for page in pages)
    styled = [p for p in ROOT.glob("templates/**/*.html") if "<style" in p.read_text()]
    assert [p.name for p in styled] == ["standalone.html"]


VIEWS = sorted((ROOT / "dashboard" / "views").glob("*.py"))


def test_the_views_are_split_by_area():
    assert [path.stem for path in VIEWS] == [
        "__init__", "account", "api_keys", "audit", "common", "confirm", "erasure",
        "form_sections", "home", "integrations", "invitations", "signin", "submissions",
        "teams", "two_factor"]


@pytest.mark.parametrize("path", VIEWS, ids=lambda p: str(p.relative_to(ROOT)))
def test_views_query_through_selectors(path):
    assert re.findall(r"\w+\.objects\.", path.read_text()) == []


@pytest.mark.parametrize("guessed, meant", [
    ("/dashboard/api-keys", "/dashboard/settings/api-keys"),
    ("/dashboard/settings", "/dashboard/account"),
    ("/dashboard/sign-in?next=/dashboard/account", "/dashboard/login?next=/dashboard/account"),
    ("/dashboard/register", "/dashboard/signup"),
    ("/dashboard/2fa", "/dashboard/account/two-factor"),
])
def test_the_paths_people_guess_lead_to_the_page_they_mean(client, guessed, meant):
    response = client.get(guessed)

    assert response.status_code == 302
    assert response["Location"] == meant
