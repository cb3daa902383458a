"""What other apps do when a submission changes: a registry submissions calls and they fill.

Submissions names no app that listens. Integrations registers its receiver at start
(integrations/apps.py), and from then on an accepted submission gets its deliveries, a spam
mark drops them, a deletion is announced downstream, without submissions importing them.

On PostgreSQL the store is one statement (submissions/intake/store/pg.py): a receiver gives
its part of that statement as SQL, a data-modifying statement answering ids, so listening
costs no round trip; it is told those ids once the statement has committed. Everywhere else a
receiver writes inside the submission's own transaction.
"""

from __future__ import annotations

from typing import Any, Protocol

from forms_app.models import Form
from submissions.models import Submission


class Receiver(Protocol):
    def accepted_sql(self, submission_id: Any, owner_id: Any, form_id: Any, *,
                     only_if: str) -> tuple[str, list]:
        """An ``INSERT ... RETURNING id`` (SQL and parameters) for the store's one statement,
        writing only if ``only_if`` (SQL without parameters) holds. ``owner_id``: whose
        account-wide integrations receive it (Form.account_wide_owner_id), or None."""

    def accepted_committed(self, ids: list) -> None:
        """After the one statement committed, with the ids its part answered."""

    def accepted(self, submission: Submission, *, again: bool) -> None:
        """Inside the transaction that stores (or rescues) ``submission``. ``again``: it was
        in the inbox before (a rescue), and what was made for it then stays."""

    def marked_spam(self, form: Form, submission_id: Any, *, was_inbox: bool) -> None:
        """Inside the transaction that marks it spam."""

    def deleting(self, submission_ids: list) -> None:
        """Inside the transaction that deletes them, with their rows held and not yet gone:
        hold what hangs from them, so nothing new does while they go."""

    def deleted(self, form: Form, submission_ids: list) -> None:
        """Inside the transaction that deletes them; their rows are gone."""


receivers: list[Receiver] = []


def register(receiver: Receiver) -> None:
    if receiver not in receivers:
        receivers.append(receiver)


def accepted(submission: Submission, *, again: bool = False) -> None:
    for receiver in receivers:
        receiver.accepted(submission, again=again)


def marked_spam(form: Form, submission_id: Any, *, was_inbox: bool) -> None:
    for receiver in receivers:
        receiver.marked_spam(form, submission_id, was_inbox=was_inbox)


def deleting(submission_ids: list) -> None:
    for receiver in receivers:
        receiver.deleting(submission_ids)


def deleted(form: Form, submission_ids: list) -> None:
    for receiver in receivers:
        receiver.deleted(form, submission_ids)
