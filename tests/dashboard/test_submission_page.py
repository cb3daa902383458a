"""A submission's own page: every field, where it came from, and its delivery ledger with
Retry for a delivery that gave up."""

from django.test import Client

from integrations.models import Delivery, DeliveryState
from integrations.services import integration_create
from tests.conftest import add_submission, make_user


def page(owner, form, submission):
    return owner.get(f"/dashboard/forms/{form.pk}/submissions/{submission.pk}")


def webhook(user, name):
    return integration_create(owner=user, type="WEBHOOK",
                              config={"url": f"https://hooks.example.com/{name}"})


def test_every_field_and_its_meta(owner, form):
    submission = add_submission(
        form, [["name", "Ada"], ["tags", ["a", "b"]], ["note", "line one\nline two"]],
        user_agent="Mozilla/5.0 Test")

    html = page(owner, form, submission).content.decode().replace("<wbr>", "")

    assert '<dt>name</dt><dd><span class="value-text">Ada</span>' in html
    # As the export writes it: a list joined.
    assert '<dt>tags</dt><dd><span class="value-text">a, b</span>' in html
    assert '<span class="value-text">line one\nline two</span>' in html
    assert "203.0.113.5" in html and "https://site.example" in html
    assert "Mozilla/5.0 Test" in html
    assert "No integration received this submission." in html


def test_the_inbox_links_each_submission_to_its_page(owner, form):
    submission = add_submission(form, {"name": "Ada"})

    listing = owner.get(f"/dashboard/forms/{form.pk}").content.decode().replace("<wbr>", "")

    assert f'href="/dashboard/forms/{form.pk}/submissions/{submission.pk}"' in listing


def test_the_ledger_offers_retry_only_for_a_delivery_that_gave_up(owner, form, user):
    webhook(user, "a")
    webhook(user, "b")
    submission = add_submission(form, {"name": "Ada"})
    failed, delivered = Delivery.objects.filter(submission=submission).order_by("created_at",
                                                                                "id")
    Delivery.objects.filter(pk=failed.pk).update(state=DeliveryState.FAILED, attempts=8,
                                                 last_error="HTTP 500")
    Delivery.objects.filter(pk=delivered.pk).update(state=DeliveryState.DELIVERED, attempts=1)

    html = page(owner, form, submission).content.decode().replace("<wbr>", "")

    assert html.count(">Retry</button>") == 1
    assert "HTTP 500" in html and "delivered" in html
    retry = f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/deliveries/{failed.pk}/retry"
    assert f'action="{retry}"' in html

    response = owner.post(retry)

    assert response.status_code == 302
    failed.refresh_from_db()
    assert failed.state == DeliveryState.PENDING
    after = owner.get(response["Location"]).content.decode().replace("<wbr>", "")
    assert "will be sent again" in after
    assert ">Retry</button>" not in after


def test_retrying_what_cannot_be_retried_says_so_and_changes_nothing(owner, form, user):
    webhook(user, "a")
    submission = add_submission(form, {"name": "Ada"})
    delivery = Delivery.objects.get(submission=submission)
    Delivery.objects.filter(pk=delivery.pk).update(state=DeliveryState.DELIVERED)
    retry = f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/deliveries/{delivery.pk}/retry"

    response = owner.post(retry, follow=True)

    assert "Only a failed delivery of an enabled integration can be retried." in (
        response.content.decode().replace("<wbr>", ""))
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.DELIVERED


def test_another_owners_submission_and_deliveries_are_404(owner, form, db):
    stranger = make_user("stranger@example.com")
    from forms_app.services import form_create

    theirs = form_create(owner=stranger, name="Theirs", notify_owner=False)
    webhook(stranger, "x")
    submission = add_submission(theirs, {"name": "Eve"})
    delivery = Delivery.objects.get(submission=submission)
    Delivery.objects.filter(pk=delivery.pk).update(state=DeliveryState.FAILED)

    assert page(owner, theirs, submission).status_code == 404
    assert page(owner, form, submission).status_code == 404  # not a submission of this form
    retry = (f"/dashboard/forms/{theirs.pk}/submissions/{submission.pk}/deliveries/"
             f"{delivery.pk}/retry")
    assert owner.post(retry).status_code == 404
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.FAILED


def test_retry_is_a_post_with_a_csrf_token(form, user):
    from accounts.services import token_for

    webhook(user, "a")
    submission = add_submission(form, {"name": "Ada"})
    delivery = Delivery.objects.get(submission=submission)
    Delivery.objects.filter(pk=delivery.pk).update(state=DeliveryState.FAILED)
    browser = Client(enforce_csrf_checks=True)
    browser.cookies["ff_token"] = str(token_for(user))
    retry = f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/deliveries/{delivery.pk}/retry"

    assert browser.get(retry).status_code == 405
    assert browser.post(retry).status_code == 403
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.FAILED


def test_a_forms_page_lists_the_integrations_that_receive_it(owner, form, user):
    from forms_app.services import form_create

    other = form_create(owner=user, name="Other")
    webhook(user, "everywhere")
    integration_create(owner=user, type="SLACK",
                       config={"webhookUrl": "https://hooks.slack.com/services/T/B/x"},
                       form_id=str(form.pk))
    integration_create(owner=user, type="DISCORD",
                       config={"webhookUrl": "https://discord.com/api/webhooks/1/x"},
                       form_id=str(other.pk))

    page = owner.get(f"/dashboard/forms/{form.pk}/integrations")
    html = page.content.decode().replace("<wbr>", "")
    section = html[html.index('id="integrations-heading"'):]

    assert ('<strong class="token">Webhook to hooks.example.com</strong> '
            '<span class="hint">(every form)</span>') in section
    assert '<strong class="token">Slack</strong>' in section
    assert "Discord" not in section
    assert f'href="/dashboard/forms/{form.pk}/integrations" aria-current="page"' in html


def test_a_retry_names_a_delivery_of_the_submission_it_is_about(owner, form, user):
    webhook(user, "x")
    first = add_submission(form, {"name": "Ada"})
    second = add_submission(form, {"name": "Grace"})
    delivery = Delivery.objects.get(submission=second)
    Delivery.objects.filter(pk=delivery.pk).update(state=DeliveryState.FAILED)

    wrong = (f"/dashboard/forms/{form.pk}/submissions/{first.pk}/deliveries/"
             f"{delivery.pk}/retry")

    assert owner.post(wrong).status_code == 404
    delivery.refresh_from_db()
    assert delivery.state == DeliveryState.FAILED


def test_a_long_value_is_shown_whole_on_the_submissions_own_page(owner, form):
    """The owner came to this page to read the message: all of it, not its start."""
    message = "A long message. " * 110 + "THE END"
    submission = add_submission(form, {"message": message, "lines": "\n".join("x" * 40)})

    html = page(owner, form, submission).content.decode()

    assert f'<span class="value-text">{message}</span>' in html
    assert "show all" not in html


def test_back_to_a_deleted_submission_says_it_was_deleted(owner, form):
    submission = add_submission(form, {"name": "Ada"})
    owner.post(f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/delete")

    back = page(owner, form, submission)

    assert back.status_code == 410
    assert "This submission was deleted" in back.content.decode()
    assert f"/dashboard/forms/{form.pk}" in back.content.decode()


def test_submissions_deleted_in_bulk_say_so_too(owner, form):
    chosen = [add_submission(form, {"name": name}) for name in ("Ada", "Grace")]
    owner.post(f"/dashboard/forms/{form.pk}/submissions/bulk",
               {"action": "delete", "ids": [str(s.pk) for s in chosen], "folder": "inbox"})

    assert {page(owner, form, s).status_code for s in chosen} == {410}


def test_a_forged_cookie_is_still_not_found(owner, form):
    """The cookie only speaks of what this browser deleted, signed: a forged one gets a plain
    404."""
    submission = add_submission(form, {"name": "Ada"})
    owner.post(f"/dashboard/forms/{form.pk}/submissions/{submission.pk}/delete")
    owner.cookies["ff_deleted"] = str(submission.pk)

    assert page(owner, form, submission).status_code == 404
