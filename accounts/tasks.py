from celery import shared_task
from django.template.loader import render_to_string

from accounts import mailer
from accounts.models import User
from config import crypto

# A code lives 30 minutes: retries (about 10 s, 20 s, 40 s, 80 s, 160 s) stay well inside it.
RETRY_DELAYS_BASE = 10
MAX_RETRIES = 5


@shared_task(bind=True, max_retries=MAX_RETRIES)
def send_verification_email(self, user_id: str, sealed_code: str) -> None:
    from accounts.services import code_is_current

    user = User.objects.filter(pk=user_id, is_verified=False).first()
    code = crypto.decrypt(sealed_code)
    # A resend replaced it, or it was used: a late or repeated message sends nothing.
    if user is None or not code_is_current(user, code):
        return
    context = {"code": code, "minutes": 30}
    try:
        mailer.send(
            subject=f"Your FormFlow verification code: {code}",
            body=render_to_string("email/verification_code.txt", context),
            to=user.email,
        )
    except mailer.PERMANENT:
        return  # recorded and logged; the operator must fix the mail settings
    except OSError as error:
        raise self.retry(exc=error, countdown=RETRY_DELAYS_BASE * 2**self.request.retries) from None


@shared_task
def purge_revoked_tokens() -> int:
    from accounts.services import revoked_tokens_purge

    return revoked_tokens_purge()
