"""Account work done in the worker: what a request must not do where its time would show
whether an address has an account (sign-up, resend, forgot password). Each task calls the
worker's side (background.py); the mails it sends are tasks of their own (mails.py).

The request's side (services.py) queues these; nothing here imports it, so the arrows point
one way."""

from celery import shared_task

from accounts import background
from core import crypto
from core.errors import ServiceError
from core.infra import broker


def enqueue(task, *args) -> None:
    """Hand account work to the worker; a broker that cannot take it is a 503, not a 500."""
    if not broker.publish(lambda: task.apply_async(args, retry=False), task.name):
        raise ServiceError(
            "service_unavailable",
            "The service cannot take this request right now. Please try again shortly.",
            status_code=503,
            headers={"Retry-After": "30"},
        )


# ``client``: unused since 1.2.0 (codes no longer tell clients apart); still accepted, for the
# messages 1.1.0 queued before an upgrade. ``sealed_onward``: the dashboard's page the mailed
# link goes on to (background.seal), empty for none.


@shared_task
def sign_up(email: str, sealed_password_hash: str, client: str = "",
            sealed_onward: str = "") -> None:
    background.sign_up_in_background(email=email,
                                      password_hash=crypto.decrypt(sealed_password_hash),
                                      onward=background.unseal(sealed_onward))


@shared_task
def resend_code(email: str, client: str = "", sealed_onward: str = "") -> None:
    background.resend_code_in_background(email=email, onward=background.unseal(sealed_onward))


@shared_task
def send_reset_code(email: str, client: str = "") -> None:
    background.reset_code_in_background(email=email)
