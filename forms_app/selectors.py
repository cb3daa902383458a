from __future__ import annotations

import uuid

from django.db.models import Q, QuerySet

from accounts.models import User
from forms_app.models import Form


def forms_of(user: User) -> QuerySet[Form]:
    return Form.objects.filter(owner=user).order_by("-created_at")


def form_lookup(identifier: str) -> Q:
    """A form is named by its internal id or its endpoint slug."""
    try:
        return Q(pk=uuid.UUID(identifier))
    except ValueError:
        return Q(slug=identifier)
