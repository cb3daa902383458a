"""Jobs that span apps: the hourly purge of what FormFlow keeps only for a while, and the
re-encryption of every stored secret.

They live here because integrations already imports every app they touch (accounts,
forms_app, submissions, files through submissions), so no job adds a dependency between apps
(docs/architecture.md). Each job only calls the services of the apps that own the data.
"""

from __future__ import annotations

from celery import shared_task
from django.db import transaction

from accounts.services import revoked_tokens_purge, sign_up_attempts_purge
from audit.services import entries_purge
from core import crypto
from files.services import orphan_objects_sweep
from forms_app.models import Form
from integrations.kinds.email import autoresponse
from integrations.kinds.owner_email import digest
from integrations.models import Integration
from submissions import folders
from submissions.intake import idempotency
from submissions.services import orphan_files_purge, retention_purge, spam_purge


def purge() -> dict[str, int]:
    """Delete what is kept only for a while (contract, "Submission lifecycle"): submissions
    past their form's retentionDays, spam after 30 days, Idempotency-Keys after 24 h, revoked
    tokens once they have expired anyway, sign-ups of addresses never verified after 30 days,
    the marks that keep autoresponses to one an hour once their hour is past, uploaded
    files whose submission was never stored, stored objects no file row names (a web
    process killed while writing them), and audit log entries after 400 days. How many of
    each kind went.

    Then each folder's new rows are folded into its count, so no read has a long tail to
    count."""
    went = {
        "submissions": retention_purge(),
        "spam": spam_purge(),
        "idempotency_keys": idempotency.expired_purge(),
        "revoked_tokens": revoked_tokens_purge(),
        "sign_up_attempts": sign_up_attempts_purge(),
        "autoresponse_marks": autoresponse.expired_purge(),
        "owner_digest_hours": digest.expired_purge(),
        "orphan_files": orphan_files_purge(),
        "orphan_stored_objects": orphan_objects_sweep(),
        "audit_entries": entries_purge(),
    }
    folders.advance_all(list(Form.objects.values_list("pk", flat=True)))
    return went


# Beat runs it every hour, so nothing outlives its period by more than that; ``manage.py
# purge`` runs it by hand. Its name is the one it had in submissions/tasks.py: beat's schedule
# (config/settings.py) and messages already queued name it so.
@shared_task(name="submissions.tasks.purge", ignore_result=True)
def purge_task() -> dict[str, int]:
    return purge()


def secrets_reencrypt() -> int:
    """Re-encrypt every stored secret under the first FIELD_ENCRYPTION_KEYS key. The rows are
    locked FOR NO KEY UPDATE (no key changes), so a submission checking its foreign keys meanwhile
    never waits on them: no deadlock with a public POST (docs/exactness.md, "Lock order")."""
    count = 0
    with transaction.atomic():
        for integration in Integration.objects.exclude(secrets_encrypted="").select_for_update(
                no_key=True):
            rotated = crypto.rotate(integration.secrets_encrypted)
            Integration.objects.filter(pk=integration.pk).update(secrets_encrypted=rotated)
            count += 1
        for form in Form.objects.exclude(recaptcha_secret_encrypted="").select_for_update(
                no_key=True):
            rotated = crypto.rotate(form.recaptcha_secret_encrypted)
            Form.objects.filter(pk=form.pk).update(recaptcha_secret_encrypted=rotated)
            count += 1
    return count
