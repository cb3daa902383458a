"""What other apps do when a form changes: a registry forms_app calls and they fill at start,
as submissions/hooks.py does for submissions. Files registers its receiver
(files/apps.py), so deleting a form deletes its files without forms_app importing files."""

from __future__ import annotations

from typing import Protocol

from forms_app.models import Form


class Receiver(Protocol):
    def deleting(self, form: Form) -> None:
        """Inside the transaction that deletes ``form``, before its rows go: what is removed
        outside the database goes only once that transaction commits."""


receivers: list[Receiver] = []


def register(receiver: Receiver) -> None:
    if receiver not in receivers:
        receivers.append(receiver)


def deleting(form: Form) -> None:
    for receiver in receivers:
        receiver.deleting(form)
