"""GET /metrics (contract, "Operations"): Prometheus text for the bearer of METRICS_TOKEN."""

import multiprocessing
import os
import re
from pathlib import Path

import pytest
from django.utils import timezone

from integrations.models import Delivery
from tests.conftest import add_submission, submit
from tests.fakes import Reply

TOKEN = "metrics-token-0123456789"


@pytest.fixture
def token(settings):
    settings.METRICS_TOKEN = TOKEN


def scrape(client, token=TOKEN):
    return client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")


def value(text: str, name: str, **labels) -> float:
    """A sample's value in the exposition, 0 when it is not there yet."""
    wanted = ",".join(f'{key}="{label}"' for key, label in labels.items())
    pattern = rf"^{re.escape(name)}{{{re.escape(wanted)}}} (\S+)$" if labels else \
        rf"^{re.escape(name)} (\S+)$"
    match = re.search(pattern, text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


def test_without_metrics_token_it_is_a_404(client, db, settings):
    settings.METRICS_TOKEN = None

    response = scrape(client)

    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


def test_a_wrong_or_missing_token_is_a_404(client, token):
    assert scrape(client, "wrong").status_code == 404
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION=TOKEN).status_code == 404


def test_the_token_gets_prometheus_text(client, token):
    response = scrape(client)

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    text = response.content.decode()
    for name in ("formflow_submissions_total", "formflow_deliveries_total",
                 "formflow_delivery_seconds", "formflow_outbox_due"):
        assert f"# TYPE {name.removesuffix('_total')}" in text
    assert "# TYPE formflow_delivery_seconds histogram" in text


def test_submissions_are_counted_by_outcome(client, token, public, form):
    before = scrape(client).content.decode()
    form.honeypot_field = "website"
    form.blocked_words = ["casino"]
    form.save()

    submit(public, form, {"name": "Ada"})
    submit(public, form, {"name": "Bot", "website": "x"})
    submit(public, form, {"message": "casino"})
    public.post(f"/api/v1/f/{form.slug}", "{not json", content_type="application/json")

    after = scrape(client).content.decode()
    for outcome in ("inbox", "honeypot", "spam", "rejected"):
        grew = (value(after, "formflow_submissions_total", outcome=outcome)
                - value(before, "formflow_submissions_total", outcome=outcome))
        assert grew == 1, outcome


def test_deliveries_are_counted_by_kind_and_outcome_with_their_time(client, token, public,
                                                                    form, hook, receiver,
                                                                    settings):
    settings.DELIVERY_RETRY_DELAYS = []
    before = scrape(client).content.decode()

    submit(public, form)
    receiver.handler = lambda _r: Reply(500)
    submit(public, form, {"name": "Bob"})

    after = scrape(client).content.decode()

    def grew(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("formflow_deliveries_total", kind="WEBHOOK", outcome="delivered") == 1
    assert grew("formflow_deliveries_total", kind="WEBHOOK", outcome="failed") == 1
    assert grew("formflow_delivery_seconds_count") == 1
    assert grew("formflow_delivery_seconds_bucket", le="+Inf") == 1


def test_the_outbox_due_gauge_is_read_from_the_database(client, token, form, hook):
    add_submission(form, {"name": "Ada"})  # its delivery waits: nothing ran it
    add_submission(form, {"name": "Bob"})
    Delivery.objects.update(next_attempt_at=timezone.now())

    text = scrape(client).content.decode()

    assert value(text, "formflow_outbox_due") == 2


def _count_in_another_process() -> None:
    from core import metrics

    metrics.submission("inbox")
    metrics.submission("inbox")


def test_counts_of_other_processes_are_added_up(client, token):
    before = value(scrape(client).content.decode(), "formflow_submissions_total",
                   outcome="inbox")
    process = multiprocessing.get_context("fork").Process(target=_count_in_another_process)
    process.start()
    process.join(10)

    after = value(scrape(client).content.decode(), "formflow_submissions_total",
                  outcome="inbox")

    assert process.exitcode == 0 and os.environ["PROMETHEUS_MULTIPROC_DIR"]
    assert after - before == 2


def test_each_machines_processes_count_in_files_of_their_own(client, token, monkeypatch):
    """Containers sharing one metrics volume each number their processes from 1: the file
    names carry the machine's name too, so two live processes never write one file."""
    import socket

    from django.conf import settings

    from core import metrics

    metrics.submission("inbox")  # this process's file exists from its first count
    mine = metrics.process_identifier()
    assert (Path(settings.METRICS_DIR) / f"counter_{mine}.db").exists()

    monkeypatch.setattr(os, "getpid", lambda: 7)
    monkeypatch.setattr(socket, "gethostname", lambda: "web_1")
    first = metrics.process_identifier()
    monkeypatch.setattr(socket, "gethostname", lambda: "worker_1")
    assert (first, metrics.process_identifier()) == ("web-1-7", "worker-1-7")
