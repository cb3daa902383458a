"""GET /metrics (contract, "Operations"): Prometheus text for the bearer of METRICS_TOKEN, read
here with prometheus_client's own parser, as a Prometheus server reads it."""

import multiprocessing
import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from integrations.delivery import attempt
from integrations.kinds.owner_email import digest
from integrations.models import Delivery
from operations import heartbeat
from operations.models import Heartbeat
from submissions.models import Submission
from tests.conftest import add_submission, submit
from tests.fakes import Reply

TOKEN = "metrics-token-0123456789"

FAMILIES = {
    "formflow_http_requests": "counter",
    "formflow_http_request_duration_seconds": "histogram",
    "formflow_submissions": "counter",
    "formflow_deliveries": "counter",
    "formflow_delivery_seconds": "histogram",
    "formflow_outbox_due": "gauge",
    "formflow_outbox_oldest_due_seconds": "gauge",
    "formflow_beat_last_run_timestamp_seconds": "gauge",
    "formflow_worker_last_seen_timestamp_seconds": "gauge",
    "formflow_mail_failures": "counter",
    "formflow_build_info": "gauge",
}


@pytest.fixture
def token(settings):
    settings.METRICS_TOKEN = TOKEN


class Scrape:
    """One scrape, parsed: its families by name, and each sample's value by its labels."""

    def __init__(self, client) -> None:
        response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
        assert response.status_code == 200
        self.families = {family.name: family for family in
                         text_string_to_metric_families(response.content.decode())}

    def value(self, sample: str, **labels: str) -> float:
        """A sample's value (0 when it is not there yet): ``sample`` is the sample's name,
        ``formflow_submissions_total`` for the family ``formflow_submissions``."""
        return sum(found.value for family in self.families.values() for found in family.samples
                   if found.name == sample and all(found.labels.get(key) == wanted
                                                   for key, wanted in labels.items()))

    def labels(self, family: str, label: str) -> set[str]:
        return {sample.labels[label] for sample in self.families[family].samples
                if label in sample.labels}


def grew(before: Scrape, after: Scrape, sample: str, **labels: str) -> float:
    return after.value(sample, **labels) - before.value(sample, **labels)


def test_without_metrics_token_it_is_a_404(client, db, settings):
    settings.METRICS_TOKEN = None

    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_a_wrong_or_missing_token_is_a_404(client, token):
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 404
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION=TOKEN).status_code == 404


def test_the_scrape_parses_with_every_family_the_contract_names(client, token):
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")

    scrape = Scrape(client)

    assert {name: scrape.families[name].type for name in FAMILIES} == FAMILIES
    assert scrape.labels("formflow_submissions", "outcome") >= {
        "stored", "spam", "honeypot", "rate_limited", "over_limit", "origin", "captcha",
        "invalid", "too_large"}


def test_requests_are_counted_and_timed_by_route_never_by_path(client, token, owner_api, form,
                                                               public):
    before = Scrape(client)

    submit(public, form, {"name": "Ada"})
    owner_api.get(f"/api/v1/forms/{form.pk}")
    client.get("/no/such/page")
    client.post("/healthz")

    after = Scrape(client)
    requests = "formflow_http_requests_total"
    assert grew(before, after, requests, route="submit", method="POST", status="200") == 1
    assert grew(before, after, requests, route="form-detail", method="GET", status="200") == 1
    assert grew(before, after, requests, route="unmatched", method="GET", status="404") == 1
    assert grew(before, after, requests, route="health", method="POST", status="405") == 1
    duration = "formflow_http_request_duration_seconds"
    assert grew(before, after, f"{duration}_count", route="submit") == 1
    assert grew(before, after, f"{duration}_bucket", route="submit", le="+Inf") == 1
    assert grew(before, after, f"{duration}_sum", route="submit") > 0
    routes = after.labels("formflow_http_requests", "route")
    assert not any(form.slug in route or str(form.pk) in route or "/" in route
                   for route in routes)


def test_submissions_are_counted_by_outcome(client, token, public, form, settings):
    form.honeypot_field = "website"
    form.blocked_words = ["casino"]
    form.save()
    before = Scrape(client)

    submit(public, form, {"name": "Ada"})
    submit(public, form, {"name": "Bot", "website": "x"})
    submit(public, form, {"message": "casino"})
    public.post(f"/api/v1/f/{form.slug}", "{not json", content_type="application/json")
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    submit(public, form, {"message": "x" * 200})

    after = Scrape(client)
    for outcome in ("stored", "honeypot", "spam", "invalid", "too_large"):
        assert grew(before, after, "formflow_submissions_total", outcome=outcome) == 1, outcome


def test_refusals_are_counted_by_reason(client, token, public, form):
    form.allowed_origins = ["https://site.example"]
    form.rate_limit = 1
    form.save()
    before = Scrape(client)

    submit(public, form, {"name": "Eve"}, HTTP_ORIGIN="https://evil.example")
    submit(public, form, {"name": "Ada"}, HTTP_ORIGIN="https://site.example")
    submit(public, form, {"name": "Ada"}, HTTP_ORIGIN="https://site.example")
    public.post("/api/v1/f/no-such-form", {"name": "Ada"}, format="json")

    after = Scrape(client)
    counted = {outcome: grew(before, after, "formflow_submissions_total", outcome=outcome)
               for outcome in after.labels("formflow_submissions", "outcome")}
    assert {outcome: n for outcome, n in counted.items() if n} == {
        "origin": 1, "stored": 1, "rate_limited": 1}


def test_a_missing_captcha_is_counted(client, token, public, form):
    form.set_recaptcha_secret("captcha-secret")
    form.save()
    before = Scrape(client)

    submit(public, form, {"name": "Ada"})  # no token: refused before any verifier is asked

    assert grew(before, Scrape(client), "formflow_submissions_total", outcome="captcha") == 1


def test_the_monthly_limit_is_counted(client, token, public, form, user):
    user.monthly_submission_limit = 1
    user.save()
    before = Scrape(client)

    submit(public, form, {"name": "Ada"})
    submit(public, form, {"name": "Bob"})

    after = Scrape(client)
    assert grew(before, after, "formflow_submissions_total", outcome="stored") == 1
    assert grew(before, after, "formflow_submissions_total", outcome="over_limit") == 1


def test_deliveries_are_counted_delivered_retrying_or_failed_with_their_time(
        client, token, public, form, hook, receiver, settings):
    settings.DELIVERY_RETRY_DELAYS = [300]
    before = Scrape(client)

    submit(public, form)
    receiver.handler = lambda _r: Reply(500)
    submit(public, form, {"name": "Bob"})  # first attempt fails; another is due in 5 min
    [waiting] = Delivery.objects.filter(state="pending")
    Delivery.objects.filter(pk=waiting.pk).update(next_attempt_at=timezone.now())
    attempt.delivery_run(waiting.pk)  # the last attempt fails too

    after = Scrape(client)
    deliveries = "formflow_deliveries_total"
    assert grew(before, after, deliveries, kind="WEBHOOK", outcome="delivered") == 1
    assert grew(before, after, deliveries, kind="WEBHOOK", outcome="retrying") == 1
    assert grew(before, after, deliveries, kind="WEBHOOK", outcome="failed") == 1
    assert grew(before, after, "formflow_delivery_seconds_count") == 1
    assert grew(before, after, "formflow_delivery_seconds_bucket", le="+Inf") == 1


def test_a_notification_held_for_the_digest_is_held_never_failed(client, token, owner_api,
                                                                 clock):
    form_id = owner_api.post("/api/v1/forms", {"name": "Contact"}, format="json").json()["_id"]
    from forms_app.models import Form

    form = Form.objects.get(pk=form_id)
    hour = digest.hour_of(clock.current) - timedelta(hours=3)
    clock.current = hour + timedelta(minutes=10)
    before = Scrape(client)
    for number in range(22):
        submission = add_submission(form, {"name": f"Person {number}"})
        Submission.objects.filter(pk=submission.pk).update(submitted_at=hour)
        attempt.delivery_run(Delivery.objects.get(submission=submission).pk)

    after = Scrape(client)
    deliveries = "formflow_deliveries_total"
    assert grew(before, after, deliveries, kind="OWNER_EMAIL", outcome="delivered") == 20
    assert grew(before, after, deliveries, kind="OWNER_EMAIL", outcome="held") == 2
    assert grew(before, after, deliveries, kind="OWNER_EMAIL", outcome="failed") == 0
    assert grew(before, after, deliveries, kind="OWNER_EMAIL", outcome="retrying") == 0


def test_mail_the_server_refused_is_counted(client, token, owner_api, public, settings):
    form = owner_api.post("/api/v1/forms", {"name": "Contact"}, format="json").json()
    settings.EMAIL_BACKEND = "tests.operations.test_status.RefusedConnection"
    settings.DELIVERY_RETRY_DELAYS = [300]
    before = Scrape(client)

    public.post(f"/api/v1/f/{form['slug']}", {"name": "Ada"}, format="json")
    owner_api.post("/api/auth/forgot-password", {"email": "someone@example.com"},
                   format="json")  # no account: no mail, nothing counted

    after = Scrape(client)
    assert grew(before, after, "formflow_mail_failures_total") == 1
    assert grew(before, after, "formflow_deliveries_total", kind="OWNER_EMAIL",
                outcome="retrying") == 1


def test_the_outbox_gauges_are_read_from_the_database(client, token, form, hook):
    add_submission(form, {"name": "Ada"})  # its delivery waits: nothing ran it
    add_submission(form, {"name": "Bob"})
    Delivery.objects.update(next_attempt_at=timezone.now() - timedelta(minutes=5))

    scrape = Scrape(client)

    assert scrape.value("formflow_outbox_due") == 2
    assert 299 <= scrape.value("formflow_outbox_oldest_due_seconds") <= 310


def test_beat_and_worker_heartbeats_are_timestamps(client, token):
    empty = Scrape(client)
    assert empty.value("formflow_beat_last_run_timestamp_seconds") == 0
    assert empty.value("formflow_worker_last_seen_timestamp_seconds") == 0

    heartbeat.stamp()
    heartbeat.stamp_worker("celery@a")
    heartbeat.stamp_worker("celery@b")
    Heartbeat.objects.filter(name="worker:celery@a").update(
        at=timezone.now() - timedelta(minutes=10))
    scrape = Scrape(client)

    now = timezone.now().timestamp()
    assert abs(scrape.value("formflow_beat_last_run_timestamp_seconds") - now) < 5
    assert abs(scrape.value("formflow_worker_last_seen_timestamp_seconds") - now) < 5


def test_build_info_names_the_version_and_the_commit(client, token):
    import formflow

    [sample] = Scrape(client).families["formflow_build_info"].samples

    assert sample.labels == {"version": formflow.version(), "commit": formflow.commit()}
    assert sample.value == 1


def _count_in_another_process() -> None:
    from core import metrics

    metrics.submission("stored")
    metrics.submission("stored")
    metrics.request("submit", "POST", 200, 0.02)


def test_counts_of_other_processes_are_added_up(client, token):
    before = Scrape(client)
    process = multiprocessing.get_context("fork").Process(target=_count_in_another_process)
    process.start()
    process.join(10)

    after = Scrape(client)

    assert process.exitcode == 0 and os.environ["PROMETHEUS_MULTIPROC_DIR"]
    assert grew(before, after, "formflow_submissions_total", outcome="stored") == 2
    assert grew(before, after, "formflow_http_requests_total", route="submit", method="POST",
                status="200") == 1
    assert grew(before, after, "formflow_http_request_duration_seconds_count",
                route="submit") == 1


def test_each_machines_processes_count_in_files_of_their_own(client, token, monkeypatch):
    """Containers sharing one metrics volume each number their processes from 1: the file
    names carry the machine's name too, so two live processes never write one file."""
    import socket

    from django.conf import settings

    from core import metrics

    metrics.submission("stored")  # this process's file exists from its first count
    mine = metrics.process_identifier()
    assert (Path(settings.METRICS_DIR) / f"counter_{mine}.db").exists()

    monkeypatch.setattr(os, "getpid", lambda: 7)
    monkeypatch.setattr(socket, "gethostname", lambda: "web_1")
    first = metrics.process_identifier()
    monkeypatch.setattr(socket, "gethostname", lambda: "worker_1")
    assert (first, metrics.process_identifier()) == ("web-1-7", "worker-1-7")
