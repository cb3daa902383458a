"""The spam filter: a score from 0 to 1, and the reasons a submission is held.

A submission is held for a reason only (contract, "Spam protection"), and each reason says
what matched, so an owner can see why and tune the form:

- ``blocked_word``: a value contains one of the form's ``blockedWords`` (case-insensitive;
  a word or phrase matches whole words only, so "ass" does not match "class");
- ``duplicate``: the same fields from the same address to the same form within 10 minutes;
- ``links``: obvious link spam, 3 or more links, or a link through a URL shortener;
- ``learned``: it resembles what the owner marked as spam (submissions/learning.py).

Signals too weak to hold on their own (one or two links) still raise the score, which shows
in the dashboard. An ordinary message (a name, an address, a sentence or two, at most one
link) scores low and is never held.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from submissions.intake import fingerprints

DUPLICATE_WINDOW_SECONDS = 600
MANY_LINKS = 3
LINK = re.compile(r"(?i)\b(?:https?://|www\.)[^\s<>\"'()]+")
SHORTENERS = frozenset({
    "bit.ly", "buff.ly", "cutt.ly", "goo.gl", "is.gd", "lnkd.in", "ow.ly", "rb.gy",
    "rebrand.ly", "s.id", "shorturl.at", "t.co", "t.ly", "tiny.cc", "tinyurl.com", "v.gd",
})
# How much each signal adds to the score (combined as independent evidence).
WEIGHTS = {"blocked_word": 0.95, "duplicate": 0.9, "links": 0.9, "a_link": 0.15}


@dataclass
class Verdict:
    reasons: list[str] = field(default_factory=list)
    details: dict[str, str] = field(default_factory=dict)
    signals: list[str] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=lambda: dict(WEIGHTS))

    def hold(self, reason: str, detail: str, weight: float | None = None) -> None:
        self.reasons.append(reason)
        self.details[reason] = detail
        self.signals.append(reason)
        if weight is not None:
            self.weights[reason] = weight

    @property
    def held(self) -> bool:
        return bool(self.reasons)

    @property
    def score(self) -> float:
        clean = 1.0
        for signal in self.signals:
            clean *= 1 - self.weights[signal]
        return round(1 - clean, 2)

    def as_json(self) -> dict[str, Any]:
        return {"score": self.score, "reasons": self.reasons, "details": self.details}


def texts(data: list[list[Any]]) -> list[str]:
    """Every string among the submitted values, nested ones included."""
    found: list[str] = []
    stack = [value for _, value in data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
    return found


def judge(
    *, form_id, blocked_words: list[str], data: list[list[Any]], ip: str,
    duplicate: bool | None = None,
) -> Verdict:
    """``duplicate``: what admission's round trip found (submissions/intake/admission/), or None
    when it did not look (no Redis, or Redis away): then it is looked up here."""
    verdict = Verdict()
    values = texts(data)
    _blocked_word(verdict, blocked_words, values)
    _links(verdict, values)
    if duplicate is None:
        duplicate = not _first_time(fingerprint(form_id, data, ip))
    if duplicate:
        verdict.hold("duplicate", "the same fields from the same address within 10 minutes")
    return verdict


def _blocked_word(verdict: Verdict, blocked_words: list[str], values: list[str]) -> None:
    for word in blocked_words:
        pattern = re.compile(r"(?<!\w)" + re.escape(word.strip()) + r"(?!\w)", re.IGNORECASE)
        if word.strip() and any(pattern.search(value) for value in values):
            verdict.hold("blocked_word", f'contains the blocked word "{word.strip()}"')
            return


def _links(verdict: Verdict, values: list[str]) -> None:
    links = [link for value in values for link in LINK.findall(value)]
    shortened = sorted({host for host in map(host_of, links) if host in SHORTENERS})
    if shortened:
        verdict.hold("links", f"links through a URL shortener ({', '.join(shortened)})")
    elif len(links) >= MANY_LINKS:
        verdict.hold("links", f"{len(links)} links")
    elif links:
        verdict.signals.append("a_link")


def host_of(link: str) -> str:
    if not link.lower().startswith("http"):
        link = "http://" + link
    try:
        host = (urlsplit(link).hostname or "").lower()
    except ValueError:
        return ""
    return host.removeprefix("www.")


def fingerprint(form_id, data: list[list[Any]], ip: str) -> str:
    content = json.dumps([str(form_id), ip, data], sort_keys=True, ensure_ascii=False)
    return "formflow:seen:" + hashlib.sha256(content.encode()).hexdigest()


def _first_time(key: str) -> bool:
    """Note ``key`` for 10 minutes; False if it was noted already."""
    return fingerprints.seen.first_time(key, DUPLICATE_WINDOW_SECONDS)


def forget(form_id, data: list[list[Any]], ip: str) -> None:
    """The submission was not stored after all (the database was away, say): its retry must
    not be held as a duplicate of it."""
    forget_key(fingerprint(form_id, data, ip))


def forget_key(key: str) -> None:
    fingerprints.seen.forget(key)
