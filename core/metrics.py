"""The service's Prometheus metrics, counted where things happen.

Web and worker processes are many (gunicorn's, Celery's), so every process counts in a file of
its own under PROMETHEUS_MULTIPROC_DIR (settings: METRICS_DIR) and a scrape adds the files up
(prometheus-client's multiprocess mode). Counting is a write to memory-mapped file: the
submission path pays microseconds, and no database or Redis round trip. What the database
knows at any moment (the outbox's backlog) is read at scrape time instead
(operations/metrics.py).
"""

from __future__ import annotations

import os
import re
import socket

from prometheus_client import Counter, Histogram, values


def process_identifier() -> str:
    """The machine's name and the process id, as each process's file name: containers of one
    compose project share the folder (one volume) and each numbers its processes from 1, so a
    pid alone would have two live processes write one file. No underscore: the collector
    splits file names on it."""
    host = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname()) or "host"
    return f"{host}-{os.getpid()}"


# Chosen before the first metric is made (prometheus-client reads it then); only in
# multiprocess mode, which settings switch on by setting PROMETHEUS_MULTIPROC_DIR.
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    values.ValueClass = values.MultiProcessValue(process_identifier)

# The public endpoint's outcomes (contract, "Operations"): each request to a form is one.
SUBMISSION_OUTCOMES = ("stored", "spam", "honeypot", "rate_limited", "over_limit", "origin",
                       "captcha", "invalid", "too_large", "unavailable")
# A delivery attempt as recorded: sent; failed with another attempt to come; held for the
# owner's hourly digest (on time, nothing wrong); failed for good.
DELIVERY_OUTCOMES = ("delivered", "retrying", "held", "failed")

submissions = Counter(
    "formflow_submissions",
    "Public submissions by outcome: stored (inbox), spam (held in the spam folder), honeypot "
    "(dropped quietly), rate_limited, over_limit (the monthly limit), origin (not an allowed "
    "origin), captcha, invalid (a bad body or field), too_large, unavailable (a 503: the "
    "database or the storage was away)",
    ["outcome"],
)
deliveries = Counter(
    "formflow_deliveries",
    "Delivery attempts by integration kind and outcome: delivered, retrying (another attempt "
    "is due), held (waiting for the owner's hourly digest), failed (for good)",
    ["kind", "outcome"],
)
delivery_seconds = Histogram(
    "formflow_delivery_seconds",
    "From a submission to its delivery, for each delivered submission event",
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400),
)
http_requests = Counter(
    "formflow_http_requests",
    "HTTP requests answered, by URL pattern name (never a raw path), method and status",
    ["route", "method", "status"],
)
http_request_seconds = Histogram(
    "formflow_http_request_duration_seconds",
    "Time to answer an HTTP request (until its response starts), by URL pattern name",
    ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
mail_failures = Counter(
    "formflow_mail_failures",
    "Account and owner mail the mail server refused or could not be reached for",
)


# Bound once: the submission path pays only the increment (a few microseconds), and every
# outcome is in the scrape from the start, at 0.
_SUBMISSION_OUTCOMES = {outcome: submissions.labels(outcome) for outcome in SUBMISSION_OUTCOMES}


def submission(outcome: str) -> None:
    _SUBMISSION_OUTCOMES[outcome].inc()


def delivery(kind: str, outcome: str) -> None:
    deliveries.labels(kind, outcome).inc()


def request(route: str, method: str, status: int, seconds: float) -> None:
    http_requests.labels(route, method, str(status)).inc()
    http_request_seconds.labels(route).observe(seconds)
