"""The spam filter and the spam folder (contract, "Spam protection")."""

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from integrations.models import Delivery
from integrations.services import integration_create
from submissions.models import Submission
from tests.conftest import post_html_form, submit


def usage(user) -> int:
    user.refresh_from_db()
    return user.monthly_submission_count


def folder(owner_api, form, status: str) -> dict:
    response = owner_api.get(f"/api/v1/forms/{form.pk}/submissions", {"status": status})
    assert response.status_code == 200
    return response.json()


def form_object(owner_api, form) -> dict:
    return owner_api.get(f"/api/v1/forms/{form.pk}").json()


@pytest.fixture
def blocking(owner_api, form):
    words = {"blockedWords": ["casino", "cheap pills"]}
    response = owner_api.patch(f"/api/v1/forms/{form.pk}", words, format="json")
    assert response.status_code == 200
    form.refresh_from_db()
    return form


# --- Holding ------------------------------------------------------------------------------


def test_a_blocked_word_is_held_quietly_and_explained(owner_api, public, blocking, user, hook,
                                                      receiver):
    response = submit(public, blocking, {"name": "Bot", "message": "Best CASINO bonus today"})

    assert response.status_code == 200
    assert response.json()["success"] is True  # the client cannot tell
    held = Submission.objects.get()
    assert held.status == "spam"
    assert usage(user) == 0
    assert not Delivery.objects.exists()
    assert receiver.requests == []
    row = folder(owner_api, blocking, "spam")["data"][0]
    assert row["status"] == "spam"
    assert row["spam"]["reasons"] == ["blocked_word"]
    assert "casino" in row["spam"]["details"]["blocked_word"]
    assert row["spam"]["score"] >= 0.9
    assert folder(owner_api, blocking, "inbox")["total"] == 0
    body = form_object(owner_api, blocking)
    assert (body["spamCount"], body["submissionCount"]) == (1, 0)


def test_blocked_words_match_whole_words_and_phrases_only(public, blocking):
    submit(public, blocking, {"message": "I study casinos and pills, cheaply"})
    submit(public, blocking, {"message": "Buy CHEAP   pills? No: cheap pills!"})

    statuses = list(Submission.objects.order_by("submitted_at").values_list("status", flat=True))
    assert statuses == ["inbox", "spam"]


def test_an_html_form_post_that_is_held_gets_the_normal_thank_you(public, blocking):
    response = post_html_form(public, blocking, {"message": "casino"})

    assert response.status_code in (200, 303)
    assert Submission.objects.get().status == "spam"


def test_the_same_fields_from_the_same_address_are_held_as_duplicate(owner_api, public, form):
    fields = {"name": "Ada", "message": "Hello"}
    first = submit(public, form, fields)
    second = submit(public, form, fields)
    other_address = submit(public, form, fields, REMOTE_ADDR="198.51.100.7")

    assert [first.status_code, second.status_code, other_address.status_code] == [200] * 3
    statuses = list(Submission.objects.order_by("submitted_at").values_list("status", flat=True))
    assert statuses == ["inbox", "spam", "inbox"]
    row = folder(owner_api, form, "spam")["data"][0]
    assert row["spam"]["reasons"] == ["duplicate"]


@pytest.mark.redis
def test_the_duplicate_check_rides_in_admissions_round_trip(public, form, settings,
                                                          monkeypatch):
    import redis as redis_py

    settings.NUDGE_SKIP_SECONDS = 60  # the deliveries flag, seen up once, is not asked again
    fields = {"name": "Ada", "message": "Hello"}
    # The first brings new field names, which renews the kept form's token; the second reads
    # the form afresh and keeps it (forms_app/form_cache.py).
    for n in range(2):
        submit(public, form, {"name": f"warm-up {n}", "message": "Hi"})
    commands = []
    real = redis_py.Redis.execute_command

    def counted(self, *args, **options):
        commands.append(args[0])
        return real(self, *args, **options)

    monkeypatch.setattr(redis_py.Redis, "execute_command", counted)

    submit(public, form, fields)
    first = list(commands)
    submit(public, form, fields)

    assert first == ["EVALSHA"]  # rate, quota and the fingerprint in one script
    assert commands == ["EVALSHA", "EVALSHA"]  # the duplicate reserved nothing to give back
    assert list(Submission.objects.values_list("status", flat=True).order_by("submitted_at")) == [
        "inbox", "inbox", "inbox", "spam"]
    assert usage(form.owner) == 3


def test_a_retry_after_a_failed_captcha_is_not_a_duplicate(owner_api, public, form,
                                                          monkeypatch):
    from submissions.intake import captcha

    response = owner_api.patch(f"/api/v1/forms/{form.pk}", {"recaptchaSecret": "secret"},
                               format="json")
    assert response.status_code == 200
    answers = iter([False, True])
    monkeypatch.setattr(captcha, "verify", lambda **_kw: next(answers))
    fields = {"name": "Ada", "message": "Hello", "g-recaptcha-response": "token"}

    assert submit(public, form, fields).status_code == 422
    assert submit(public, form, fields).status_code == 200

    assert Submission.objects.get().status == "inbox"


def test_an_unreadable_body_is_answered_after_the_rate_limit(public, form):
    form.rate_limit = 1
    form.save()
    submit(public, form)

    response = public.post(f"/api/v1/f/{form.slug}", "{not json", content_type="application/json")

    assert response.status_code == 429


@pytest.mark.parametrize(
    ("message", "held"),
    [
        ("See https://a.example, https://b.example and https://c.example now", True),
        ("Short: https://bit.ly/3xYz", True),
        ("Also www.tinyurl.com/abc", True),
        ("My site is https://ada.example", False),
        ("Two: https://ada.example and https://babbage.example", False),
    ],
)
def test_link_spam(owner_api, public, form, message, held):
    submit(public, form, {"name": "Ada", "message": message})

    submission = Submission.objects.get()
    assert submission.status == ("spam" if held else "inbox")
    assert (submission.spam["reasons"] == ["links"]) is held
    if not held:
        assert 0 < submission.spam["score"] < 0.5  # one or two links count, lightly


WORDS = st.text(alphabet=st.characters(whitelist_categories=("Lu", "Ll")), min_size=1,
                max_size=12)


@hypothesis_settings(max_examples=60, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.lists(WORDS, min_size=1, max_size=3).map(" ".join),
    words=st.lists(WORDS, min_size=3, max_size=40),
    link=st.one_of(st.none(), st.sampled_from(["https://ada.example/about", "www.example.org"])),
    ip=st.ip_addresses(v=4).map(str),
)
def test_an_ordinary_message_is_never_held(public, form, name, words, link, ip):
    sentence = " ".join(words) + "." + (f" More at {link}" if link else "")
    fields = {"name": name, "email": "ada@example.com", "message": sentence}

    submit(public, form, fields, REMOTE_ADDR=ip, HTTP_X_FORWARDED_FOR="")

    latest = Submission.objects.order_by("-submitted_at", "-id").first()
    assert latest.status == "inbox" or latest.spam["reasons"] == ["duplicate"]


def test_with_the_filter_off_nothing_is_held(owner_api, public, blocking, user):
    owner_api.patch(f"/api/v1/forms/{blocking.pk}", {"spamFilter": "off"}, format="json")

    submit(public, blocking, {"message": "casino"})
    submit(public, blocking, {"message": "casino"})

    assert set(Submission.objects.values_list("status", flat=True)) == {"inbox"}
    assert usage(user) == 2
    assert form_object(owner_api, blocking)["spamFilter"] == "off"


def test_a_held_submission_adds_no_field_names(public, blocking):
    submit(public, blocking, {"message": "casino", "junk_field": "x"})

    blocking.refresh_from_db()
    assert "junk_field" not in blocking.field_names


# --- The folder stays out of everything the owner receives --------------------------------


def test_held_submissions_stay_out_of_the_pull_api_and_exports(owner_api, public, blocking,
                                                               puller):
    submit(public, blocking, {"message": "hello"})
    submit(public, blocking, {"message": "casino"})
    held = Submission.objects.get(status="spam")

    pulled = puller.get("/api/v1/submissions", {"formId": str(blocking.pk)}).json()["data"]
    assert [row["fields"]["message"] for row in pulled] == ["hello"]
    assert puller.get(f"/api/v1/submissions/{held.pk}").status_code == 404
    for kind in ("csv", "json"):
        response = owner_api.get(f"/api/v1/forms/{blocking.pk}/export", {"format": kind})
        content = b"".join(response.streaming_content).decode()
        assert "hello" in content
        assert "casino" not in content


# --- The marks ----------------------------------------------------------------------------


def test_not_spam_rescues_into_the_inbox_now_counted_and_delivered(
    owner_api, public, blocking, user, hook, receiver, puller
):
    submit(public, blocking, {"name": "Ada", "message": "I love the casino scene"})
    held = Submission.objects.get()
    arrived = held.submitted_at

    response = owner_api.post(f"/api/v1/forms/{blocking.pk}/submissions/{held.pk}/not-spam")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "inbox"
    assert body["receivedAt"] < body["submittedAt"]
    held.refresh_from_db()
    assert held.received_at == arrived
    assert usage(user) == 1
    assert len(receiver.requests) == 1
    pulled = puller.get("/api/v1/submissions", {"formId": str(blocking.pk)}).json()["data"]
    assert [row["id"] for row in pulled] == [str(held.pk)]


def test_a_rescue_reaches_an_incremental_sync_started_before_it(owner_api, public, blocking,
                                                                puller):
    from core.timefmt import iso

    submit(public, blocking, {"name": "Ada", "message": "casino"})
    held = Submission.objects.get()
    # A sync's last cursor: after the arrival, before the rescue.
    since = iso(held.submitted_at + timedelta(milliseconds=1))
    pulled = puller.get("/api/v1/submissions", {"formId": str(blocking.pk), "since": since})
    assert pulled.json()["data"] == []

    owner_api.post(f"/api/v1/forms/{blocking.pk}/submissions/{held.pk}/not-spam")

    pulled = puller.get("/api/v1/submissions", {"formId": str(blocking.pk), "since": since})
    assert [row["id"] for row in pulled.json()["data"]] == [str(held.pk)]


def test_not_spam_twice_counts_and_delivers_once(owner_api, public, blocking, user, hook,
                                                 receiver):
    submit(public, blocking, {"message": "casino"})
    held = Submission.objects.get()
    url = f"/api/v1/forms/{blocking.pk}/submissions/{held.pk}/not-spam"

    assert owner_api.post(url).status_code == 200
    assert owner_api.post(url).status_code == 200

    assert usage(user) == 1
    assert len(receiver.requests) == 1


def test_spam_moves_a_submission_out_of_the_pull_api(owner_api, public, form, user, puller):
    submit(public, form, {"name": "Ada"})
    submission = Submission.objects.get()

    response = owner_api.post(f"/api/v1/forms/{form.pk}/submissions/{submission.pk}/spam")

    assert response.status_code == 200
    assert response.json()["status"] == "spam"
    assert puller.get("/api/v1/submissions", {"formId": str(form.pk)}).json()["data"] == []
    assert usage(user) == 1  # the monthly count is not given back
    assert folder(owner_api, form, "spam")["total"] == 1


def test_spam_drops_deliveries_still_waiting_and_keeps_those_made(owner_api, public, form,
                                                                  user, receiver, settings):
    from integrations.models import DeliveryState

    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    made = integration_create(owner=user, type="WEBHOOK", config={"url": f"{receiver.url}/a"})
    submit(public, form, {"name": "Ada", "message": "Hello there"})
    submission = Submission.objects.get()
    assert Delivery.objects.get(integration=made).state == DeliveryState.DELIVERED
    # A second integration whose delivery has not gone out yet.
    waiting = integration_create(owner=user, type="WEBHOOK", config={"url": f"{receiver.url}/b"})
    Delivery.objects.create(integration=waiting, submission=submission,
                            next_attempt_at=submission.submitted_at + timedelta(hours=1))

    mark(owner_api, form, submission, "spam")

    assert list(Delivery.objects.values_list("integration_id", "state")) == [
        (made.pk, DeliveryState.DELIVERED)
    ]
    assert len(receiver.requests) == 1


def test_a_rescue_after_a_mistaken_spam_mark_counts_and_delivers_nothing_twice(
    owner_api, public, form, user, receiver, settings
):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    made = integration_create(owner=user, type="WEBHOOK", config={"url": f"{receiver.url}/a"})
    submit(public, form, {"name": "Ada", "message": "Hello there"})
    submission = Submission.objects.get()
    waiting = integration_create(owner=user, type="WEBHOOK", config={"url": f"{receiver.url}/b"})
    Delivery.objects.create(integration=waiting, submission=submission,
                            next_attempt_at=submission.submitted_at + timedelta(hours=1))
    mark(owner_api, form, submission, "spam")

    body = mark(owner_api, form, submission, "not-spam")

    assert body["status"] == "inbox"
    assert usage(user) == 1  # counted on arrival, not again
    # The first integration had it; the second, whose delivery was dropped, gets it now.
    assert sorted(r.path for r in receiver.requests) == ["/a", "/b"]
    assert Delivery.objects.filter(integration=made).count() == 1


def test_a_held_submission_confirmed_then_rescued_is_counted_once(owner_api, public, blocking,
                                                                  user, hook, receiver):
    submit(public, blocking, {"name": "Ada", "message": "I love the casino scene"})
    held = Submission.objects.get()

    mark(owner_api, blocking, held, "spam")  # the owner agrees with the filter
    mark(owner_api, blocking, held, "not-spam")
    mark(owner_api, blocking, held, "spam")
    mark(owner_api, blocking, held, "not-spam")

    assert usage(user) == 1
    assert len(receiver.requests) == 1


def test_marks_on_another_owners_submission_are_404(other_api, public, form):
    submit(public, form, {"name": "Ada"})
    submission = Submission.objects.get()

    for mark in ("spam", "not-spam"):
        url = f"/api/v1/forms/{form.pk}/submissions/{submission.pk}/{mark}"
        assert other_api.post(url).status_code == 404
    assert Submission.objects.get().status == "inbox"


@pytest.mark.parametrize("submission_id", ["nope", "00000000-0000-0000-0000-000000000000"])
def test_marks_on_an_unknown_submission_are_404(owner_api, form, submission_id):
    url = f"/api/v1/forms/{form.pk}/submissions/{submission_id}/not-spam"
    assert owner_api.post(url).status_code == 404


def test_an_unknown_folder_is_a_400(owner_api, form):
    response = owner_api.get(f"/api/v1/forms/{form.pk}/submissions", {"status": "trash"})

    assert response.status_code == 400
    assert "status" in response.json()["details"]


# --- Settings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"blockedWords": [""]},
        {"blockedWords": ["a" * 101]},
        {"blockedWords": [f"w{i}" for i in range(201)]},
        {"blockedWords": [3]},
        {"blockedWords": "casino"},
        {"spamFilter": True},
        {"spamFilter": "maybe"},
    ],
)
def test_bad_spam_settings_are_a_400(owner_api, form, change):
    response = owner_api.patch(f"/api/v1/forms/{form.pk}", change, format="json")

    assert response.status_code == 400
    [name] = change
    assert any(key.split(".")[0] == name for key in response.json()["details"])


def test_blocked_words_are_tidied(owner_api, form):
    response = owner_api.patch(f"/api/v1/forms/{form.pk}",
                               {"blockedWords": ["  Casino ", "casino", "cheap   pills"]},
                               format="json")

    assert response.json()["blockedWords"] == ["Casino", "cheap pills"]


# --- The purge ----------------------------------------------------------------------------


def test_spam_is_deleted_30_days_after_it_arrived(public, blocking, clock):
    from submissions.services import spam_purge

    for n in range(3):
        submit(public, blocking, {"message": "casino", "n": str(n)})
    submit(public, blocking, {"message": "hello"})
    submit(public, blocking, {"message": "casino", "n": "recent"})
    arrived = Submission.objects.get(status="inbox").submitted_at
    # The stamps come from the database's clock: move them back, and this clock with them.
    old = [row.pk for row in Submission.objects.all() if row.fields.get("n") != "recent"]
    Submission.objects.filter(pk__in=old).update(submitted_at=arrived - timedelta(days=29))
    clock.current = arrived
    assert spam_purge() == 0

    clock.advance(days=1, seconds=1)

    assert spam_purge(batch=2) == 3
    assert sorted(Submission.objects.values_list("status", flat=True)) == ["inbox", "spam"]


def test_the_purge_runs_from_beat():
    from config.celery import app

    assert "submissions.tasks.purge" in {
        entry["task"] for entry in app.conf.beat_schedule.values()}


# --- Learning from the marks --------------------------------------------------------------

THEME = [
    "Boost your website ranking with our SEO backlinks package",
    "Cheap SEO backlinks: boost ranking for your website today",
    "Our SEO agency will boost your Google ranking with backlinks",
    "Website ranking problems? SEO backlinks boost traffic fast",
    "Guaranteed first page ranking: SEO backlinks boost your website",
]


ORDINARY = [
    "Hi! Could you send me a quote for a website redesign? Thanks, Ada",
    "I ordered the blue mug last week and it has not arrived yet.",
    "Please add me to the newsletter, I loved your article on ranking tables.",
]


def mark(owner_api, form, submission, how: str):
    url = f"/api/v1/forms/{form.pk}/submissions/{submission.pk}/{how}"
    response = owner_api.post(url)
    assert response.status_code == 200
    return response.json()


def latest() -> Submission:
    return Submission.objects.order_by("-submitted_at", "-id").first()


@pytest.fixture
def taught(owner_api, public, form):
    """A few ordinary messages in the inbox, and five on one theme, each marked spam."""
    for text in ORDINARY:
        submit(public, form, {"name": "Client", "message": text})
    for n, text in enumerate(THEME):
        submit(public, form, {"name": f"Sender {n}", "message": text})
        mark(owner_api, form, latest(), "spam")
    return form


def test_after_five_spam_marks_on_a_theme_a_new_one_is_held_as_learned(owner_api, public,
                                                                     taught, user):
    submit(public, taught, {"name": "Sam", "message": "SEO backlinks that boost ranking"})

    held = latest()
    assert held.status == "spam"
    assert held.spam["reasons"] == ["learned"]
    detail = held.spam["details"]["learned"]
    assert "marked as spam" in detail
    assert any(f'"{word}"' in detail for word in ("seo", "backlinks", "boost", "ranking"))
    assert held.spam["score"] >= 0.9
    user.refresh_from_db()
    assert user.spam_marks == 5


def test_an_ordinary_message_is_not_held_after_learning(public, taught):
    submit(public, taught, {"name": "Ada", "email": "ada@example.com",
                            "message": "Could we book a table for Friday evening? Thanks!"})
    submit(public, taught, {"name": "Ada", "message": "Your website is lovely, how do I order?"})

    assert [s.status for s in Submission.objects.order_by("-submitted_at")[:2]] == ["inbox"] * 2


def test_not_spam_marks_teach_the_other_way(owner_api, public, taught):
    for n, text in enumerate(THEME):
        submit(public, taught, {"name": f"Client {n}", "message": text + " (for real)"})
        mark(owner_api, taught, latest(), "not-spam")  # held or not, the owner says not spam

    submit(public, taught, {"name": "Sam", "message": "SEO backlinks that boost ranking"})

    assert latest().status == "inbox"


def test_learning_is_per_account(public, taught, other_user):
    from forms_app.services import form_create

    elsewhere = form_create(owner=other_user, name="Other")

    submit(public, elsewhere, {"name": "Sam", "message": "SEO backlinks that boost ranking"})

    assert latest().status == "inbox"


def test_the_same_mark_twice_teaches_once(owner_api, public, form, user):
    from submissions.models import SpamWord

    submit(public, form, {"message": "backlinks galore for everyone"})
    submission = latest()
    mark(owner_api, form, submission, "spam")
    mark(owner_api, form, submission, "spam")

    user.refresh_from_db()
    assert user.spam_marks == 1
    assert SpamWord.objects.get(owner=user, word="backlinks").spam == 1


def test_a_reversed_mark_takes_back_what_the_first_taught(owner_api, public, form, user):
    from submissions.models import SpamWord

    submit(public, form, {"message": "backlinks galore for everyone"})
    submission = latest()
    mark(owner_api, form, submission, "spam")

    mark(owner_api, form, submission, "not-spam")

    user.refresh_from_db()
    assert user.spam_marks == 1  # one marked submission
    word = SpamWord.objects.get(owner=user, word="backlinks")
    assert (word.spam, word.ham) == (0, 1)
    totals = SpamWord.objects.get(owner=user, word="#marks")
    assert (totals.spam, totals.ham) == (0, 1)


def test_a_theme_marked_by_mistake_and_taken_back_holds_nothing(owner_api, public, taught):
    for submission in Submission.objects.filter(status="spam"):
        mark(owner_api, taught, submission, "not-spam")

    submit(public, taught, {"name": "Sam", "message": "SEO backlinks that boost ranking"})

    assert latest().status == "inbox"


def test_names_and_addresses_never_count_as_learned_words():
    from submissions.learning import words

    data = [["name", "Sender Seven"], ["email", "s7@example.com"],
            ["message", "Reply to ana@example.com about the garden party"]]

    assert words(data) == ["reply", "garden", "party"]


def test_a_short_message_from_a_regular_sender_is_not_held_after_learning(owner_api, public,
                                                                          taught):
    # The theme's senders all gave a name and an address: those are in every submission.
    submit(public, taught, {"name": "Sender 1", "email": "s1@example.com",
                            "message": "Please add me to your newsletter."})

    assert latest().status == "inbox"
