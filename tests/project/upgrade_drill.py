"""An upgrade played on a fresh database, in a process of its own (tests/project/test_upgrades.py
runs it with DATABASE_URL naming that database).

    python -m tests.project.upgrade_drill STEPS_JSON

STEPS_JSON is a list of steps, run in order:
- ``["migrate", {app: migration, ...}]``: migrate every app named to that migration, as a
  release's code would have left the database (``["migrate", null]``: to the latest);
- ``["form", name]``: a form made by whatever release the database is at, with its owner
  notification as that release made it (one enabled OWNER_EMAIL row once they exist);
- ``["save", name]``: the owner saves the form's settings (its ``updated_at`` moves on);
- ``["new_form", name]``: a form made by this release's service, after the last migrate.

It prints ``{name: [notify_owner, the OWNER_EMAIL integration's enabled or null, its team
(null), its owner's role on it, whether its submissions count on its owner]}``.
"""

from __future__ import annotations

import json
import os
import sys
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.migrations.executor import MigrationExecutor  # noqa: E402
from django.utils import timezone  # noqa: E402


def historical(model: str):
    """``app.Model`` as the database's applied migrations shape it."""
    executor = MigrationExecutor(connection)
    applied = list(executor.loader.applied_migrations)
    app, name = model.split(".")
    return executor.loader.project_state(applied).apps.get_model(app, name)


def owner_id() -> str:
    User = historical("accounts.User")
    user, _ = User.objects.get_or_create(email="owner@example.com", defaults={"password": "!"})
    return user.pk


def make_form(name: str) -> None:
    Form = historical("forms_app.Form")
    form = Form.objects.create(owner_id=owner_id(), name=name)
    if any(field.name == "notify_owner" for field in Form._meta.fields):
        Integration = historical("integrations.Integration")
        Integration.objects.create(owner_id=form.owner_id, form_id=form.pk, type="OWNER_EMAIL")


def save_form(name: str) -> None:
    historical("forms_app.Form").objects.filter(name=name).update(updated_at=timezone.now())


def new_form(name: str) -> None:
    from accounts.models import User
    from forms_app.services import form_create

    form_create(owner=User.objects.get(email="owner@example.com"), name=name)


def migrate(targets: dict[str, str] | None) -> None:
    if targets is None:
        call_command("migrate", verbosity=0)
        return
    executor = MigrationExecutor(connection)
    executor.migrate(list(targets.items()))


def outcome() -> dict[str, list]:
    from forms_app import access
    from forms_app.models import Form
    from integrations.models import Integration

    found = {}
    for form in Form.objects.all():
        row = Integration.objects.filter(form=form, type="OWNER_EMAIL").first()
        found[form.name] = [form.notify_owner, row.enabled if row else None, form.team_id,
                            access.role_of(form.owner, form), form.counted_on_id == form.owner_id]
    return found


STEPS = {"migrate": migrate, "form": make_form, "save": save_form, "new_form": new_form}


def main(steps: list) -> None:
    for action, argument in steps:
        STEPS[action](argument)
        # Timestamps a step writes are strictly after those of the step before.
        time.sleep(0.01)
    print(json.dumps(outcome()))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
