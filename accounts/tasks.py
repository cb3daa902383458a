from celery import shared_task
from django.core.mail import send_mail
from django.template.loader import render_to_string

from accounts.models import User
from config import crypto


@shared_task(autoretry_for=(OSError,), retry_backoff=5, max_retries=5)
def send_verification_email(user_id: str, sealed_code: str) -> None:
    from accounts.services import code_is_current

    user = User.objects.filter(pk=user_id, is_verified=False).first()
    code = crypto.decrypt(sealed_code)
    # A resend replaced it, or it was used: a late or repeated message sends nothing.
    if user is None or not code_is_current(user, code):
        return
    context = {"code": code, "minutes": 30}
    send_mail(
        subject=f"Your FormFlow verification code: {code}",
        message=render_to_string("email/verification_code.txt", context),
        from_email=None,
        recipient_list=[user.email],
    )


@shared_task
def purge_revoked_tokens() -> int:
    from accounts.services import revoked_tokens_purge

    return revoked_tokens_purge()
