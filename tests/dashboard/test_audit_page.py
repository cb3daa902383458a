"""The dashboard's audit log page: the account's entries, the API's filters, its paging; the
dashboard's own changes recorded through the same services."""

from datetime import timedelta

from django.db import transaction

from audit.models import Entry
from audit.services import Target, record
from core import clock
from tests.conftest import add_submission

PAGE = "/dashboard/account/audit"


def write(owner, action="form.changed", name="Contact", at=None) -> Entry:
    with transaction.atomic():
        entry = record(owner_id=owner.pk, actor=owner, action=action,
                       target=Target("form", "f1", name),
                       details={"changed": ["name", "redirectUrl"], "success": True})
    if at is not None:
        Entry.objects.filter(pk=entry.pk).update(at=at)
    return entry


def test_the_page_lists_the_accounts_entries(owner, user, other_user):
    write(user, name="Mine")
    write(other_user, name="Theirs")

    page = owner.get(PAGE)

    text = page.content.decode()
    assert page.status_code == 200
    assert "form.changed" in text and "form: Mine" in text and "Theirs" not in text
    assert "changed: name, redirectUrl" in text and "success: yes" in text
    assert '<time datetime="' in text


def test_filters_by_action_family_and_day(owner, user):
    write(user, "form.deleted", name="Gone")
    write(user, "api_key.created", name="Warehouse")
    write(user, "form.changed", name="Old", at=clock.now() - timedelta(days=10))

    by_family = owner.get(PAGE, {"action": "form"}).content.decode()
    by_day = owner.get(PAGE, {"since": (clock.now() - timedelta(days=2)).date().isoformat()})

    assert "Gone" in by_family and "Old" in by_family and "Warehouse" not in by_family
    assert "Old" not in by_day.content.decode() and "Warehouse" in by_day.content.decode()


def test_older_entries_are_a_link_away(owner, user):
    for n in range(51):
        write(user, name=f"Form {n}", at=clock.now() - timedelta(minutes=n))

    first = owner.get(PAGE, {"action": "form"}).content.decode()
    link = first.split('<a href="?')[1].split('"')[0].replace("&amp;", "&")
    second = owner.get(f"{PAGE}?{link}").content.decode()

    assert "Form 0<" in first and "Form 50<" not in first
    assert "action=form" in link
    assert "Form 50<" in second and "Form 0<" not in second


def test_bad_filters_and_cursors_are_400(owner, user):
    assert owner.get(PAGE, {"action": "form.sneezed"}).status_code == 400
    assert owner.get(PAGE, {"since": "yesterday"}).status_code == 400
    bad = owner.get(PAGE, {"cursor": "forged"})
    assert bad.status_code == 400
    assert "start again from the top" in bad.content.decode()


def test_the_page_needs_a_login(client, db):
    assert client.get(PAGE).status_code == 302


def test_the_account_page_links_to_it(owner):
    assert PAGE in owner.get("/dashboard/account").content.decode()


def test_the_dashboards_changes_are_recorded(owner, user, form):
    Entry.objects.all().delete()
    made = add_submission(form, {"name": "Ada"})

    owner.post(f"/dashboard/forms/{form.pk}/submissions/bulk",
               {"action": "spam", "ids": [str(made.pk)], "folder": "inbox"})
    owner.get(f"/dashboard/forms/{form.pk}/export", {"format": "json"})
    owner.post(f"/dashboard/forms/{form.pk}/delete")

    actions = list(Entry.objects.order_by("at").values_list("action", "actor_id"))
    assert actions == [("submissions.marked_spam", user.pk),
                       ("submissions.exported", user.pk), ("form.deleted", user.pk)]
