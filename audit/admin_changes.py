"""Changes an operator makes in the Django admin, recorded as the owner's services record
theirs. The admin saves and deletes inside its own transaction (changeform_view, delete_view);
a bulk delete is wrapped here, one transaction per object."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import transaction

from audit.services import Target, record, setting_names


def operator(request) -> Any:
    """The signed-in operator of an admin request (None for one made without a session)."""
    user = getattr(request, "user", None)
    return user if getattr(user, "is_authenticated", False) else None


class AuditedAdmin(admin.ModelAdmin):
    """Records ``<kind>.created``, ``<kind>.changed`` (the names of the fields changed, never
    their values) and ``<kind>.deleted`` in the owner's log, the operator as the actor."""

    audit_kind = ""

    def audit_target(self, obj: Any) -> Target:
        return Target(self.audit_kind, obj.pk, getattr(obj, "name", "") or str(obj))

    def audit_owner(self, obj: Any) -> Any:
        """The account whose log it is: the object's owner."""
        return obj.owner

    def audit_team(self, obj: Any) -> Any:
        """The team whose log it is too, as the services record a team form's changes."""
        return getattr(obj, "team_id", None)

    def _record(self, request, owner: Any, target: Target, verb: str,
                details: dict[str, Any], team_id: Any = None) -> None:
        record(owner_id=getattr(owner, "pk", None), actor=operator(request),
               action=f"{target.type}.{verb}", target=target, details={**details, "via": "admin"},
               team_id=team_id)

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        if change and not form.changed_data:
            return
        details = {"changed": setting_names(form.changed_data)} if change else {}
        self._record(request, self.audit_owner(obj), self.audit_target(obj),
                     "changed" if change else "created", details, self.audit_team(obj))

    def delete_model(self, request, obj) -> None:
        owner, target, team_id = self.audit_owner(obj), self.audit_target(obj), self.audit_team(obj)
        super().delete_model(request, obj)
        # An account deleted has no log left to hold its own deletion: the operators' only.
        self._record(request, None if owner is obj else owner, target, "deleted", {}, team_id)

    def delete_queryset(self, request, queryset) -> None:
        for obj in queryset:
            with transaction.atomic():
                self.delete_model(request, obj)
