"""Opaque identifiers for every public resource."""

import uuid

from django.db import models


def new_id() -> uuid.UUID:
    return uuid.uuid4()


class IdField(models.UUIDField):
    """A random UUID primary key: never sequential, rendered as a plain string."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("primary_key", True)
        kwargs.setdefault("default", new_id)
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)
