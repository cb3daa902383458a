"""Mail to an account's owner, sent by the worker: a code, and the sign-in alert.

Celery tasks under the names they were first registered with (in accounts/tasks.py): queued
messages carry those names. They sit below every module that queues them (the worker's
background.py, the sign-in guard), so no one imports in a circle."""

from __future__ import annotations

from urllib.parse import urlencode

from celery import shared_task
from django.conf import settings
from django.template.loader import render_to_string

from accounts import codes, mailer
from accounts.models import CodePurpose, User
from core import crypto

# A code lives 30 minutes: retries (about 10 s, 20 s, 40 s, 80 s, 160 s) stay well inside it.
RETRY_DELAYS_BASE = 10
MAX_RETRIES = 5

SUBJECTS = {
    CodePurpose.VERIFY: "Your FormFlow verification code: {code}",
    CodePurpose.RESET: "Your FormFlow password reset code: {code}",
}
TEMPLATES = {
    CodePurpose.VERIFY: "email/verification_code.txt",
    CodePurpose.RESET: "email/reset_code.txt",
}


@shared_task(name="accounts.tasks.send_code_email", bind=True, max_retries=MAX_RETRIES)
def send_code_email(self, user_id: str, sealed_code: str, purpose: str,
                    sealed_onward: str = "") -> None:
    users = User.objects.filter(pk=user_id)
    if purpose == CodePurpose.VERIFY:
        users = users.filter(is_verified=False)
    user = users.first()
    code = crypto.decrypt(sealed_code)
    # A later send replaced it, or it was used: a late or repeated message sends nothing.
    token = codes.new_link(user, code, purpose) if user is not None else None
    if user is None or token is None:
        return
    onward = crypto.decrypt(sealed_onward) if sealed_onward else ""
    context = {"code": code, "minutes": 30, "link": confirm_url(token, onward)}
    try:
        mailer.send(
            subject=SUBJECTS[CodePurpose(purpose)].format(code=code),
            body=render_to_string(TEMPLATES[CodePurpose(purpose)], context),
            to=user.email,
        )
    except mailer.PERMANENT:
        return  # recorded and logged; the operator must fix the mail settings
    except OSError as error:
        raise self.retry(exc=error, countdown=RETRY_DELAYS_BASE * 2**self.request.retries) from None


def confirm_url(token: str, onward: str = "") -> str:
    """The dashboard's confirm page (contract: {BASE_URL}/dashboard/confirm/<token>), with the
    page it goes on to as ``next``: in the query, which no access log keeps."""
    link = f"{settings.BASE_URL}/dashboard/confirm/{token}"
    return f"{link}?{urlencode({'next': onward})}" if onward else link


@shared_task(name="accounts.tasks.send_sign_in_alert")
def send_sign_in_alert(user_id: str) -> None:
    """Past 100 failed sign-ins in an hour: the owner learns that only devices they signed in
    from before may sign in for now."""
    user = User.objects.filter(pk=user_id, is_active=True).first()
    if user is None:
        return
    try:
        mailer.send(
            subject="FormFlow: many failed sign-ins to your account",
            body=render_to_string("email/sign_in_alert.txt", {"email": user.email}),
            to=user.email,
        )
    except OSError:
        return  # recorded by the mailer; an alert is not worth retrying into the next hour
