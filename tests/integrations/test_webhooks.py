import ipaddress
import json
import socket
import time
from datetime import datetime, timedelta

import pytest
from standardwebhooks.webhooks import Webhook

from integrations.clients import http, webhook
from integrations.delivery.attempt import delivery_run
from integrations.delivery.retry import delivery_sweep
from integrations.models import Delivery, DeliveryAttempt, Integration
from integrations.services import integration_create
from tests.conftest import submit
from tests.fakes import Reply

STATUS = "/api/v1/integrations/{}/status"


def headers_of(request):
    return {name.lower(): value for name, value in request.headers.items()}


def only_delivery():
    return Delivery.objects.get(submission__isnull=False)


def test_standard_webhooks_test_vector():
    signature = webhook.sign(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        b'{"test": 2432232314}',
    )

    assert signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_submission_is_delivered_and_verifies(public, form, hook, receiver):
    submit(public, form, {"name": "Ada", "plan": "pro"})

    assert len(receiver.requests) == 1
    request = receiver.requests[0]
    secret = hook.secrets["signingSecret"]
    Webhook(secret).verify(request.body, headers_of(request))  # raises if the signature is off
    event = request.json()
    submission = form.submissions.get()
    assert event["type"] == "submission.created"
    assert event["data"] == {
        "id": str(submission.pk),
        "formId": str(form.pk),
        "formSlug": form.slug,
        "formName": "Contact",
        "submittedAt": event["data"]["submittedAt"],
        "fields": {"name": "Ada", "plan": "pro"},
    }
    assert headers_of(request)["webhook-id"] == only_delivery().message_id
    assert headers_of(request)["user-agent"] == "FormFlow-Webhooks/1.0"
    assert request.path == "/hook"
    delivery = only_delivery()
    assert (delivery.state, delivery.attempts) == ("delivered", 1)
    attempt = DeliveryAttempt.objects.get()
    assert (attempt.succeeded, attempt.status_code, attempt.number) == (True, 200, 1)


def test_status_follows_the_latest_attempt(owner_api, public, form, hook, receiver):
    assert owner_api.get(STATUS.format(hook.pk)).json()["status"] == "never_run"

    receiver.handler = lambda _r: Reply(500)
    submit(public, form, {"name": "Ada", "n": "1"})
    failing = owner_api.get(STATUS.format(hook.pk)).json()
    receiver.handler = lambda _r: Reply(200)
    submit(public, form, {"name": "Ada", "n": "2"})
    healthy = owner_api.get(STATUS.format(hook.pk)).json()

    assert failing["status"] == "failing"
    assert failing["lastError"] == "HTTP 500"
    assert failing["lastRun"].endswith("Z")
    assert healthy == {
        "status": "healthy",
        "lastRun": healthy["lastRun"],
        "lastError": None,
        "failedDeliveries": 0,  # the failed attempt is being retried, not given up
    }


def test_retries_keep_the_webhook_id_and_follow_the_delays(
    public, form, hook, receiver, clock, settings
):
    settings.DELIVERY_RETRY_DELAYS = [5, 300]
    receiver.handler = lambda _r: Reply(503)
    submit(public, form)
    delivery = only_delivery()
    first_due = delivery.next_attempt_at - clock()
    assert timedelta(seconds=5) <= first_due <= timedelta(seconds=5.5)

    clock.advance(seconds=6)
    delivery_run(delivery.pk)
    delivery.refresh_from_db()
    second_due = delivery.next_attempt_at - clock()
    assert timedelta(seconds=300) <= second_due <= timedelta(seconds=330)
    assert delivery.queued_at is None  # a long wait is the sweeper's job, not the broker's

    clock.advance(seconds=331)
    assert delivery_sweep() == 1
    delivery.refresh_from_db()

    assert delivery.state == "failed"
    assert delivery.attempts == 3
    ids = {headers_of(r)["webhook-id"] for r in receiver.requests}
    assert ids == {delivery.message_id}
    assert len(receiver.requests) == 3


def test_a_retry_succeeds(public, form, hook, receiver, clock):
    answers = iter([Reply(500), Reply(204)])
    receiver.handler = lambda _r: next(answers)
    submit(public, form)

    clock.advance(seconds=6)
    delivery_run(only_delivery().pk)

    assert only_delivery().state == "delivered"
    assert Integration.objects.get().status == "healthy"


def test_receiver_retry_after_is_honoured(public, form, hook, receiver, clock):
    receiver.handler = lambda _r: Reply(429, headers={"Retry-After": "120"})

    submit(public, form)

    assert only_delivery().next_attempt_at - clock() >= timedelta(seconds=120)


def test_not_due_delivery_is_not_attempted_early(public, form, hook, receiver):
    receiver.handler = lambda _r: Reply(500)
    submit(public, form)

    assert delivery_run(only_delivery().pk) is None
    assert len(receiver.requests) == 1


def test_redirect_is_a_failure_and_never_followed(public, form, hook, receiver):
    receiver.handler = lambda _r: Reply(302, headers={"Location": "/elsewhere"})

    submit(public, form)

    assert [r.path for r in receiver.requests] == ["/hook"]
    delivery = only_delivery()
    assert delivery.state == "pending"
    assert "redirect" in delivery.last_error


def test_410_gone_disables_the_integration(public, form, hook, receiver):
    receiver.handler = lambda _r: Reply(410)

    submit(public, form)
    submit(public, form)

    hook.refresh_from_db()
    assert hook.enabled is False
    assert only_delivery().state == "failed"
    assert len(receiver.requests) == 1  # the second submission no longer goes there


def test_disabled_integration_gets_nothing(public, form, hook, receiver):
    Integration.objects.update(enabled=False)

    submit(public, form)

    assert receiver.requests == []
    assert not Delivery.objects.exists()


def test_integration_scoped_to_another_form_gets_nothing(public, form, user, receiver):
    from forms_app.services import form_create

    other = form_create(owner=user, name="Other")
    integration_create(owner=user, type="WEBHOOK", config={"url": receiver.url}, form_id=other.slug)

    submit(public, form)
    submit(public, other)

    assert len(receiver.requests) == 1
    assert receiver.requests[0].json()["data"]["formId"] == str(other.pk)


def test_test_endpoint_sends_a_sample_event(owner_api, hook, receiver):
    response = owner_api.post(f"/api/v1/integrations/{hook.pk}/test")

    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "Test event delivered."}
    event = receiver.requests[0].json()
    assert event["type"] == "integration.test"
    Webhook(hook.secrets["signingSecret"]).verify(
        receiver.requests[0].body, headers_of(receiver.requests[0])
    )
    assert owner_api.get(STATUS.format(hook.pk)).json()["status"] == "healthy"


def test_test_endpoint_reports_failure_with_200(owner_api, hook, receiver):
    receiver.handler = lambda _r: Reply(500)

    response = owner_api.post(f"/api/v1/integrations/{hook.pk}/test")

    assert response.status_code == 200
    assert response.json() == {"success": False, "message": "Test event failed: HTTP 500"}
    assert owner_api.get(STATUS.format(hook.pk)).json()["status"] == "failing"
    assert len(receiver.requests) == 1  # a test event is never retried


# --- SSRF guard -------------------------------------------------------------------------

BLOCKED = [
    "127.0.0.1",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "64:ff9b::7f00:1",
    "64:ff9b::a9fe:a9fe",
    "2002:7f00:1::",
    "2002:a9fe:a9fe::",
    "fd00:ec2::254",
]
ALLOWED = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]


@pytest.mark.parametrize("address", BLOCKED)
def test_private_and_special_addresses_are_not_public(address):
    assert not http.is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_are_public(address):
    assert http.is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "host",
    [
        "127.000.000.001",
        "0x7f000001",
        "2130706433",
        "[::ffff:169.254.169.254]",
        "100.64.0.1",
        "localhost",
        "[::1]",
        "0177.0.0.1",
    ],
)
def test_delivery_to_internal_hosts_is_refused_before_connecting(host, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False

    result = webhook.send(
        url=f"https://{host}:8443/hook",
        secret=webhook.new_signing_secret(),
        msg_id="msg_x",
        timestamp=0,
        body=b"{}",
    )

    assert result.status_code is None
    assert result.error.startswith("Blocked")


PUBLIC_ADDRESS = "93.184.215.14"


def test_a_rebinding_host_is_connected_to_at_the_vetted_address_only(settings, monkeypatch):
    """DNS answers a public address, then loopback: only the first answer is ever used."""
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    answers = iter([PUBLIC_ADDRESS, "127.0.0.1", "127.0.0.1"])
    looked_up, connected = [], []
    real_getaddrinfo, real_connect = socket.getaddrinfo, http.urllib3_connection.create_connection

    def resolver(host, port, *args, **kwargs):
        if host == "rebind.example":
            looked_up.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]
        return real_getaddrinfo(host, port, *args, **kwargs)  # an IP literal is itself

    def connect(address, *args, **kwargs):
        connected.append(address[0])
        if address[0] == PUBLIC_ADDRESS:  # this machine has no route out: as if unreachable
            raise OSError(101, "Network is unreachable")
        return real_connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    monkeypatch.setattr(http.urllib3_connection, "create_connection", connect)
    try:
        result = send_to_url(f"http://rebind.example:{port}/hook")
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever reached the loopback listener
    finally:
        listener.close()

    assert result.error == "Connection failed: NewConnectionError"
    assert looked_up == ["rebind.example"]
    assert connected == [PUBLIC_ADDRESS]


def test_every_address_of_a_host_is_vetted_before_any_connection(settings, monkeypatch):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    connected = []
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, port, *a, **k: [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", (PUBLIC_ADDRESS, port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.5", port)),
        ],
    )
    monkeypatch.setattr(
        http.urllib3_connection, "create_connection", lambda address, *a, **k: connected.append(1)
    )

    result = send_to_url("http://mixed.example/hook")

    assert result.error == "Blocked: the host resolves to an address that is not public"
    assert "10.0.0.5" not in result.error
    assert connected == []


def send_to_url(url):
    return webhook.send(
        url=url, secret=webhook.new_signing_secret(), msg_id="msg_x", timestamp=0, body=b"{}"
    )


def send_to(receiver):
    return webhook.send(
        url=f"{receiver.url}/hook",
        secret=webhook.new_signing_secret(),
        msg_id="msg_x",
        timestamp=0,
        body=b"{}",
    )


@pytest.mark.parametrize(
    "reply",
    [
        lambda: (time.sleep(0.6), Reply(200))[1],  # the headers come late
        lambda: Reply(200, body_delay=0.6),  # the headers are quick, the body is late
    ],
    ids=["slow-headers", "slow-body"],
)
def test_a_2xx_after_the_deadline_is_a_timeout(receiver, monkeypatch, reply):
    monkeypatch.setattr(http, "DEADLINE_SECONDS", 0.3)
    receiver.handler = lambda _request: reply()

    result = send_to(receiver)

    assert (result.ok, result.status_code, result.error) == (False, None, "Timed out after 0.3 s")


def test_a_huge_reply_is_read_only_as_far_as_needed(receiver):
    receiver.handler = lambda _request: Reply(200, b"x" * (5 * 1024 * 1024))

    result = send_to(receiver)

    assert result.ok
    assert len(result.body) == http.BODY_LIMIT


def test_a_reply_in_an_unknown_charset_still_counts(receiver):
    receiver.handler = lambda _request: Reply(
        200, b"ok", headers={"Content-Type": "text/plain; charset=klingon"}
    )

    assert send_to(receiver).body == "ok"


def test_refused_delivery_marks_the_integration_failing(public, form, hook, receiver, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False

    submit(public, form)

    hook.refresh_from_db()
    assert hook.status == "failing"
    assert hook.last_error.startswith("Blocked")
    assert receiver.requests == []


def test_webhook_body_is_compact_json_with_event_timestamp(public, form, hook, receiver):
    submit(public, form)

    body = receiver.requests[0].body
    assert json.loads(body)["timestamp"].endswith("Z")
    assert b", " not in body
    assert isinstance(
        datetime.fromisoformat(json.loads(body)["timestamp"].replace("Z", "+00:00")), datetime
    )


def test_an_older_attempt_finishing_last_does_not_set_the_status(hook, clock):
    from integrations.delivery.record import update_integration
    from integrations.delivery.transports import Outcome

    earlier = clock()
    clock.advance(seconds=5)
    update_integration(hook, Outcome(True, 200), clock())
    update_integration(hook, Outcome(False, 500, "HTTP 500"), earlier)

    hook.refresh_from_db()
    assert (hook.status, hook.last_error) == ("healthy", None)


def test_an_owners_test_never_learns_what_a_host_resolved_to(owner_api, form, settings,
                                                             monkeypatch):
    """Any account could otherwise map internal names through the error messages."""
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    created = owner_api.post("/api/v1/integrations", {
        "type": "WEBHOOK", "formId": str(form.pk),
        "config": {"url": "https://intranet.example/hook"}}, format="json")
    assert created.status_code == 201
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, port, *a, **k: [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.20.30.40", port))])

    tested = owner_api.post(f"/api/v1/integrations/{created.json()['_id']}/test")
    status = owner_api.get(f"/api/v1/integrations/{created.json()['_id']}/status")

    assert tested.json()["success"] is False
    assert "10.20.30.40" not in tested.content.decode()
    assert "10.20.30.40" not in status.content.decode()
    assert "not public" in tested.json()["message"]


def test_an_http_url_refused_names_the_setting_for_local_receivers(owner_api, form, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    refused = owner_api.post("/api/v1/integrations", {
        "type": "WEBHOOK", "formId": str(form.pk),
        "config": {"url": "http://127.0.0.1:8102/hook"}}, format="json")

    assert refused.status_code == 400
    assert "WEBHOOK_ALLOW_PRIVATE_NETWORKS" in refused.json()["details"]["config.url"]
