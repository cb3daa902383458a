"""The data FormFlow keeps only for a while, deleted by one job (contract, "Submission
lifecycle"): submissions past their form's retentionDays, spam after 30 days, Idempotency-Keys
after 24 h, revoked tokens once they have expired anyway, sign-ups of
addresses never verified after 30 days, the marks that keep
autoresponses to one an hour, once their hour is past, and uploaded files whose submission was
never stored. Beat runs it every hour, so
nothing outlives its period by more than that; ``manage.py purge`` runs it by hand."""

from __future__ import annotations

from accounts.services import revoked_tokens_purge, sign_up_attempts_purge
from forms_app.models import Form
from integrations.kinds.email import autoresponse
from integrations.kinds.owner_email import digest
from submissions import folders
from submissions.intake import idempotency
from submissions.services import orphan_files_purge, retention_purge, spam_purge


def purge() -> dict[str, int]:
    """Run every purge; how many rows of each kind went. Then fold each folder's new rows
    into its count, so no read has a long tail to count."""
    went = {
        "submissions": retention_purge(),
        "spam": spam_purge(),
        "idempotency_keys": idempotency.expired_purge(),
        "revoked_tokens": revoked_tokens_purge(),
        "sign_up_attempts": sign_up_attempts_purge(),
        "autoresponse_marks": autoresponse.expired_purge(),
        "owner_digest_hours": digest.expired_purge(),
        "orphan_files": orphan_files_purge(),
    }
    folders.advance_all(list(Form.objects.values_list("pk", flat=True)))
    return went
