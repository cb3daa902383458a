#!/usr/bin/env python3
"""Play Zapier's side of a REST hook trigger against a running FormFlow, over HTTP only.

    python3 scripts/zapier_journey.py BASE_URL HOOKS_KEY FORM [--slug SLUG]

What a Zap does with the "New submission" trigger, step by step:

1. post a first submission to the form's public endpoint, as a visitor would, so the sample
   has something to show;
2. read the sample: ``GET /api/v1/hooks/sample?formId=`` (the trigger's "perform list"), and
   check its newest event is that submission, in the ``submission.created`` body shape;
3. subscribe: ``POST /api/v1/hooks {url, formId, events}`` with the key, the url being a
   receiver this script runs on 127.0.0.1 (the instance must be allowed to call it:
   WEBHOOK_ALLOW_PRIVATE_NETWORKS on);
4. post another submission, receive the live ``submission.created`` event, verify its
   Standard Webhooks signature with the secret from step 3, and check it is the submission
   just posted;
5. unsubscribe: ``DELETE /api/v1/hooks/{id}``, then check the subscription is gone and that a
   later submission reaches the receiver no more.

FORM is the form's slug or _id (a hooks subscription takes either); the public endpoint needs
the slug, so with an _id give ``--slug`` too. HOOKS_KEY is an API key created with the
``hooks`` scope for that form. The instance needs a worker running to deliver the event.
Standard library only (standardwebhooks verifies too when it is installed). Exits non-zero,
naming the step, on any failure.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import queue
import secrets
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import stack  # scripts/stack.py, beside this file

EVENT_WAIT_SECONDS = 30.0
QUIET_SECONDS = 3.0


class JourneyFailed(Exception):
    pass


def say(message: str) -> None:
    print(f"zapier-journey: {message}", flush=True)


def call(base: str, method: str, path: str, *, key: str | None = None, body=None):
    """One JSON request: (status, parsed body or None, headers)."""
    try:
        status, raw, headers = stack.request(method, base + path, body, key)
    except OSError as error:
        raise JourneyFailed(f"{method} {path}: {error}") from None
    return status, (json.loads(raw) if raw else None), headers


def expect(status: int, wanted: int, what: str, body) -> None:
    if status != wanted:
        raise JourneyFailed(f"{what}: HTTP {status} (wanted {wanted}): {body}")


class Receiver:
    """A receiver on 127.0.0.1 that answers 200 and queues what it was sent."""

    def __init__(self) -> None:
        self.received: queue.Queue = queue.Queue()
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                received.put(({k.lower(): v for k, v in self.headers.items()},
                              self.rfile.read(length)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/zap/catch"

    def next(self, timeout: float):
        try:
            return self.received.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def verify(secret: str, headers: dict, body: bytes) -> None:
    """The Standard Webhooks check a receiver makes: id, timestamp and signature."""
    msg_id, stamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "")
    if not msg_id or not stamp.isdigit() or abs(time.time() - int(stamp)) > 300:
        raise JourneyFailed(f"event headers are not Standard Webhooks': {headers}")
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
    expected = "v1," + base64.b64encode(digest).decode()
    signatures = headers.get("webhook-signature", "").split()
    if not any(hmac.compare_digest(expected, signature) for signature in signatures):
        raise JourneyFailed("the event's signature does not verify")
    try:
        from standardwebhooks.webhooks import Webhook
    except ImportError:
        return
    Webhook(secret).verify(body, headers)


def submit(base: str, slug: str, fields: dict, what: str) -> str:
    """Post ``fields`` to the form's public endpoint; the stored submission's id."""
    status, answer, _ = call(base, "POST", f"/api/v1/f/{slug}", body=fields)
    expect(status, 200, what, answer)
    return answer["id"]


EVENT_KEYS = {"type", "timestamp", "data"}
DATA_KEYS = {"id", "formId", "formSlug", "formName", "submittedAt", "fields"}


def check_sample(sample, submission_id: str, slug: str, fields: dict) -> None:
    """Up to 3 ``submission.created`` bodies, newest first, the newest the one just posted
    (contract, "Event subscriptions and erasure"; ``files`` only on a form with uploads on)."""
    if not isinstance(sample, list) or not 1 <= len(sample) <= 3:
        raise JourneyFailed(f"sample: not 1 to 3 events: {sample}")
    for event in sample:
        data = event.get("data") if isinstance(event, dict) else None
        if set(event) != EVENT_KEYS or event["type"] != "submission.created" or not (
                isinstance(data, dict) and DATA_KEYS <= set(data) <= DATA_KEYS | {"files"}):
            raise JourneyFailed(f"sample: not a submission.created body: {event}")
    newest = sample[0]["data"]
    if (newest["id"], newest["formSlug"], newest["fields"]) != (submission_id, slug, fields):
        raise JourneyFailed(f"sample: the newest event is not the submission just posted: "
                            f"{sample[0]}")


def journey(base: str, key: str, form: str, slug: str) -> None:
    receiver = Receiver()
    try:
        _journey(base, key, form, slug, receiver)
    finally:
        receiver.close()


def _journey(base: str, key: str, form: str, slug: str, receiver: Receiver) -> None:
    fields = {"name": "Zapier journey", "email": "journey@example.com",
              "nonce": secrets.token_hex(6)}
    first = submit(base, slug, fields, "submit the sample's submission")
    say(f"1. posted submission {first} for the sample")

    status, sample, _ = call(base, "GET", f"/api/v1/hooks/sample?formId={form}", key=key)
    expect(status, 200, "sample", sample)
    check_sample(sample, first, slug, fields)
    say(f"2. read the sample: {len(sample)} event(s), the newest the submission just posted")

    status, hook, _ = call(base, "POST", "/api/v1/hooks", key=key, body={
        "url": receiver.url, "formId": form, "events": ["submission.created"]})
    expect(status, 201, "subscribe", hook)
    if not str(hook.get("signingSecret", "")).startswith("whsec_"):
        raise JourneyFailed(f"subscribe: no signing secret in {hook}")
    say(f"3. subscribed {hook['_id']} to {hook['events']} of form {hook['formId']}")

    fields = {**fields, "nonce": secrets.token_hex(6)}
    posted = submit(base, slug, fields, "submit")
    delivered = receiver.next(EVENT_WAIT_SECONDS)
    if delivered is None:
        raise JourneyFailed(f"no event within {EVENT_WAIT_SECONDS:.0f} s (is a worker running, "
                            "and may the instance call 127.0.0.1?)")
    headers, body = delivered
    verify(hook["signingSecret"], headers, body)
    event = json.loads(body)
    data = event.get("data", {})
    if event.get("type") != "submission.created" or data.get("id") != posted or (
            data.get("fields") != fields):
        raise JourneyFailed(f"the event is not the submission just posted: {event}")
    say(f"4. posted submission {posted}, received its live event; its signature verifies")

    # As Zapier's own examples unsubscribe: with subscribeData.id.
    status, gone, _ = call(base, "DELETE", f"/api/v1/hooks/{hook['id']}", key=key)
    expect(status, 204, "unsubscribe", gone)
    status, again, _ = call(base, "DELETE", f"/api/v1/hooks/{hook['id']}", key=key)
    expect(status, 404, "unsubscribe again (the recipes count a 404 as done)", again)
    status, listed, _ = call(base, "GET", "/api/v1/hooks", key=key)
    expect(status, 200, "list after unsubscribing", listed)
    if any(row.get("_id") == hook["_id"] for row in listed):
        raise JourneyFailed("the subscription is still listed after unsubscribing")
    submit(base, slug, {**fields, "nonce": secrets.token_hex(6)}, "submit after unsubscribing")
    if receiver.next(QUIET_SECONDS) is not None:
        raise JourneyFailed("an event arrived after unsubscribing")
    say("5. unsubscribed; nothing more arrives")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base_url", help="e.g. http://127.0.0.1:8000")
    parser.add_argument("key", help="an API key with the hooks scope for the form")
    parser.add_argument("form", help="the form's slug, or its _id with --slug")
    parser.add_argument("--slug", help="the form's slug, when FORM is its _id")
    args = parser.parse_args()
    slug = args.slug
    if slug is None:
        try:
            uuid.UUID(args.form)
        except ValueError:
            slug = args.form
        else:
            parser.error("FORM is an _id: give the form's slug with --slug")
    try:
        journey(args.base_url.rstrip("/"), args.key, args.form, slug)
    except JourneyFailed as failure:
        say(f"FAILED: {failure}")
        return 1
    say("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
