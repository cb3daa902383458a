"""Erasure by address (contract, "Event subscriptions and erasure"; GDPR article 17): every
submission of the account's forms whose values hold an address is deleted, as the owner
deleting it would (its deliveries go with it, and subscribers hear ``submission.deleted``),
and a receipt is kept that holds the address only as its SHA-256 and its last 4 characters.

Candidates come from the search index (submissions/search/), which finds the address as text
in any value, in either folder, in any case; each is then checked in Python, so that an
address inside a longer one (``ada@example.com`` in ``linda@example.com``) does not count.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from accounts.models import User
from audit.services import Target, record
from core.errors import invalid
from core.text import email_address_error, mask
from forms_app import access
from forms_app.models import Form
from submissions import services
from submissions.models import Erasure, Submission
from submissions.search import MAX_TEXT, Search
from teams.roles import Role

BATCH = 500


def address_of(value: Any) -> str:
    """The address to erase, lower-cased; 400 with ``details.email`` for anything else."""
    problem = email_address_error(value, display_name_allowed=False)
    if problem:
        raise invalid({"email": problem})
    return str(value).strip().lower()


def _pattern(address: str) -> re.Pattern[str]:
    # Not part of a longer address: no address character just before it, and none after it
    # but a sentence's full stop.
    return re.compile(rf"(?<![\w.+\-]){re.escape(address)}(?![\w\-]|\.\w)", re.IGNORECASE)


def _texts(value: Any) -> Iterator[str]:
    """Every string in a submitted value (a list for a repeated field, or nested JSON)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)


def matches(*, owner: User, address: str) -> dict:
    """The submissions that hold ``address``, of the forms where the caller may erase (their
    own, and their teams' where they are editor or above): their ids by form id."""
    pattern = _pattern(address)
    forms = access.reachable(owner, Role.EDITOR).values("pk")
    rows = Search(text=address[:MAX_TEXT]).applied(
        Submission.objects.filter(form__in=forms)
    ).values_list("pk", "form_id", "data")
    found: dict = defaultdict(list)
    for pk, form_id, data in rows.iterator(chunk_size=BATCH):
        values = [pair[1] for pair in data if isinstance(pair, list) and len(pair) == 2]
        if any(pattern.search(text) for text in _texts(values)):
            found[form_id].append(pk)
    return found


def erasure_preview(*, owner: User, email: Any) -> dict[str, Any]:
    found = matches(owner=owner, address=address_of(email))
    forms = Form.objects.filter(pk__in=list(found)).order_by("-created_at")
    return {"submissions": sum(len(ids) for ids in found.values()),
            "forms": [str(pk) for pk in forms.values_list("pk", flat=True)]}


@transaction.atomic
def erasure_create(*, owner: User, email: Any, actor: User | None = None) -> Erasure:
    """Erase, in one transaction: the receipt counts exactly what went. The log names the
    receipt and its masked address, never the address."""
    address = address_of(email)
    erased = 0
    by_team: defaultdict[Any, int] = defaultdict(int)
    for form_id, ids in sorted(matches(owner=owner, address=address).items()):
        for start in range(0, len(ids), BATCH):
            erased += services.submissions_erase(form_id=form_id, ids=ids[start:start + BATCH])
        by_team[_team_of(form_id)] += len(ids)
    receipt = Erasure.objects.create(
        owner=owner,
        email_hash=hashlib.sha256(address.encode()).hexdigest(),
        email_hint=mask(address),
        submissions=erased,
    )
    record(owner_id=owner.pk, actor=actor, action="erasure.created",
           target=Target("erasure", receipt.pk, receipt.email_hint),
           details={"submissions": erased})
    # What went from a team's forms is in that team's log too, counted for it alone.
    for team_id, count in by_team.items():
        if team_id is not None:
            record(owner_id=owner.pk, actor=actor, action="erasure.created", team_id=team_id,
                   target=Target("erasure", receipt.pk, receipt.email_hint),
                   details={"submissions": count})
    return receipt


def _team_of(form_id: Any) -> Any:
    return Form.objects.filter(pk=form_id).values_list("team_id", flat=True).first()


def erasures_of(owner: User) -> QuerySet[Erasure]:
    return Erasure.objects.filter(owner=owner).order_by("-created_at")
