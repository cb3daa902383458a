"""The dashboard's erasure page: preview, confirm, receipts."""

from submissions.models import Erasure, Submission
from tests.conftest import add_submission

PAGE = "/dashboard/account/erasure"


def test_preview_then_confirm_then_the_receipt(owner, form):
    add_submission(form, {"email": "ada@example.com"})
    add_submission(form, {"email": "bob@example.com"})

    preview = owner.get(PAGE, {"email": "ADA@example.com"})

    assert preview.status_code == 200
    assert "Erase 1 submission" in preview.content.decode()
    assert Submission.objects.count() == 2
    confirmed = owner.post(f"{PAGE}/confirm", {"email": "ada@example.com"})
    assert confirmed.status_code == 302
    assert confirmed["Location"] == PAGE
    page = owner.get(PAGE).content.decode()
    assert "Erased 1 submission holding ****.com" in page
    assert "****.com" in page
    assert '<time datetime="' in page.split("Erasure receipts")[1]  # in the owner's zone, named
    assert Submission.objects.count() == 1
    assert Erasure.objects.get().submissions == 1


def test_a_bad_address_is_shown_and_erases_nothing(owner, form):
    add_submission(form, {"email": "ada@example.com"})

    assert owner.get(PAGE, {"email": "nope"}).status_code == 400
    assert owner.post(f"{PAGE}/confirm", {"email": "nope"}).status_code == 400
    assert Submission.objects.count() == 1


def test_the_page_needs_a_login(client, db):
    assert client.get(PAGE).status_code == 302
    assert client.post(f"{PAGE}/confirm", {"email": "ada@example.com"}).status_code in (302, 403)


def test_a_key_made_in_the_dashboard_may_take_the_hooks_scope(owner, form):
    from pullapi.models import ApiKey

    owner.post("/dashboard/settings/api-keys/new",
               {"name": "Zapier", "forms": [str(form.pk)], "hooks": "on"})
    owner.post("/dashboard/settings/api-keys/new", {"name": "Sync", "forms": [str(form.pk)]})

    assert dict(ApiKey.objects.values_list("name", "scopes")) == {
        "Zapier": "read hooks", "Sync": "read"}
    assert "read, hooks" in owner.get("/dashboard/settings/api-keys").content.decode()
