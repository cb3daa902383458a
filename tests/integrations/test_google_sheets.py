import time
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core import mail

from integrations.clients.google import Tokens
from integrations.models import Delivery, DeliveryAttempt, Integration
from tests.conftest import submit
from tests.fakes import Trickle
from tests.integrations.fake_google import SCOPE, FakeGoogle

LOGIN = "/api/auth/google/login"
CALLBACK = "/api/auth/google/callback"


@pytest.fixture
def google(settings, monkeypatch):
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")  # the fake speaks plain http
    with FakeGoogle() as fake:
        settings.GOOGLE_OAUTH_CLIENT_ID = "client-123"
        settings.GOOGLE_OAUTH_CLIENT_SECRET = "client-secret"
        settings.GOOGLE_OAUTH_AUTH_URI = f"{fake.url}/auth"
        settings.GOOGLE_OAUTH_TOKEN_URI = f"{fake.url}/token"
        settings.GOOGLE_SHEETS_API_URL = f"{fake.url}/"
        yield fake


def start(client, google, **params):
    response = client.get(LOGIN, params)
    assert response.status_code == 302, response.content
    query = parse_qs(urlsplit(response["Location"]).query)
    google.state.code_challenge = query["code_challenge"][0]
    return response, query


@pytest.fixture
def connected(owner_api, google, form):
    _, query = start(owner_api, google, formId=form.slug)
    response = owner_api.get(CALLBACK, {"state": query["state"][0], "code": "good-code"})
    assert response.status_code == 302, response.content
    return Integration.objects.get(type="GOOGLE_SHEETS")


def test_login_without_client_id_is_a_clear_error(owner_api, settings):
    settings.GOOGLE_OAUTH_CLIENT_ID = None

    response = owner_api.get(LOGIN)

    assert response.status_code == 503
    assert response.json()["error"] == "google_not_configured"


def test_login_needs_dashboard_auth(api, google):
    assert api.get(LOGIN).status_code == 401


def test_login_redirects_to_consent_with_spreadsheet_scope_only(owner_api, google):
    response, query = start(owner_api, google)

    assert response["Location"].startswith(f"{google.url}/auth?")
    assert query["scope"] == [SCOPE]
    assert query["access_type"] == ["offline"]
    assert query["prompt"] == ["consent"]
    assert query["response_type"] == ["code"]
    assert query["client_id"] == ["client-123"]
    assert query["redirect_uri"] == ["http://localhost:8000/api/auth/google/callback"]
    assert query["code_challenge_method"] == ["S256"]
    assert query["state"][0]


def test_callback_stores_tokens_encrypted_and_creates_the_sheet(connected, google, form):
    assert connected.form_id == form.pk
    assert connected.config == {
        "spreadsheetId": "sheet-1",
        "spreadsheetUrl": "https://sheets/sheet-1",
        "columns": ["submittedAt", "id"],
        "headerWritten": 2,
    }
    assert connected.secrets["refreshToken"] == "rt-1"
    assert "rt-1" not in connected.secrets_encrypted
    assert google.state.headers["sheet-1"] == ["submittedAt", "id"]


def test_callback_lands_on_the_integrations_page(owner_api, google):
    _, query = start(owner_api, google)

    response = owner_api.get(CALLBACK, {"state": query["state"][0], "code": "good-code"})

    integration = Integration.objects.get()
    assert response["Location"] == f"/dashboard/integrations?connected={integration.pk}"


def test_callback_without_the_pkce_verifier_fails(owner_api, google):
    _, query = start(owner_api, google)
    google.state.code_challenge = "something-else"

    response = owner_api.get(CALLBACK, {"state": query["state"][0], "code": "good-code"})

    assert response.status_code == 302
    assert "error=google_failed" in response["Location"]
    assert not Integration.objects.filter(type="GOOGLE_SHEETS").exists()


def test_callback_with_forged_state_lands_with_an_error(owner_api, google):
    response = owner_api.get(CALLBACK, {"state": "forged", "code": "good-code"})

    assert response.status_code == 302
    assert response["Location"] == "/dashboard/integrations?error=invalid_state"
    assert not Integration.objects.filter(type="GOOGLE_SHEETS").exists()


def test_expired_state_lands_with_an_error(owner_api, google, monkeypatch):
    import time

    _, query = start(owner_api, google)
    later = time.time() + 601
    monkeypatch.setattr(time, "time", lambda: later)

    response = owner_api.get(CALLBACK, {"state": query["state"][0], "code": "good-code"})

    assert response["Location"] == "/dashboard/integrations?error=invalid_state"
    assert not Integration.objects.filter(type="GOOGLE_SHEETS").exists()


@pytest.mark.parametrize("who", ["other", "nobody"])
def test_callback_for_another_or_no_account_creates_nothing(owner_api, other_api, google, who):
    from tests.conftest import CommitClient

    _, query = start(owner_api, google)
    client = other_api if who == "other" else CommitClient()

    response = client.get(CALLBACK, {"state": query["state"][0], "code": "good-code"})

    assert response["Location"] == "/dashboard/integrations?error=wrong_account"
    assert not Integration.objects.filter(type="GOOGLE_SHEETS").exists()


def test_state_is_single_use(owner_api, google):
    _, query = start(owner_api, google)
    owner_api.get(CALLBACK, {"state": query["state"][0], "code": "good-code"})

    again = owner_api.get(CALLBACK, {"state": query["state"][0], "code": "good-code"})

    assert again["Location"] == "/dashboard/integrations?error=invalid_state"
    assert Integration.objects.count() == 1


def test_denied_consent_lands_with_an_error(owner_api, google):
    _, query = start(owner_api, google)

    response = owner_api.get(CALLBACK, {"state": query["state"][0], "error": "access_denied"})

    assert response["Location"] == "/dashboard/integrations?error=access_denied"


def test_sheets_cannot_be_created_through_post(owner_api):
    response = owner_api.post(
        "/api/v1/integrations", {"type": "GOOGLE_SHEETS", "config": {}}, format="json"
    )

    assert response.status_code == 400


def test_file_links_have_a_column_of_their_own_whatever_the_fields_are_named(
    public, form, connected, google, settings, tmp_path
):
    """The links column is found by its position: a field named files (or id) that arrives
    later gets a column under its own name, and the links column is renamed files_1."""
    from config.storage import uploads_storage
    from forms_app.services import form_update
    from tests.files.helpers import PDF, post, upload

    settings.STORAGES = {**settings.STORAGES,
                         "uploads": uploads_storage(f"file://{tmp_path}", tmp_path)}
    form_update(form=form, file_uploads={"maxBytes": 1000, "maxFiles": 1,
                                         "types": ["application/pdf"]})
    post(public, form, {"name": "Ada", "cv": upload("cv.pdf", PDF)})
    assert google.state.headers["sheet-1"] == ["submittedAt", "id", "name", "cv", "files"]

    post(public, form, {"files": "my own value", "id": "A-7", "cv": upload("cv.pdf", PDF)})

    assert google.state.headers["sheet-1"] == [
        "submittedAt", "id", "name", "cv", "files_1", "files", "id"]
    first, second = google.state.rows["sheet-1"]
    assert first[4].startswith("http://localhost:8000/api/v1/files/") and len(first) == 5
    assert second[2:] == ["", f"[File: cv.pdf, {len(PDF)} bytes]", second[4], "my own value",
                          "A-7"]
    assert second[4].startswith("http://localhost:8000/api/v1/files/")
    connected.refresh_from_db()
    assert connected.config["filesColumn"] == 4


def test_each_submission_appends_one_raw_row_and_new_fields_add_columns(
    public, form, connected, google
):
    submit(public, form, {"name": "Ada", "formula": "=1+1"})
    submit(public, form, {"name": "Grace", "company": "Navy"})

    rows = google.state.rows["sheet-1"]
    first, second = form.submissions.order_by("submitted_at")
    assert google.state.headers["sheet-1"] == ["submittedAt", "id", "name", "formula", "company"]
    assert rows[0][1:] == [str(first.pk), "Ada", "=1+1"]
    assert rows[1][1:] == [str(second.pk), "Grace", "", "Navy"]
    assert rows[0][0].endswith("Z")
    assert set(google.state.value_options) == {"RAW"}
    connected.refresh_from_db()
    assert connected.status == "healthy"


def expire(integration):
    past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    integration.set_secrets({**integration.secrets, "expiry": past})
    integration.save()


def test_expired_token_is_refreshed_and_stored(public, form, connected, google):
    expire(connected)

    submit(public, form)

    connected.refresh_from_db()
    assert len(google.state.rows["sheet-1"]) == 1
    assert connected.secrets["token"] == "at-2"
    assert connected.secrets["refreshToken"] == "rt-1"
    assert Tokens.from_dict(connected.secrets).expiry > datetime.now(UTC).isoformat()


def test_revoked_grant_is_failing_at_once(public, form, connected, google):
    expire(connected)
    google.state.valid_refresh_tokens.clear()

    submit(public, form)

    connected.refresh_from_db()
    assert connected.status == "failing"
    assert "revoked" in connected.last_error
    assert Delivery.objects.get().state == "failed"
    assert google.state.rows["sheet-1"] == []
    # Nothing more can pass until the owner connects again: it is off, and they are told.
    assert connected.enabled is False
    [alert] = [m for m in mail.outbox if "Google Sheets integration" in m.subject]
    assert "turned off" in alert.body


def test_a_failed_header_write_is_made_again_by_the_next_delivery(public, form, connected, google):
    google.state.failing_header_writes = 1
    submit(public, form, {"phone": "1"})  # the header write fails; the row waits for a retry
    assert google.state.headers["sheet-1"] == ["submittedAt", "id"]

    submit(public, form, {"phone": "2"})  # brings no new name, yet the header is still short

    connected.refresh_from_db()
    assert google.state.headers["sheet-1"] == ["submittedAt", "id", "phone"]
    assert [row[2] for row in google.state.rows["sheet-1"]] == ["2"]
    assert (connected.config["columns"], connected.config["headerWritten"]) == (
        ["submittedAt", "id", "phone"],
        3,
    )


@pytest.fixture
def quiet_broker(settings):
    """Deliveries are recorded and queued but not run, so a test can run them itself."""
    from tests.integrations.conftest import reset_broker_connections

    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = "memory://"
    reset_broker_connections()
    yield
    reset_broker_connections()


@pytest.mark.django_db(transaction=True)
def test_two_deliveries_bringing_new_fields_at_once_each_get_a_column(
    form, connected, google, quiet_broker
):
    from django.db import connection

    from integrations.delivery.attempt import delivery_run
    from tests.conftest import add_submission

    first = add_submission(form, {"phone": "555"})
    second = add_submission(form, {"city": "Oslo"})
    first_delivery, second_delivery = (
        Delivery.objects.get(submission=submission) for submission in (first, second)
    )

    def second_runs_meanwhile():
        # In the fake's thread, while the first delivery's header write is in flight.
        try:
            delivery_run(second_delivery.pk)
        finally:
            connection.close()

    google.state.before_header_write = second_runs_meanwhile
    delivery_run(first_delivery.pk)

    connected.refresh_from_db()
    header = ["submittedAt", "id", "phone", "city"]
    assert google.state.headers["sheet-1"] == header
    assert connected.config["columns"] == header
    rows = {row[1]: row[2:] for row in google.state.rows["sheet-1"]}
    assert rows == {str(first.pk): ["555"], str(second.pk): ["", "Oslo"]}
    assert set(Delivery.objects.values_list("state", flat=True)) == {"delivered"}


@pytest.mark.parametrize("form_id", ["a\x00b", "no-such-form"])
def test_starting_for_a_form_that_is_not_yours_is_a_404(owner_api, google, form_id):
    response = owner_api.get(LOGIN, {"formId": form_id})

    assert response.status_code == 404
    assert response.json()["error"] == "form_not_found"


def test_a_trickling_sheets_api_cannot_stretch_an_attempt(public, form, connected, google,
                                                          settings, monkeypatch):
    """Google answering a byte every 1.5 s (per-read timeouts never trip) ends the attempt at
    its deadline, a transient failure, so the row is appended once, by a later attempt."""
    from integrations.clients import google as client

    monkeypatch.setattr(client, "ATTEMPT_SECONDS", 2)
    trickle = Trickle()
    settings.GOOGLE_SHEETS_API_URL = f"http://127.0.0.1:{trickle.server_address[1]}/"
    began = time.monotonic()
    try:
        submit(public, form, {"name": "Ada"})
    finally:
        trickle.shutdown()
        trickle.server_close()

    assert time.monotonic() - began < 4
    delivery = Delivery.objects.get(integration=connected)
    assert delivery.state == "pending" and delivery.attempts == 1
    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    assert attempt.error == "Sheets API unreachable: Timed out after 2 s"


def test_a_trickling_token_refresh_ends_by_the_same_deadline(connected, google, settings):
    from integrations.clients import google as client

    trickle = Trickle()
    settings.GOOGLE_OAUTH_TOKEN_URI = f"http://127.0.0.1:{trickle.server_address[1]}/token"
    expire(connected)
    creds = client.credentials(Tokens.from_dict(Integration.objects.get().secrets))
    began = time.monotonic()
    try:
        with pytest.raises(client.GoogleError) as failed:
            client.Sheets(creds, seconds=1.5).refresh_if_expired()
    finally:
        trickle.shutdown()
        trickle.server_close()

    assert time.monotonic() - began < 2.5
    assert not failed.value.permanent


def test_a_role_lost_while_at_googles_connects_nothing(db, google):
    """The form is asked for again on the way back: a sheet meant for one form must not
    become one of every form when the role on it went meanwhile."""
    from forms_app.services import form_create
    from teams.models import Membership
    from tests.teams.helpers import crew

    team = crew()
    form = form_create(owner=team.users["owner"], name="Agency contact", team=team.team)
    editor = team.api("editor")
    _, query = start(editor, google, formId=str(form.pk))
    Membership.objects.filter(user=team.users["editor"]).update(role="viewer")

    response = editor.get(CALLBACK, {"state": query["state"][0], "code": "good-code"})

    assert response["Location"] == "/dashboard/integrations?error=form_not_found"
    assert not Integration.objects.filter(type="GOOGLE_SHEETS").exists()
