"""Account work done in the worker: what a request must not do where its time would show
whether an address has an account (sign-up, resend, forgot password), and mailing codes."""

from celery import shared_task
from django.template.loader import render_to_string

from accounts import mailer
from accounts.models import CodePurpose, User
from core import crypto
from core.errors import ServiceError
from core.infra import broker

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


def enqueue(task, *args) -> None:
    """Hand account work to the worker; a broker that cannot take it is a 503, not a 500."""
    if not broker.publish(lambda: task.apply_async(args, retry=False), task.name):
        raise ServiceError(
            "service_unavailable",
            "The service cannot take this request right now. Please try again shortly.",
            status_code=503,
            headers={"Retry-After": "30"},
        )


# ``client``: the client address that asked, which may still use the code it was sent while
# strangers' wrong guesses are refused (empty for messages queued by an earlier version).


@shared_task
def sign_up(email: str, sealed_password_hash: str, client: str = "") -> None:
    from accounts.services import sign_up_in_background

    sign_up_in_background(
        email=email, password_hash=crypto.decrypt(sealed_password_hash), client=client
    )


@shared_task
def resend_code(email: str, client: str = "") -> None:
    from accounts.services import resend_code_in_background

    resend_code_in_background(email=email, client=client)


@shared_task
def send_reset_code(email: str, client: str = "") -> None:
    from accounts.services import reset_code_in_background

    reset_code_in_background(email=email, client=client)


@shared_task(bind=True, max_retries=MAX_RETRIES)
def send_code_email(self, user_id: str, sealed_code: str, purpose: str) -> None:
    from accounts.services import code_is_current

    users = User.objects.filter(pk=user_id)
    if purpose == CodePurpose.VERIFY:
        users = users.filter(is_verified=False)
    user = users.first()
    code = crypto.decrypt(sealed_code)
    # A later send replaced it, or it was used: a late or repeated message sends nothing.
    if user is None or not code_is_current(user, code, purpose):
        return
    context = {"code": code, "minutes": 30}
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


@shared_task
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
