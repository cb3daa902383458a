"""What other apps add to forms and do when one is saved or deleted: registries forms_app calls
and they fill at start (in their AppConfig.ready()), so forms_app imports none of them.

Submissions sets each form's folder sizes on the forms the API and the admin show
(submissions/apps.py); integrations keeps the owner's notification in step with the form
(integrations/apps.py). When a form is deleted, submissions holds its submissions and then
the form, and deletes their files; integrations then holds their deliveries: receivers run
in the order they registered, which is INSTALLED_APPS' (docs/exactness.md, "Deleting races
nothing into an error")."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Protocol

from forms_app.models import Form

# Sets attributes on each of the forms, as an annotation of their query would, in a fixed
# number of statements however many forms there are.
Annotator = Callable[[list[Form]], object]


class Saved(Protocol):
    def __call__(self, form: Form, *, created: bool, fields: Collection[str]) -> None:
        """Inside the transaction that created the form (``created``) or set ``fields`` of
        it (the names of its model fields)."""

class Deleting(Protocol):
    def deleting(self, form: Form) -> None:
        """Inside the transaction that deletes ``form``, before its rows go: what is removed
        outside the database goes only once that transaction commits."""


annotators: list[Annotator] = []
# The field names intake never keeps as data (its control fields: where to redirect, the
# honeypots, the mail's subject, other services' settings, CAPTCHA tokens), which a field rule
# could never see: registered by submissions.
unkept_names: set[str] = set()
on_saved: list[Saved] = []
on_deleting: list[Deleting] = []


def register_annotator(annotate: Annotator) -> None:
    if annotate not in annotators:
        annotators.append(annotate)


def register_saved(receiver: Saved) -> None:
    if receiver not in on_saved:
        on_saved.append(receiver)


def register_deleting(receiver: Deleting) -> None:
    if receiver not in on_deleting:
        on_deleting.append(receiver)


def register_unkept_names(names: Iterable[str]) -> None:
    unkept_names.update(names)


def annotated(forms: Iterable[Form]) -> list[Form]:
    forms = list(forms)
    for annotate in annotators:
        annotate(forms)
    return forms


def saved(form: Form, *, created: bool, fields: Collection[str]) -> None:
    for receiver in on_saved:
        receiver(form, created=created, fields=fields)


def deleting(form: Form) -> None:
    for receiver in on_deleting:
        receiver.deleting(form)
