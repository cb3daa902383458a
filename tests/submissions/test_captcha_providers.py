"""reCAPTCHA, hCaptcha and Turnstile (contract, "Spam protection"): each verified at its own
address with its own token field, which is never stored."""

from urllib.parse import parse_qs

import pytest

from submissions.models import Submission
from tests.conftest import submit
from tests.fakes import FakeServer, Reply

PROVIDERS = {
    "recaptcha": ("g-recaptcha-response", "RECAPTCHA_VERIFY_URL"),
    "hcaptcha": ("h-captcha-response", "HCAPTCHA_VERIFY_URL"),
    "turnstile": ("cf-turnstile-response", "TURNSTILE_VERIFY_URL"),
}


@pytest.fixture
def verifiers(settings):
    """One fake siteverify per provider; each accepts only its own token and the secret."""
    servers = {}
    for provider, (_, url_setting) in PROVIDERS.items():
        def answer(request, provider=provider):
            sent = {key: values[0] for key, values in parse_qs(request.body.decode()).items()}
            ok = sent == {"secret": "server-secret", "response": f"{provider}-token",
                          "remoteip": "127.0.0.1"}
            return Reply(body={"success": ok})

        server = FakeServer(answer).__enter__()
        setattr(settings, url_setting, f"{server.url}/siteverify")
        servers[provider] = server
    yield servers
    for server in servers.values():
        server.__exit__(None, None, None)


def set_provider(owner_api, form, provider: str) -> dict:
    response = owner_api.patch(f"/api/v1/forms/{form.pk}", {
        "captchaProvider": provider, "recaptchaSecret": "server-secret"}, format="json")
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_each_provider_is_verified_with_its_own_field_and_address(
    owner_api, public, form, verifiers, provider
):
    field = PROVIDERS[provider][0]
    assert set_provider(owner_api, form, provider)["captchaProvider"] == provider

    response = submit(public, form, {"name": "Ada", field: f"{provider}-token"})

    assert response.status_code == 200
    assert [len(server.requests) for name, server in sorted(verifiers.items())] == [
        int(name == provider) for name in sorted(verifiers)]
    assert Submission.objects.get().fields == {"name": "Ada"}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_another_providers_field_does_not_pass(owner_api, public, form, verifiers, provider):
    set_provider(owner_api, form, provider)
    others = {field: f"{name}-token" for name, (field, _) in PROVIDERS.items() if name != provider}

    response = submit(public, form, {"name": "Ada", **others})

    assert response.status_code == 422
    assert response.json()["error"] == "captcha_failed"
    assert not Submission.objects.exists()


def test_no_token_field_is_stored_while_captcha_is_off(public, form):
    fields = {"name": "Ada", **{field: "x" for field, _ in PROVIDERS.values()}}

    assert submit(public, form, fields).status_code == 200

    assert Submission.objects.get().fields == {"name": "Ada"}


def test_the_provider_defaults_to_recaptcha(owner_api):
    created = owner_api.post("/api/v1/forms", {"name": "Contact"}, format="json").json()

    assert created["captchaProvider"] == "recaptcha"


@pytest.mark.parametrize("value", ["friendlycaptcha", "", None, 1, ["hcaptcha"]])
def test_an_unknown_provider_is_a_400(owner_api, form, value):
    response = owner_api.patch(f"/api/v1/forms/{form.pk}", {"captchaProvider": value},
                               format="json")

    assert response.status_code == 400
    assert "captchaProvider" in response.json()["details"]
    form.refresh_from_db()
    assert form.captcha_provider == "recaptcha"
