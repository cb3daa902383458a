"""The filter's ``learned`` reason: what each owner's marks taught it, kept per account.

Every mark adds the submission's words to the owner's counts (``SpamWord``): to ``spam`` for
"spam", to ``ham`` for "not spam"; a row per account holds the number of marks of each kind.
A new submission is held as ``learned`` when it clearly resembles what the owner marked as
spam: at least 3 of its words were each seen in 2 or more marks, those words make up at
least half of its words, and the naive Bayes estimate over them (Robinson's smoothing, so a
word seen once weighs little) is 0.9 or more. Common words (a stop list) never count, so an
ordinary message does not resemble spam because both say "thanks". The reason's details name
the words that weighed most.

Nothing is read while an account has no marks: the form lookup carries the owner's count.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import connection, transaction
from django.db.models import F

from accounts.models import User
from core.infra import rawsql
from submissions.intake.spam import LINK, Verdict, host_of, texts
from submissions.models import SpamWord

WORD = re.compile(r"[^\W\d_]{3,40}")
EMAIL = re.compile(r"\S+@\S+")
MIN_VALUE_WORDS = 3
TOTALS = "#marks"  # the row that counts the marks themselves; '#' is never in a word
MAX_WORDS = 200
MIN_MARKS = 2  # a word counts once it was in this many marks
MIN_WORDS = 3
MIN_SHARE = 0.5
HOLD_AT = 0.9
STRENGTH = 1.0  # Robinson's s: how much an unseen word's 0.5 weighs against the evidence
STOP_WORDS = frozenset({
    "about", "above", "after", "again", "all", "also", "and", "any", "are", "because", "been",
    "before", "being", "below", "between", "both", "but", "can", "could", "did", "does", "doing",
    "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having",
    "her", "here", "hers", "herself", "him", "himself", "his", "how", "into", "its", "itself",
    "just", "more", "most", "myself", "nor", "not", "now", "off", "once", "only", "other", "our",
    "ours", "ourselves", "out", "over", "own", "same", "she", "should", "some", "such", "than",
    "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they",
    "this", "those", "through", "too", "under", "until", "very", "was", "were", "what", "when",
    "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
    "yours", "yourself", "yourselves", "hello", "thanks", "thank", "please", "dear", "regards",
    "best", "name", "email", "message", "phone"
})


def words(data: list[list[Any]]) -> list[str]:
    """The distinct words and link hosts of the submission's running text, in a stable order,
    at most 200. Only values of 3 words or more count: names, addresses and phone numbers are
    in every submission, spam or not, and would make any short message look like spam."""
    found: dict[str, None] = {}
    for text in texts(data):
        if len(text.split()) < MIN_VALUE_WORDS:
            continue
        for word in WORD.findall(EMAIL.sub(" ", text).lower()):
            if word not in STOP_WORDS:
                found.setdefault(word, None)
        for link in LINK.findall(text):
            if host := host_of(link):
                found.setdefault(f"link:{host}"[:40], None)
    return list(found)[:MAX_WORDS]


def learn(*, owner_id, data: list[list[Any]], is_spam: bool, reverses: bool = False) -> None:
    """Count one mark: the submission's words, and the mark itself.

    ``reverses``: the owner changed their mind about a submission marked the other way, so
    that mark's counts are taken back as this one's are added; the number of marked
    submissions stays the same."""
    table = rawsql.table(SpamWord)
    rows = [TOTALS, *words(data)]
    spam, ham = (1, 0) if is_spam else (0, 1)
    if reverses:
        spam, ham = (1, -1) if is_spam else (-1, 1)
    owner = rawsql.db_id(User, owner_id)
    values = ", ".join(["(%s, %s, %s, %s)"] * len(rows))
    params = [value for word in rows for value in (owner, word, max(spam, 0), max(ham, 0))]
    with transaction.atomic(), connection.cursor() as cursor:
        # A count never goes below 0, even for counts kept from before reversals were
        # taken back.
        cursor.execute(
            f"INSERT INTO {table} (owner_id, word, spam, ham) VALUES {values} "
            f"ON CONFLICT (owner_id, word) DO UPDATE SET "
            f"spam = CASE WHEN {table}.spam + %s < 0 THEN 0 ELSE {table}.spam + %s END, "
            f"ham = CASE WHEN {table}.ham + %s < 0 THEN 0 ELSE {table}.ham + %s END",
            [*params, spam, spam, ham, ham],
        )
        if not reverses:
            User.objects.filter(pk=owner_id).update(spam_marks=F("spam_marks") + 1)


def judge(verdict: Verdict, *, owner_id, data: list[list[Any]]) -> None:
    """Add ``learned`` to ``verdict`` when the submission resembles the owner's spam."""
    mine = words(data)
    if not mine:
        return
    counts = {
        word: (spam, ham)
        for word, spam, ham in SpamWord.objects.filter(
            owner_id=owner_id, word__in=[TOTALS, *mine]
        ).values_list("word", "spam", "ham")
    }
    spam_marks, ham_marks = counts.pop(TOTALS, (0, 0))
    if not spam_marks:
        return
    odds = {word: _probability(spam, ham, spam_marks, ham_marks)
            for word, (spam, ham) in counts.items() if spam + ham >= MIN_MARKS}
    spammy = sorted((word for word, p in odds.items() if p > 0.5), key=lambda w: -odds[w])
    if len(spammy) < MIN_WORDS or len(spammy) < MIN_SHARE * len(mine):
        return
    score = _combined(sorted(odds.values(), key=lambda p: -abs(p - 0.5))[:15])
    if score >= HOLD_AT:
        shown = ", ".join(f'"{word}"' for word in spammy[:3])
        verdict.hold("learned", f"resembles what you marked as spam ({shown})", weight=score)


def _probability(spam: int, ham: int, spam_marks: int, ham_marks: int) -> float:
    in_spam = spam / spam_marks
    in_ham = ham / ham_marks if ham_marks else 0.0
    p = in_spam / (in_spam + in_ham) if in_spam + in_ham else 0.5
    seen = spam + ham
    return (STRENGTH * 0.5 + seen * p) / (STRENGTH + seen)


def _combined(probabilities: list[float]) -> float:
    spam = ham = 1.0
    for p in probabilities:
        spam *= p
        ham *= 1 - p
    return spam / (spam + ham)
