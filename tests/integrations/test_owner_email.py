"""Owner notifications out of the box (contract, "Operations"): every submission that reaches
a form's inbox is mailed to the owner through the operator's mail settings, as a delivery."""

import smtplib
from datetime import timedelta

import pytest
from django.core import mail
from django.core.mail.backends.locmem import EmailBackend

from integrations.delivery import attempt, retry
from integrations.kinds.owner_email import digest
from integrations.models import Delivery, Integration
from submissions.models import Submission
from tests.accounts.test_email_delivery import smtp  # noqa: F401  (a real SMTP server)
from tests.conftest import add_submission, submit


@pytest.fixture
def notified(owner_api):
    """A form made through the API, as an owner makes one: notifyOwner is on by default."""
    from forms_app.models import Form

    response = owner_api.post("/api/v1/forms", {"name": "Contact"}, format="json")
    assert response.status_code == 201
    assert response.json()["notifyOwner"] is True
    return Form.objects.get(pk=response.json()["_id"])


def notifications():
    return [m for m in mail.outbox if m.subject.startswith("New submission")]


def ledger(api, form, submission):
    url = f"/api/v1/forms/{form.pk}/submissions/{submission.pk}/deliveries"
    return api.get(url).json()


def test_a_submission_is_mailed_to_the_owner(public, notified, user):
    response = submit(public, notified, {"name": "Ada", "email": "ada@example.com",
                                         "message": "Hello"})

    assert response.status_code == 200
    [sent] = notifications()
    assert sent.subject == "New submission: Contact"
    assert sent.to == [user.email]
    assert sent.reply_to == ["ada@example.com"]
    lines = sent.body.splitlines()
    fields = lines[lines.index("name: Ada"):lines.index("name: Ada") + 3]
    assert fields == ["name: Ada", "email: ada@example.com", "message: Hello"]
    submission = Submission.objects.get()
    assert f"/dashboard/forms/{notified.pk}/submissions/{submission.pk}" in sent.body


def test_the_notification_is_in_the_ledger(owner_api, public, notified):
    submit(public, notified)

    [row] = ledger(owner_api, notified, Submission.objects.get())

    assert row["type"] == "OWNER_EMAIL"
    assert row["state"] == "delivered"
    assert row["attempts"] == 1


def test_no_reply_to_without_a_valid_address(public, notified):
    submit(public, notified, {"name": "Ada", "email": "not an address"})
    submit(public, notified, {"name": "Bob", "email": "bob@example.com\r\nBcc: x@evil.example"})

    assert [m.reply_to for m in notifications()] == [[], []]
    for message in notifications():
        assert "evil.example" not in str(message.message()["Bcc"] or "")
        assert message.message()["Reply-To"] is None


def test_reply_to_follows_the_email_integrations_field(public, notified, user, provider):
    from integrations.services import integration_create

    integration_create(owner=user, type="EMAIL", config={
        "apiKey": "re_1234567", "fromEmail": "forms@example.com", "toEmail": "o@example.com",
        "autoresponseEmailField": "contact"})
    submit(public, notified, {"email": "no@example.com", "contact": "yes@example.com"})

    assert notifications()[0].reply_to == ["yes@example.com"]


def test_a_form_name_cannot_add_headers(public, notified):
    notified.name = "Contact\r\nBcc: victim@example.com"
    notified.save()

    submit(public, notified)

    [sent] = notifications()
    assert sent.subject == "New submission: Contact Bcc: victim@example.com"
    assert sent.message()["Bcc"] is None


def test_notify_owner_off_sends_nothing_and_on_again_sends(owner_api, public, notified):
    off = owner_api.patch(f"/api/v1/forms/{notified.pk}", {"notifyOwner": False},
                          format="json")
    submit(public, notified, {"name": "Quiet"})
    on = owner_api.patch(f"/api/v1/forms/{notified.pk}", {"notifyOwner": True},
                         format="json")
    submit(public, notified, {"name": "Loud"})

    assert off.json()["notifyOwner"] is False
    assert on.json()["notifyOwner"] is True
    assert [m.body.count("name: Loud") for m in notifications()] == [1]


def test_a_form_made_with_notify_owner_off_mails_nothing(owner_api, public):
    from forms_app.models import Form

    made = owner_api.post("/api/v1/forms", {"name": "Quiet", "notifyOwner": False},
                          format="json")
    submit(public, Form.objects.get(pk=made.json()["_id"]))

    assert made.json()["notifyOwner"] is False
    assert notifications() == []


def test_notify_owner_must_be_a_boolean(owner_api, notified):
    response = owner_api.patch(f"/api/v1/forms/{notified.pk}", {"notifyOwner": "yes"},
                               format="json")

    assert response.status_code == 400
    assert "notifyOwner" in response.json()["details"]


def test_spam_and_honeypot_catches_are_not_mailed_and_a_rescue_is(owner_api, public, notified):
    owner_api.patch(f"/api/v1/forms/{notified.pk}",
                    {"blockedWords": ["casino"], "honeypotField": "website"}, format="json")
    submit(public, notified, {"name": "Bot", "website": "http://spam.example"})
    submit(public, notified, {"name": "Spammer", "message": "best casino"})
    assert notifications() == []

    held = Submission.objects.get(status="spam")
    owner_api.post(f"/api/v1/forms/{notified.pk}/submissions/{held.pk}/not-spam")

    [sent] = notifications()
    assert "message: best casino" in sent.body


def test_the_built_in_integration_is_not_listed_nor_counted(owner_api, notified, user):
    assert owner_api.get("/api/v1/integrations").json() == []
    assert Integration.objects.filter(owner=user, type="OWNER_EMAIL").count() == 1
    response = owner_api.post("/api/v1/integrations", {"type": "OWNER_EMAIL", "config": {}},
                              format="json")
    assert response.status_code == 400


def test_the_dashboard_settings_page_turns_it_off(public, notified, user):
    from django.test import Client

    from tests.conftest import PASSWORD

    browser = Client()
    browser.post("/dashboard/login", {"email": user.email, "password": PASSWORD})
    page = browser.get(f"/dashboard/forms/{notified.pk}/settings")
    assert 'name="notifyOwner"' in page.content.decode()

    browser.post(f"/dashboard/forms/{notified.pk}/settings", {
        "name": "Contact", "rateLimit": 10, "spamFilter": "on"})  # notifyOwner unchecked

    notified.refresh_from_db()
    assert notified.notify_owner is False
    assert not Integration.objects.get(form=notified, type="OWNER_EMAIL").enabled


class RefusingNotifications(EmailBackend):
    """The operator's mail server, refusing the owner's notifications but not alerts."""

    def send_messages(self, messages):
        if any(m.subject.startswith("New submission") for m in messages):
            raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")
        return super().send_messages(messages)


def test_a_mail_server_failure_is_retried_then_alerts(owner_api, public, notified, settings):
    settings.EMAIL_BACKEND = "tests.integrations.test_owner_email.RefusingNotifications"
    settings.DELIVERY_RETRY_DELAYS = [300]
    submit(public, notified)
    submission = Submission.objects.get()

    [row] = ledger(owner_api, notified, submission)
    assert row["state"] == "pending"
    assert row["lastError"] == ("Email not sent: SMTPServerDisconnected: "
                                "Connection unexpectedly closed")
    assert row["nextAttemptAt"] is not None

    Delivery.objects.update(next_attempt_at=submission.submitted_at)
    attempt.delivery_run(row["_id"])

    [row] = ledger(owner_api, notified, submission)
    assert (row["state"], row["attempts"]) == ("failed", 2)
    [alert] = [m for m in mail.outbox if "failed" in m.subject]
    assert "Owner email" in alert.subject and "Contact" in alert.subject


def test_the_notification_arrives_over_smtp(public, notified, smtp, user):  # noqa: F811
    submit(public, notified, {"name": "Ada", "email": "ada@example.com"})

    [raw] = smtp.messages
    assert "Subject: New submission: Contact" in raw
    assert f"To: {user.email}" in raw
    assert "Reply-To: ada@example.com" in raw
    assert "name: Ada" in raw


def test_past_20_in_an_hour_the_rest_go_as_one_digest(owner_api, notified, clock):
    hour = digest.hour_of(clock.current) - timedelta(hours=3)
    clock.current = hour + timedelta(minutes=10)
    submissions = []
    for number in range(25):
        submission = add_submission(notified, {"name": f"Person {number}"})
        Submission.objects.filter(pk=submission.pk).update(
            submitted_at=hour + timedelta(minutes=1, seconds=number))
        submissions.append(submission)

    for submission in submissions:
        attempt.delivery_run(Delivery.objects.get(submission=submission).pk)

    assert len(notifications()) == 20
    held = [ledger(owner_api, notified, s)[0] for s in submissions[20:]]
    assert {row["state"] for row in held} == {"pending"}
    assert {row["lastError"] for row in held} == {digest.HELD_ERROR}
    assert {row["nextAttemptAt"] for row in held} == {
        (hour + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")}

    clock.current = hour + timedelta(hours=1, seconds=1)
    for submission in submissions[20:]:
        attempt.delivery_run(Delivery.objects.get(submission=submission).pk)

    assert len(notifications()) == 21
    sent = notifications()[-1]
    assert sent.subject.startswith("New submissions: Contact (5 more, ")
    for number in range(20, 25):
        assert f"name: Person {number}" in sent.body
    assert "name: Person 19" not in sent.body
    assert {ledger(owner_api, notified, s)[0]["state"] for s in submissions} == {"delivered"}


def test_the_digest_goes_out_when_the_sweeper_finds_the_hour_over(owner_api, notified, clock):
    hour = digest.hour_of(clock.current) - timedelta(hours=3)
    clock.current = hour + timedelta(minutes=10)
    for number in range(22):
        submission = add_submission(notified, {"name": f"Person {number}"})
        Submission.objects.filter(pk=submission.pk).update(submitted_at=hour)
        attempt.delivery_run(Delivery.objects.get(submission=submission).pk)
    assert len(notifications()) == 20

    clock.current = hour + timedelta(hours=1, seconds=5)
    retry.delivery_sweep()  # beat's sweeper: the held ones are due, and a worker takes them

    assert len(notifications()) == 21
    assert Delivery.objects.filter(state="delivered").count() == 22


def test_a_late_one_after_the_digest_went_out_is_mailed_alone(notified, clock):
    hour = digest.hour_of(clock.current) - timedelta(hours=3)
    clock.current = hour + timedelta(minutes=10)

    def arrive(name):
        submission = add_submission(notified, {"name": name})
        Submission.objects.filter(pk=submission.pk).update(submitted_at=hour)
        return submission

    for number in range(21):
        attempt.delivery_run(Delivery.objects.get(submission=arrive(f"Person {number}")).pk)
    clock.current = hour + timedelta(hours=1, seconds=5)
    retry.delivery_sweep()
    assert len(notifications()) == 21  # 20 alone and the digest of one
    late = arrive("Late")  # of that hour, delivered after its digest (a backlog)

    attempt.delivery_run(Delivery.objects.get(submission=late).pk)

    assert len(notifications()) == 22
    assert notifications()[-1].subject == "New submission: Contact"


def test_the_dashboard_shows_a_digest_hold_as_held_never_as_failed(client, user, notified,
                                                                   clock):
    from tests.conftest import PASSWORD

    hour = digest.hour_of(clock.current)
    clock.current = hour + timedelta(minutes=10)
    submissions = [add_submission(notified, {"name": f"Person {n}"}) for n in range(21)]
    for submission in submissions:
        attempt.delivery_run(Delivery.objects.get(submission=submission).pk)
    assert client.post("/dashboard/login",
                       {"email": user.email, "password": PASSWORD}).status_code == 302

    page = client.get(f"/dashboard/forms/{notified.pk}/submissions/{submissions[-1].pk}")
    cards = client.get("/dashboard/integrations").content.decode()

    html = page.content.decode()
    assert "held for the hourly digest" in html
    assert "sent with the digest at" in html
    assert "The delivery failed." not in html
    assert "The delivery failed." not in cards
