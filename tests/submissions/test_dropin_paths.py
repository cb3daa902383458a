"""A site switches by changing one URL (contract, "Drop-in", Paths): ``/f/{slug}`` is the public
endpoint too, and a form may take a chosen slug, so ``https://formspree.io/f/xayzabcd`` becomes
``{BASE_URL}/f/xayzabcd``."""

from __future__ import annotations

import pytest

from core.endpoints import public_slug
from edge import bodies
from forms_app.models import Form
from submissions.models import Submission
from tests.conftest import BROWSER_ACCEPT

FORMS = "/api/v1/forms"


def both(form_or_slug) -> list[str]:
    slug = getattr(form_or_slug, "slug", form_or_slug)
    return [f"/api/v1/f/{slug}", f"/f/{slug}"]


# --- /f/{slug} answers as /api/v1/f/{slug} ------------------------------------------------


def test_the_short_path_stores_and_answers_json_as_the_long_one(public, form):
    answers = [public.post(path, {"name": "Ada"}, format="json") for path in both(form)]

    assert [answer.status_code for answer in answers] == [200, 200]
    ids = [str(row.pk) for row in Submission.objects.order_by("submitted_at")]
    assert [answer.json() for answer in answers] == [
        {"success": True, "message": "Thanks! Your submission was received.", "id": one,
         "ok": True, "next": "http://localhost:8000/thanks"} for one in ids]
    assert [answer["Cache-Control"] for answer in answers] == ["no-store", "no-store"]


def test_the_short_path_redirects_an_html_post_as_the_long_one(public, form):
    answers = [public.post(path, {"name": "Ada"}, HTTP_ACCEPT=BROWSER_ACCEPT)
               for path in both(form)]

    assert [(answer.status_code, answer["Location"]) for answer in answers] == [
        (303, "/thanks"), (303, "/thanks")]


def test_an_unknown_slug_is_the_same_404_on_both(public, db):
    as_json = [public.post(path, {"a": 1}, format="json").json() for path in both("nope")]
    as_html = [public.post(path, {"a": "1"}, HTTP_ACCEPT=BROWSER_ACCEPT)
               for path in both("nope")]

    assert as_json[0] == as_json[1] and as_json[0]["error"] == "form_not_found"
    assert [answer.status_code for answer in as_html] == [404, 404]
    assert as_html[0].content == as_html[1].content


def test_a_nul_in_the_short_path_is_the_endpoints_own_404(public, db):
    response = public.post("/f/a%00b", {"a": 1}, format="json")

    assert response.status_code == 404
    assert response.json()["error"] == "form_not_found"


def test_the_preflight_and_other_methods_match(public, form):
    preflights = [public.options(path, HTTP_ORIGIN="https://site.example",
                                 HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST")
                  for path in both(form)]
    gets = [public.get(path) for path in both(form)]

    for answer in preflights:
        assert answer.status_code == 204
        assert answer["Access-Control-Allow-Origin"] == "https://site.example"
        allowed = [name.strip() for name in answer["Access-Control-Allow-Headers"].split(",")]
        assert {"Content-Type", "Formspree-Client", "Formspree-Session-Data"} <= set(allowed)
    assert [(answer.status_code, answer["Allow"]) for answer in gets] == [
        (405, "POST, OPTIONS")] * 2
    assert gets[0].json() == gets[1].json()


def test_a_path_below_a_slug_is_no_endpoint(public, form):
    response = public.post(f"/f/{form.slug}/extra", {"a": 1}, format="json")

    assert response.status_code == 404
    assert not Submission.objects.exists()


def test_the_edge_reads_file_bodies_on_both_paths():
    """The edge server reads a multipart post to the endpoint up to the upload limit."""
    for path in ("/api/v1/f/abcd", "/f/abcd"):
        assert bodies.limit_for("POST", path, "multipart/form-data; boundary=x", 10, 99) == 99
    assert bodies.limit_for("POST", "/forms/abcd", "multipart/form-data; boundary=x", 10, 99) == 10
    assert [public_slug(path) for path in ("/f/ab", "/f/", "/f/a/b", "/fx/ab")] == [
        "ab", None, None, None]


def test_the_schema_describes_the_short_path(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()

    assert "post" in schema["paths"]["/f/{slug}"]
    assert schema["paths"]["/f/{slug}"]["post"]["tags"] == ["public"]
    form = schema["components"]["schemas"]["FormInputRequest"]["properties"]["slug"]
    assert (form["minLength"], form["maxLength"], form["pattern"]) == (
        4, 64, "^[A-Za-z0-9_-]{4,64}$")


# --- A chosen slug ------------------------------------------------------------------------


def test_a_form_is_created_with_a_chosen_slug(owner_api, public):
    created = owner_api.post(FORMS, {"name": "Imported", "slug": "xayzabcd"}, format="json")

    assert created.status_code == 201
    assert created.json()["slug"] == "xayzabcd"
    assert created.json()["endpoint"] == "http://localhost:8000/api/v1/f/xayzabcd"
    assert public.post("/f/xayzabcd", {"a": 1}, format="json").status_code == 200


def test_a_taken_slug_is_409_for_anyone(owner_api, other_api):
    owner_api.post(FORMS, {"name": "First", "slug": "contact-us"}, format="json")

    again = other_api.post(FORMS, {"name": "Second", "slug": "contact-us"}, format="json")
    mine = owner_api.post(FORMS, {"name": "Mine"}, format="json").json()
    renamed = owner_api.patch(f"{FORMS}/{mine['_id']}", {"slug": "contact-us"}, format="json")

    assert (again.status_code, again.json()["error"]) == (409, "slug_taken")
    assert again.json()["message"].endswith(".")
    assert (renamed.status_code, renamed.json()["error"]) == (409, "slug_taken")
    assert Form.objects.get(pk=mine["_id"]).slug == mine["slug"]
    assert Form.objects.filter(slug="contact-us").count() == 1


@pytest.mark.parametrize("slug", [
    "abc", "x" * 65, "with space", "dot.slug", "slash/slug", "ümlaut", "", "a%2Fb", "abcd\n",
    12345678, None, ["abcd"],
])
def test_a_bad_slug_is_400_naming_slug(owner_api, slug):
    response = owner_api.post(FORMS, {"name": "Bad", "slug": slug}, format="json")

    assert response.status_code == 400
    assert list(response.json()["details"]) == ["slug"]
    assert not Form.objects.exists()


def test_keeping_its_own_slug_is_no_conflict(owner_api):
    made = owner_api.post(FORMS, {"name": "Same", "slug": "same-slug"}, format="json").json()

    again = owner_api.patch(f"{FORMS}/{made['_id']}", {"slug": "same-slug", "name": "S2"},
                            format="json")

    assert again.status_code == 200
    assert again.json()["slug"] == "same-slug"


def test_the_old_slug_stops_answering_when_it_changes(owner_api, public):
    made = owner_api.post(FORMS, {"name": "Moving"}, format="json").json()
    old = made["slug"]
    for path in both(old):  # the form is now kept by this process, under its old slug
        assert public.post(path, {"a": 1}, format="json").status_code == 200

    renamed = owner_api.patch(f"{FORMS}/{made['_id']}", {"slug": "new_home"}, format="json")

    assert renamed.status_code == 200
    assert renamed.json()["endpoint"] == "http://localhost:8000/api/v1/f/new_home"
    for path in both(old):
        gone = public.post(path, {"a": 1}, format="json")
        assert (gone.status_code, gone.json()["error"]) == (404, "form_not_found")
    for path in both("new_home"):
        assert public.post(path, {"a": 1}, format="json").status_code == 200
    assert Submission.objects.count() == 4


def test_another_users_form_cannot_be_renamed(owner_api, other_api):
    made = owner_api.post(FORMS, {"name": "Mine"}, format="json").json()

    response = other_api.patch(f"{FORMS}/{made['_id']}", {"slug": "stolen"}, format="json")

    assert response.status_code == 404
    assert Form.objects.get(pk=made["_id"]).slug == made["slug"]
