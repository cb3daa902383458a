import pytest

from accounts.models import EmailCode, User
from integrations.models import Delivery, Integration
from integrations.services import integration_create
from pullapi.models import ApiKey
from submissions.models import Submission
from tests.conftest import create_key, submit
from tests.fakes import Reply


@pytest.fixture
def world(user, form, public, allow_private_receiver, settings):
    """One of everything, with a failed delivery."""
    settings.DELIVERY_RETRY_DELAYS = []
    allow_private_receiver.handler = lambda _r: Reply(500)
    hook = integration_create(
        owner=user, type="WEBHOOK", config={"url": allow_private_receiver.url}
    )
    mailer = integration_create(
        owner=user,
        type="EMAIL",
        config={
            "apiKey": "re_supersecret_9999",
            "fromEmail": "a@example.com",
            "toEmail": "b@example.com",
        },
    )
    Integration.objects.filter(pk=mailer.pk).update(enabled=False)
    submit(public, form, {"name": "Ada"})
    plain = create_key(user, [form])
    EmailCode.objects.create(
        user=user, code_hash="h" * 64, expires_at=form.created_at, sent_at=form.created_at
    )
    return {"hook": hook, "key": plain, "receiver": allow_private_receiver}


PAGES = [
    "/admin/accounts/user/",
    "/admin/accounts/user/add/",
    "/admin/accounts/emailcode/",
    "/admin/forms_app/form/",
    "/admin/submissions/submission/",
    "/admin/pullapi/apikey/",
    "/admin/integrations/integration/",
    "/admin/integrations/delivery/",
    "/admin/integrations/deliveryattempt/",
]


@pytest.mark.parametrize("path", PAGES)
def test_every_list_page_opens(admin_client, world, path):
    assert admin_client.get(path).status_code == 200


def change_pages(world):
    hook = world["hook"]
    return [
        f"/admin/accounts/user/{hook.owner_id}/change/",
        f"/admin/forms_app/form/{Submission.objects.get().form_id}/change/",
        f"/admin/submissions/submission/{Submission.objects.get().pk}/change/",
        f"/admin/pullapi/apikey/{ApiKey.objects.get().pk}/change/",
        f"/admin/integrations/integration/{hook.pk}/change/",
        f"/admin/integrations/delivery/{Delivery.objects.first().pk}/change/",
        f"/admin/accounts/emailcode/{EmailCode.objects.get().pk}/change/",
    ]


def test_change_pages_open_and_show_no_secret(admin_client, world, user):
    secrets = [
        world["key"],
        ApiKey.objects.get().key_hash,
        world["hook"].secrets["signingSecret"],
        "re_supersecret_9999",
        "h" * 64,
        user.password,
    ]
    pages = change_pages(world) + [
        f"/admin/integrations/integration/{i.pk}/change/" for i in Integration.objects.all()
    ]
    for path in pages:
        response = admin_client.get(path)
        assert response.status_code == 200, path
        text = response.content.decode()
        for secret in secrets:
            assert secret not in text, (path, secret[:12])


def test_delivery_log_shows_attempts(admin_client, world):
    delivery = Delivery.objects.get(integration=world["hook"])

    text = admin_client.get(f"/admin/integrations/delivery/{delivery.pk}/change/").content.decode()

    assert "HTTP 500" in text


def test_retry_failed_deliveries_action(admin_client, world):
    world["receiver"].handler = lambda _r: Reply(200)
    delivery = Delivery.objects.get(integration=world["hook"])
    assert delivery.state == "failed"

    response = admin_client.post(
        "/admin/integrations/delivery/",
        {"action": "retry_failed", "_selected_action": [str(delivery.pk)]},
        follow=True,
    )

    assert "Re-queued 1 failed deliveries." in response.content.decode()
    delivery.refresh_from_db()
    assert delivery.state == "delivered"


def test_revoke_keys_action(admin_client, world, api, form):
    key = ApiKey.objects.get()

    admin_client.post(
        "/admin/pullapi/apikey/", {"action": "revoke_keys", "_selected_action": [str(key.pk)]}
    )

    response = api.get(
        "/api/v1/submissions", {"formId": form.slug}, HTTP_AUTHORIZATION=f"Bearer {world['key']}"
    )
    assert response.status_code == 401


def test_disable_integration_action(admin_client, world):
    hook = world["hook"]

    admin_client.post(
        "/admin/integrations/integration/",
        {"action": "disable_integrations", "_selected_action": [str(hook.pk)]},
    )

    hook.refresh_from_db()
    assert hook.enabled is False


def test_reset_usage_action_and_limit_override(admin_client, world, user, public, form):
    User.objects.filter(pk=user.pk).update(monthly_submission_limit=1)
    assert submit(public, form).status_code == 403

    admin_client.post(
        "/admin/accounts/user/", {"action": "reset_usage", "_selected_action": [str(user.pk)]}
    )

    user.refresh_from_db()
    assert user.monthly_submission_count == 0
    assert submit(public, form).status_code == 200


def test_operator_sets_a_monthly_limit_in_the_user_form(admin_client, user):
    page = admin_client.get(f"/admin/accounts/user/{user.pk}/change/")
    form = page.context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None}
    data.update(
        email=user.email,
        monthly_submission_limit=5000,
        is_active="on",
        is_verified="on",
        date_joined_0="2026-01-01",
        date_joined_1="00:00:00",
    )
    data.pop("groups", None)
    data.pop("user_permissions", None)

    response = admin_client.post(f"/admin/accounts/user/{user.pk}/change/", data)

    assert response.status_code == 302, response.content[:2000]
    user.refresh_from_db()
    assert user.monthly_submission_limit == 5000


def test_the_submission_list_is_newest_first_with_folder_and_readable_values(admin_client, form):
    from datetime import UTC, datetime

    from tests.conftest import add_submission

    older = add_submission(form, {"name": "Older", "tags": ["a", "b"]},
                           at=datetime(2026, 11, 1, tzinfo=UTC))
    newer = add_submission(form, {"name": "Newer"}, at=datetime(2026, 11, 2, tzinfo=UTC))

    listing = admin_client.get("/admin/submissions/submission/").content.decode()
    detail = admin_client.get(f"/admin/submissions/submission/{older.pk}/change/").content.decode()

    assert listing.index("name: Newer") < listing.index("name: Older; tags: a, b")
    assert ">Inbox<" in listing
    assert "Received at" in detail and "Nov. 1, 2026" in detail
    assert "<strong>tags</strong>: a, b" in detail
    assert newer.pk != older.pk


def add_delivery(integration, submission, at):
    from datetime import UTC, datetime

    from integrations.models import Delivery

    delivery = Delivery.objects.create(integration=integration, submission=submission,
                                       next_attempt_at=datetime(2026, 1, 1, tzinfo=UTC))
    Delivery.objects.filter(pk=delivery.pk).update(created_at=at)  # auto_now_add set it
    return delivery


def test_the_delivery_list_is_newest_first(admin_client, user, form):
    from datetime import UTC, datetime

    from tests.conftest import add_submission

    hook = integration_create(owner=user, type="WEBHOOK",
                              config={"url": "https://hooks.example.com/x"})
    submission = add_submission(form, {"name": "Ada"})
    Delivery.objects.all().delete()  # the submission's own, made just now
    days = [add_delivery(hook, submission, datetime(2026, 3, day, tzinfo=UTC))
            for day in (2, 3, 1)]

    listing = admin_client.get("/admin/integrations/delivery/").content.decode()

    rows = [listing.index(f"/admin/integrations/delivery/{d.pk}/change/") for d in days]
    middle, newest, oldest = rows
    assert newest < middle < oldest


def test_a_submissions_page_lists_its_deliveries(admin_client, user, form):
    """The inline integrations adds to submissions' admin (submissions does not import it)."""
    from tests.conftest import add_submission

    integration_create(owner=user, type="WEBHOOK", config={"url": "https://hooks.example.com/x"})
    submission = add_submission(form, {"name": "Ada"})
    delivery = Delivery.objects.get(submission=submission)

    page = admin_client.get(f"/admin/submissions/submission/{submission.pk}/change/")

    assert f"/admin/integrations/delivery/{delivery.pk}/change/" in page.content.decode()


def test_the_admin_names_integrations_by_their_destination(admin_client, user, form):
    from datetime import UTC, datetime

    from tests.conftest import add_submission

    webhook = integration_create(owner=user, type="WEBHOOK",
                                 config={"url": "https://hooks.example.com/x"})
    mailer = integration_create(owner=user, type="EMAIL", config={
        "apiKey": "re_1234567", "fromEmail": "a@example.com", "toEmail": "team@example.com"})
    submission = add_submission(form, {"name": "Ada"})
    Delivery.objects.all().delete()
    for integration in (webhook, mailer):
        add_delivery(integration, submission, datetime(2026, 3, 1, tzinfo=UTC))

    listing = admin_client.get("/admin/integrations/delivery/").content.decode()
    inline = admin_client.get(
        f"/admin/submissions/submission/{submission.pk}/change/").content.decode()
    change = admin_client.get(
        f"/admin/integrations/integration/{webhook.pk}/change/").content.decode()

    for page in (listing, inline):
        assert "Webhook to hooks.example.com" in page
        assert "Email to team@example.com" in page
        assert f"WEBHOOK {webhook.pk}" not in page and f"EMAIL {mailer.pk}" not in page
    assert "Webhook to hooks.example.com" in change


def test_the_routine_sweep_logs_at_debug(caplog):
    import logging

    import config.celery  # noqa: F401  (installs the filter)

    trace = logging.getLogger("celery.app.trace")
    with caplog.at_level(logging.INFO):
        trace.info("Task %(name)s[%(id)s] succeeded in %(runtime)ss: %(return_value)s",
                   {"name": "integrations.tasks.sweep_deliveries", "id": "1", "runtime": 0.01,
                    "return_value": 0})
        logging.getLogger("celery.beat").info("Scheduler: Sending due task %s (%s)",
                                              "sweep-deliveries",
                                              "integrations.tasks.sweep_deliveries")
        trace.info("Task %(name)s[%(id)s] succeeded in %(runtime)ss: %(return_value)s",
                   {"name": "integrations.tasks.deliver", "id": "2", "runtime": 0.2,
                    "return_value": None})
    assert [record.getMessage()[:40] for record in caplog.records] == [
        "Task integrations.tasks.deliver[2] succe"]

    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="celery.app.trace"):
        trace.info("Task %(name)s[%(id)s] received",
                   {"name": "integrations.tasks.sweep_deliveries", "id": "3"})
    assert [record.levelname for record in caplog.records] == ["DEBUG"]


def test_the_feed_sequencers_tick_logs_at_debug_too(caplog):
    import logging

    import config.celery  # noqa: F401  (installs the filter)

    with caplog.at_level(logging.INFO):
        logging.getLogger("celery.beat").info("Scheduler: Sending due task %s (%s)",
                                              "place-in-feed", "submissions.tasks.place_in_feed")
        logging.getLogger("celery.app.trace").info(
            "Task %(name)s[%(id)s] succeeded in %(runtime)ss: %(return_value)s",
            {"name": "submissions.tasks.place_in_feed", "id": "4", "runtime": 0.01,
             "return_value": 0})
    assert caplog.records == []


def test_every_page_has_the_icon(client, db):
    answer = client.get("/favicon.ico")
    assert answer.status_code == 301
    assert answer["Location"] == "/static/dashboard/favicon.svg"
    assert 'rel="icon"' in client.get("/no-such-page").content.decode()


def test_taking_a_form_from_a_key_ends_its_subscriptions_there(admin_client, user, form):
    """A key reaches only its forms: the subscriptions it made on a form taken from it in the
    admin end, those on the forms it keeps stay, and the dashboard's own stay."""
    from forms_app.services import form_create
    from integrations.hooks.services import hook_create
    from pullapi.services import api_key_create

    kept_form = form_create(owner=user, name="Kept", notify_owner=False)
    key, _ = api_key_create(owner=user, name="zapier", forms=[str(form.pk), str(kept_form.pk)],
                            scopes=["read", "hooks"])

    def subscribe(on, api_key):
        return hook_create(owner=user, api_key=api_key, url="https://hooks.zapier.example/1",
                           form_id=str(on.pk), events=None)

    taken, kept, dashboards = subscribe(form, key), subscribe(kept_form, key), subscribe(form, None)

    response = admin_client.post(f"/admin/pullapi/apikey/{key.pk}/change/",
                                 {"name": "zapier", "forms": [str(kept_form.pk)]}, follow=True)

    assert response.status_code == 200
    assert "Ended 1 subscriptions on forms the key no longer holds." in response.content.decode()
    assert list(key.forms.all()) == [kept_form]
    assert set(Integration.objects.filter(hook=True).values_list("pk", flat=True)) == {
        kept.pk, dashboards.pk}
    assert not Integration.objects.filter(pk=taken.pk).exists()
