import time

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command

from config.celery import app as celery_app
from integrations.delivery.claim import LEASE, deliveries_claim_batch
from integrations.delivery.retry import delivery_sweep
from integrations.delivery.tasks import deliver, deliver_due
from integrations.models import Delivery, Integration
from integrations.services import integration_create
from tests.conftest import add_submission, submit
from tests.fakes import Reply
from tests.integrations.conftest import reset_broker_connections


@pytest.fixture
def broker(settings):
    """Switch between a broker that is down and one that delivers (eager) within a test."""

    class Broker:
        def down(self):
            settings.CELERY_TASK_ALWAYS_EAGER = False
            settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens there
            settings.CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 1}
            reset_broker_connections()

        def silent(self):
            """Messages are accepted and never consumed, as if lost."""
            settings.CELERY_TASK_ALWAYS_EAGER = False
            settings.CELERY_BROKER_URL = "memory://"
            settings.CELERY_BROKER_TRANSPORT_OPTIONS = {}
            reset_broker_connections()

        def up(self):
            settings.CELERY_TASK_ALWAYS_EAGER = True
            reset_broker_connections()

    yield Broker()
    reset_broker_connections()


def test_broker_outage_loses_nothing_and_delays_no_one(
    public, form, hook, receiver, broker, monkeypatch
):
    broker.down()
    publishes = []
    real_apply_async = deliver_due.apply_async
    monkeypatch.setattr(
        deliver_due,
        "apply_async",
        lambda *a, **k: publishes.append(1) or real_apply_async(*a, **k),
    )
    for i in range(5):
        began = time.monotonic()
        response = submit(public, form, {"n": str(i)})
        assert response.status_code == 200
        assert time.monotonic() - began < 3  # at most the broker's short connect timeout

    assert len(publishes) == 1  # after one failure the others do not wait for the broker

    assert form.submissions.count() == 5
    assert set(Delivery.objects.values_list("state", "queued_at")) == {("pending", None)}
    assert receiver.requests == []

    assert delivery_sweep() == 5  # still down: nothing is lost, nothing sent
    assert set(Delivery.objects.values_list("queued_at", flat=True)) == {None}

    broker.up()
    assert delivery_sweep() == 5

    assert sorted(r.json()["data"]["fields"]["n"] for r in receiver.requests) == list("01234")
    assert set(Delivery.objects.values_list("state", flat=True)) == {"delivered"}


def test_worker_dying_mid_delivery_only_delays_it(public, form, hook, receiver, broker, clock):
    broker.silent()
    submit(public, form)
    delivery = Delivery.objects.get()
    assert deliveries_claim_batch(1, ids=[delivery.pk])  # a worker takes it ... and dies
    broker.up()

    assert delivery_sweep() == 0  # its lease still runs
    clock.advance(seconds=LEASE.total_seconds() + 1)
    assert delivery_sweep() == 1

    delivery.refresh_from_db()
    assert delivery.state == "delivered"
    assert delivery.attempts == 2
    assert len(receiver.requests) == 1


def test_a_lost_message_is_sent_again_after_a_while(public, form, hook, receiver, broker, clock):
    broker.silent()
    submit(public, form)
    broker.up()

    assert delivery_sweep() == 0  # its message may still be waiting in the broker
    clock.advance(minutes=6)
    assert delivery_sweep() == 1
    assert len(receiver.requests) == 1


def test_only_one_worker_can_claim_an_attempt(public, form, hook, broker):
    broker.silent()
    submit(public, form)
    delivery = Delivery.objects.get()

    assert deliveries_claim_batch(1, ids=[delivery.pk])
    assert not deliveries_claim_batch(1, ids=[delivery.pk])


def test_running_a_task_twice_sends_once(public, form, hook, receiver, broker):
    broker.silent()
    submit(public, form)
    delivery = Delivery.objects.get()
    broker.up()

    deliver.delay(str(delivery.pk))
    deliver.delay(str(delivery.pk))

    assert len(receiver.requests) == 1


def test_celery_is_configured_for_at_least_once_delivery():
    conf = celery_app.conf
    assert conf.task_serializer == "json"
    assert conf.accept_content == ["json"]
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.task_time_limit and conf.task_soft_time_limit
    assert deliver.acks_late is True
    assert "integrations.tasks.sweep_deliveries" in {
        entry["task"] for entry in conf.beat_schedule.values()
    }


def test_delivery_tasks_keep_the_names_queued_messages_carry():
    """Messages already queued, and beat's schedule, name the tasks by these strings."""
    names = {"integrations.tasks.deliver", "integrations.tasks.deliver_due",
             "integrations.tasks.sweep_deliveries", "integrations.tasks.send_failure_alert"}
    assert names <= set(celery_app.tasks)


# --- Operators' commands ------------------------------------------------------------------


def fail_everything(receiver, settings):
    settings.DELIVERY_RETRY_DELAYS = []
    receiver.handler = lambda _r: Reply(500)


def test_retry_deliveries_requeues_failed_ones(public, form, hook, receiver, settings, capsys):
    fail_everything(receiver, settings)
    submit(public, form, {"name": "Ada", "n": "1"})
    submit(public, form, {"name": "Ada", "n": "2"})
    assert set(Delivery.objects.values_list("state", flat=True)) == {"failed"}
    receiver.handler = lambda _r: Reply(200)

    call_command("retry_deliveries")

    assert "Re-queued 2 failed deliveries." in capsys.readouterr().out
    assert set(Delivery.objects.values_list("state", flat=True)) == {"delivered"}


def test_retry_deliveries_filters_by_integration_and_form(
    public, form, user, hook, receiver, settings
):
    from forms_app.services import form_create

    fail_everything(receiver, settings)
    other_form = form_create(owner=user, name="Other", notify_owner=False)
    other_hook = integration_create(owner=user, type="WEBHOOK", config={"url": receiver.url})
    submit(public, form)
    submit(public, other_form)
    receiver.handler = lambda _r: Reply(200)

    call_command("retry_deliveries", "--integration", str(other_hook.pk), "--form", other_form.slug)

    delivered = Delivery.objects.filter(state="delivered")
    assert [(d.integration_id, d.submission.form_id) for d in delivered] == [
        (other_hook.pk, other_form.pk)
    ]
    assert Delivery.objects.filter(state="failed").count() == 3


def test_retry_deliveries_time_window(public, form, hook, receiver, settings, capsys):
    fail_everything(receiver, settings)
    submit(public, form)

    call_command("retry_deliveries", "--until", "2000-01-01T00:00:00Z")

    assert "Re-queued 0" in capsys.readouterr().out


def test_retry_leaves_a_disabled_integrations_deliveries_alone(
    public, form, hook, receiver, settings, capsys
):
    fail_everything(receiver, settings)
    submit(public, form)
    Integration.objects.filter(pk=hook.pk).update(enabled=False)
    failed = Delivery.objects.get()

    call_command("retry_deliveries")

    assert "Re-queued 0" in capsys.readouterr().out
    failed.refresh_from_db()
    assert (failed.state, failed.attempts, failed.last_error) == ("failed", 1, "HTTP 500")
    assert len(receiver.requests) == 1


@pytest.mark.parametrize(
    "args", [["--since", "yesterday"], ["--form", "nope"], ["--integration", "nope"]]
)
def test_retry_deliveries_rejects_bad_filters(db, args):
    with pytest.raises(CommandError):
        call_command("retry_deliveries", *args)


def test_rotate_encryption_keys_moves_secrets_to_the_first_key(user, form, settings, capsys):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.FIELD_ENCRYPTION_KEYS = [old]
    hook = integration_create(owner=user, type="WEBHOOK", config={"url": "https://a.example"})
    form.set_recaptcha_secret("captcha-secret")
    form.save()
    secret = hook.secrets["signingSecret"]

    settings.FIELD_ENCRYPTION_KEYS = [new, old]
    call_command("rotate_encryption_keys")
    settings.FIELD_ENCRYPTION_KEYS = [new]

    assert "Re-encrypted 2 secrets" in capsys.readouterr().out
    assert Integration.objects.get().secrets["signingSecret"] == secret
    form.refresh_from_db()
    assert form.recaptcha_secret == "captcha-secret"


def test_a_long_batch_keeps_its_lease_while_its_worker_lives(
    public, form, hook, broker, clock, monkeypatch
):
    """Each attempt takes 10 s of the clock, the most one may: the 20 s lease would lapse in
    the second one unless the worker renewed it, and another worker would take the rest."""
    from integrations.delivery import transports, worker

    broker.silent()
    for i in range(3):
        submit(public, form, {"n": str(i)})
    lapsed = []

    def slow(integration, event, msg_id):
        clock.advance(seconds=10)
        in_flight = Delivery.objects.filter(state="in_progress")
        lapsed.extend(d.pk for d in in_flight if d.lease_until <= clock())
        return transports.Outcome(True, 200)

    monkeypatch.setattr(transports, "deliver", slow)
    assert worker.deliveries_run_due() == 3

    assert lapsed == []
    assert set(Delivery.objects.values_list("state", flat=True)) == {"delivered"}


def test_a_dead_workers_batch_is_taken_again_within_20_seconds(
    public, form, hook, receiver, broker, clock
):
    from integrations.delivery import claim

    broker.silent()
    submit(public, form)
    assert claim.deliveries_claim_batch(10)  # a worker claims it ... and dies
    broker.up()

    clock.advance(seconds=19)
    assert claim.deliveries_claim_batch(10) == []
    clock.advance(seconds=2)
    assert delivery_sweep() == 1

    assert len(receiver.requests) == 1


def test_status_counts_the_deliveries_that_failed_for_good(
    owner_api, public, form, hook, receiver, settings
):
    status_url = f"/api/v1/integrations/{hook.pk}/status"
    fail_everything(receiver, settings)
    submit(public, form, {"name": "Ada", "n": "1"})
    submit(public, form, {"name": "Ada", "n": "2"})
    receiver.handler = lambda _r: Reply(200)
    # The latest attempt succeeds: healthy, yet two were lost.
    submit(public, form, {"name": "Ada", "n": "3"})

    body = owner_api.get(status_url).json()
    assert (body["status"], body["failedDeliveries"]) == ("healthy", 2)

    call_command("retry_deliveries", "--integration", str(hook.pk))
    assert owner_api.get(status_url).json()["failedDeliveries"] == 0


def test_a_delivery_run_that_loses_the_database_tries_again(public, form, hook, receiver,
                                                            broker, monkeypatch):
    """The database went away mid-run: the task runs again (every few seconds in a worker)
    instead of leaving the rows to the sweeper's five-minute wait."""
    from celery.exceptions import Retry
    from django.db import OperationalError

    from integrations.delivery import tasks, worker

    real, calls = worker.deliveries_run_due, []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("terminating connection due to administrator command")
        return real()

    broker.silent()
    submit(public, form, {"name": "Ada"})
    monkeypatch.setattr(worker, "deliveries_run_due", flaky)
    broker.up()

    with pytest.raises(Retry):  # a retry is asked for, not a failure left to the sweeper
        tasks.deliver_due.apply()
    tasks.deliver_due.apply()  # the retried message

    assert len(calls) == 2
    assert len(receiver.requests) == 1


def test_after_a_batch_that_was_not_full_the_worker_waits_its_pace(
    form, hook, broker, settings, monkeypatch
):
    """Rows gather between claims instead of each claim taking one or two; a full batch
    means a backlog, and the next claim follows at once."""
    from integrations.delivery import claim, transports, worker

    settings.DELIVERY_BATCH_PACE_SECONDS = 30.0
    broker.silent()
    for i in range(worker.BATCH_SIZE + 1):
        add_submission(form, {"n": str(i)})
    claims, pauses = [], []
    real_claim = claim.deliveries_claim_batch
    monkeypatch.setattr(claim, "deliveries_claim_batch",
                        lambda size: claims.append(real_claim(size)) or claims[-1])
    monkeypatch.setattr(worker.time, "sleep", pauses.append)
    monkeypatch.setattr(transports, "deliver", lambda *_args: transports.Outcome(True, 200))

    assert worker.deliveries_run_due() == worker.BATCH_SIZE + 1

    assert [len(ids) for ids in claims][:3] == [worker.BATCH_SIZE, 1, 0]
    assert len(pauses) == 1  # after the batch of one, not after the full one
    assert 29 < pauses[0] <= 30
