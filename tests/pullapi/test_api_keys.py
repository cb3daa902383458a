import re
import zlib

import pytest
from django.core.management import CommandError, call_command

from pullapi import keys
from pullapi.models import ApiKey
from tests.conftest import create_key

API_KEYS = "/api/v1/api-keys"
KEY_PATTERN = r"ff_live_[0-9A-Za-z]{32}[0-9A-Za-z]{6}"


def test_checksum_is_crc32_in_base62():
    random_part = "A" * 32
    expected = keys.base62(zlib.crc32(random_part.encode()), 6)

    assert keys.is_well_formed(f"ff_live_{random_part}{expected}")
    assert keys.base62(0, 6) == "000000"
    assert keys.base62(61, 1) == "z"
    assert keys.base62(62, 2) == "10"


def test_generated_keys_are_well_formed_and_unique():
    generated = {keys.generate() for _ in range(50)}

    assert len(generated) == 50
    for key in generated:
        assert re.fullmatch(KEY_PATTERN, key)
        assert keys.is_well_formed(key)


def test_a_mistyped_key_fails_its_checksum():
    key = keys.generate()
    flipped = key[:10] + ("a" if key[10] != "a" else "b") + key[11:]

    assert not keys.is_well_formed(flipped)


def test_create_key_shows_it_once(owner_api, form, user):
    response = owner_api.post(API_KEYS, {"name": "Warehouse", "forms": [form.slug]}, format="json")

    assert response.status_code == 201
    body = response.json()
    key = body["key"]
    assert re.fullmatch(KEY_PATTERN, key)
    stored = ApiKey.objects.get()
    assert body == {
        "_id": str(stored.pk),
        "name": "Warehouse",
        "prefix": key[:14],
        "forms": [str(form.pk)],
        "createdAt": body["createdAt"],
        "scopes": ["read"],
        "lastUsedAt": None,
        "revokedAt": None,
        "key": key,
    }
    assert stored.key_hash == keys.digest(key)
    assert key not in repr(ApiKey.objects.values().get())
    listed = owner_api.get(API_KEYS).json()
    assert "key" not in listed[0]


def test_create_accepts_form_ids_and_slugs(owner_api, form, user):
    from forms_app.services import form_create

    second = form_create(owner=user, name="Second")

    body = owner_api.post(
        API_KEYS, {"name": "k", "forms": [str(form.pk), second.slug]}, format="json"
    ).json()

    assert sorted(body["forms"]) == sorted([str(form.pk), str(second.pk)])


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"forms": ["x"]}, "name"),
        ({"name": "k"}, "forms"),
        ({"name": "k", "forms": []}, "forms"),
        ({"name": "k", "forms": ["no-such-form"]}, "forms"),
        ({"name": "", "forms": ["x"]}, "name"),
    ],
)
def test_create_rejects_bad_input(owner_api, form, payload, field):
    response = owner_api.post(API_KEYS, payload, format="json")

    assert response.status_code == 400
    assert field in response.json()["details"]
    assert not ApiKey.objects.exists()


def test_cannot_grant_another_users_form(other_api, form):
    response = other_api.post(API_KEYS, {"name": "k", "forms": [form.slug]}, format="json")

    assert response.status_code == 400
    assert not ApiKey.objects.exists()


def test_list_shows_only_own_keys(owner_api, other_api, form, user, other_user):
    create_key(user, [form], name="mine")
    create_key(other_user, [], name="theirs")

    names = [key["name"] for key in owner_api.get(API_KEYS).json()]

    assert names == ["mine"]


def test_revoke_is_204_and_recorded(owner_api, form, user):
    create_key(user, [form])
    api_key = ApiKey.objects.get()

    response = owner_api.delete(f"{API_KEYS}/{api_key.pk}")

    assert response.status_code == 204
    assert owner_api.get(API_KEYS).json()[0]["revokedAt"] is not None


def test_revoke_other_users_key_is_404(other_api, form, user):
    create_key(user, [form])
    api_key = ApiKey.objects.get()

    assert other_api.delete(f"{API_KEYS}/{api_key.pk}").status_code == 404
    api_key.refresh_from_db()
    assert api_key.revoked_at is None


def test_key_management_refuses_api_keys_and_anonymous(api, pull_key):
    assert api.get(API_KEYS).status_code == 401
    assert api.get(API_KEYS, HTTP_AUTHORIZATION=f"Bearer {pull_key}").status_code == 401


def test_createapikey_command_prints_a_working_key(user, form, api, capsys):
    call_command(
        "createapikey", "--user", "OWNER@example.com", "--name", "cli", "--form", form.slug
    )

    # Exactly one key is printed. Searched for rather than matched whole: in a full run,
    # stray output from another test's background thread has reached capsys here.
    out = capsys.readouterr().out
    keys = re.findall(KEY_PATTERN, out)
    assert len(keys) == 1, repr(out)
    key = keys[0]
    response = api.get(
        "/api/v1/submissions", {"formId": form.slug}, HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--user", "ghost@example.com", "--name", "x", "--form", "f"], "No user"),
        (["--user", "owner@example.com", "--name", "x", "--form", "nope"], "nope"),
    ],
)
def test_createapikey_command_errors(user, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("createapikey", *args)


# --- Scopes (contract, "Event subscriptions and erasure") ----------------------------------


@pytest.mark.parametrize(("asked", "granted"), [
    (None, ["read"]),
    ([], ["read"]),
    (["read"], ["read"]),
    (["hooks"], ["read", "hooks"]),
    (["hooks", "read"], ["read", "hooks"]),
])
def test_scopes_always_include_read(owner_api, form, asked, granted):
    body = {"name": "Zapier", "forms": [str(form.pk)]}
    if asked is not None:
        body["scopes"] = asked

    response = owner_api.post(API_KEYS, body, format="json")

    assert response.status_code == 201
    assert response.json()["scopes"] == granted
    assert owner_api.get(API_KEYS).json()[0]["scopes"] == granted


@pytest.mark.parametrize("scopes", [["write"], ["read", "admin"], "hooks", [1], None,
                                    {"hooks": True}])
def test_an_unknown_scope_is_400_under_scopes(owner_api, form, scopes):
    response = owner_api.post(API_KEYS, {"name": "Z", "forms": [str(form.pk)],
                                         "scopes": scopes}, format="json")

    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert list(response.json()["details"]) == ["scopes"]
    assert not ApiKey.objects.exists()


def test_a_hooks_key_still_reads_the_pull_api(api, owner_api, form):
    plain = owner_api.post(API_KEYS, {"name": "Z", "forms": [str(form.pk)],
                                      "scopes": ["read", "hooks"]}, format="json").json()["key"]
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {plain}")

    assert api.get("/api/v1/submissions", {"formId": str(form.pk)}).status_code == 200
    assert api.get(API_KEYS).status_code == 401


def test_createapikey_takes_the_hooks_scope(user, form, capsys):
    call_command("createapikey", "--user", "owner@example.com", "--name", "zap", "--form",
                 form.slug, "--scope", "hooks")
    call_command("createapikey", "--user", "owner@example.com", "--name", "sync", "--form",
                 form.slug)

    assert dict(ApiKey.objects.values_list("name", "scopes")) == {
        "zap": "read hooks", "sync": "read"}
def test_an_operator_cannot_attach_another_owners_form_to_a_key(admin_client, user,
                                                                  other_user):
    from forms_app.services import form_create
    from pullapi.models import ApiKey
    from tests.conftest import create_key

    mine = form_create(owner=user, name="Mine")
    theirs = form_create(owner=other_user, name="Theirs")
    create_key(user, [mine])
    key = ApiKey.objects.get()
    page = f"/admin/pullapi/apikey/{key.pk}/change/"

    response = admin_client.post(page, {"name": "sync", "forms": [str(mine.pk), str(theirs.pk)]})

    assert response.status_code == 200  # the page again, with the error
    assert list(key.forms.all()) == [mine]
    assert str(theirs.pk) not in admin_client.get(page).content.decode()


def test_a_key_never_reads_another_owners_form_even_if_attached(puller, user, other_user):
    from forms_app.services import form_create
    from pullapi.models import ApiKey
    from tests.conftest import add_submission

    theirs = form_create(owner=other_user, name="Theirs")
    add_submission(theirs, {"secret": "x"})
    ApiKey.objects.get().forms.add(theirs)  # as a stale or careless write would

    for params in ({"formId": theirs.slug}, {"formId": str(theirs.pk)}):
        assert puller.get("/api/v1/submissions", params).status_code == 404
