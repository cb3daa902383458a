"""A form keeps at most 500 distinct field names (contract, "Input limits").

Without a bound, one client could give a form any number of names: each became a CSV column
and a Sheets column, and a 200 x 200-name export took seconds and megabytes. The form row
holds the names it has stored; a submission whose names are all known (nearly every one)
only reads them with the form. A new name is added under the form's row lock, so concurrent
submissions never take the form past the limit.

That lock is FOR NO KEY UPDATE (docs/exactness.md, "Lock order"): it orders the writers of
the names, and never blocks the foreign-key check of a submission being inserted, which takes
FOR KEY SHARE on the form row while it holds a monthly usage shard.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from core.errors import ServiceError
from forms_app.models import Form
from submissions import validation

MAX_FIELD_NAMES = 500


def too_many_names(name: str) -> ServiceError:
    return validation.invalid(
        {name[: validation.MAX_NAME_LENGTH]: (
            f"this form already has {MAX_FIELD_NAMES} different field names; "
            "send one of those instead of a new name"
        )}
    )


def has_new(form: Form, data: list[list[Any]]) -> bool:
    known = set(form.field_names or ())
    return any(name not in known for name, _value in data)


def record(form: Form, data: list[list[Any]]) -> None:
    """Add the submission's new names to the form, or refuse it past the limit."""
    with transaction.atomic():
        current = (
            Form.objects.select_for_update(no_key=True)
            .filter(pk=form.pk)
            .values_list("field_names", flat=True)
            .first()
        )
        names = list(current or [])
        seen = set(names)
        new = [name for name, _value in data if name not in seen]
        if len(names) + len(new) > MAX_FIELD_NAMES:
            raise too_many_names(new[0])
        if new:
            names += new
            Form.objects.filter(pk=form.pk).update(field_names=names)
    form.field_names = names
