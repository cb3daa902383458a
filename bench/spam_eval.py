"""How well the spam filter sorts a labelled set of messages (bench/spam_corpus.py).

    .venv-dev/bin/python bench/spam_eval.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/formflow .venv-dev/bin/python bench/spam_eval.py

Every message is posted to a form's public endpoint, each from its own address, against a
throwaway database, twice: first on a fresh account, then on an account whose owner first
marked the TRAINING messages (5 per theme) as spam, as an owner would. Prints precision,
recall and the share of ordinary messages held, per category; exits non-zero when more than
1% of the ordinary messages are held.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

from _setup import scratch_database
from spam_corpus import ORDINARY, SPAM, TRAINING

MAX_ORDINARY_HELD = 0.01


def run(client, form, messages: dict[str, list[str]], first_address: int) -> dict[str, list]:
    """Post each message; answer, per category, whether each was held."""
    from submissions.models import Submission

    held: dict[str, list[bool]] = {}
    number = first_address
    for category, texts in messages.items():
        for text in texts:
            number += 1
            body = {"name": f"Sender {number}", "email": f"s{number}@example.com", "message": text}
            response = client.post(
                f"/api/v1/f/{form.slug}", json.dumps(body), content_type="application/json",
                REMOTE_ADDR=f"10.9.{number // 256 % 256}.{number % 256}",
            )
            assert response.status_code == 200, response.content
            latest = Submission.objects.filter(form=form).order_by("-submitted_at", "-id")[0]
            held.setdefault(category, []).append(latest.status == "spam")
    return held


def report(title: str, ordinary: dict[str, list], spam: dict[str, list]) -> float:
    held_ok = sum(sum(flags) for flags in ordinary.values())
    total_ok = sum(len(flags) for flags in ordinary.values())
    caught = sum(sum(flags) for flags in spam.values())
    total_spam = sum(len(flags) for flags in spam.values())
    precision = caught / (caught + held_ok) if caught + held_ok else 1.0
    recall = caught / total_spam
    print(f"\n{title}: {total_ok} ordinary, {total_spam} spam")
    print(f"  precision {precision:.2f}, recall {recall:.2f}, "
          f"ordinary held {held_ok} ({held_ok / total_ok:.1%})")
    for category, flags in {**ordinary, **spam}.items():
        kind = "ordinary" if category in ordinary else "spam"
        print(f"  {kind:8} {category:16} held {sum(flags):3} of {len(flags)}")
    return held_ok / total_ok


def main() -> int:
    with scratch_database():
        from django.test import Client

        from accounts.models import User
        from forms_app.services import form_create
        from submissions.models import Submission
        from submissions.services import submission_mark_spam

        client = Client()
        counts = Counter()
        shares = []
        for trained in (False, True):
            owner = User.objects.create_user(f"eval{int(trained)}@example.com", "pw-123456789",
                                             is_verified=True, monthly_submission_limit=10**6)
            form = form_create(owner=owner, name="Evaluation", rate_limit=10000)
            if trained:
                run(client, form, TRAINING, 50_000)
                for submission in Submission.objects.filter(form=form):
                    submission_mark_spam(submission=submission)
            ordinary = run(client, form, ORDINARY, 0 if not trained else 20_000)
            spam = run(client, form, SPAM, 10_000 if not trained else 30_000)
            title = "after 5 spam marks per theme" if trained else "fresh account, no marks"
            shares.append(report(title, ordinary, spam))
            counts["messages"] += sum(map(len, ORDINARY.values())) + sum(map(len, SPAM.values()))
        print(f"\n{counts['messages'] // 2} labelled messages")
        if max(shares) > MAX_ORDINARY_HELD:
            print(f"FAILED: more than {MAX_ORDINARY_HELD:.0%} of the ordinary messages held")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
