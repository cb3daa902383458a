"""The invitation mail, sent by the worker with the token the service sealed for it."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.template.loader import render_to_string

from accounts import mailer
from core import clock, crypto
from teams.models import Invitation

RETRY_DELAYS_BASE = 10
MAX_RETRIES = 5


def accept_url(token: str) -> str:
    return f"{settings.BASE_URL}/dashboard/invitations/{token}"


@shared_task(name="teams.mails.send_invitation", bind=True, max_retries=MAX_RETRIES)
def send_invitation(self, invitation_id: str, sealed_token: str) -> None:
    invitation = (Invitation.objects.select_related("team", "invited_by")
                  .filter(pk=invitation_id, accepted_at__isnull=True,
                          expires_at__gt=clock.now()).first())
    if invitation is None:  # withdrawn, used or expired meanwhile: nothing to send
        return
    inviter = invitation.invited_by.email if invitation.invited_by else "A member"
    context = {"team": invitation.team.name, "inviter": inviter, "role": invitation.role,
               "link": accept_url(crypto.decrypt(sealed_token)), "days": 7}
    try:
        mailer.send(subject=f"You are invited to the team {invitation.team.name} on FormFlow",
                    body=render_to_string("email/team_invitation.txt", context),
                    to=invitation.email)
    except mailer.PERMANENT:
        return  # recorded and logged; the operator must fix the mail settings
    except OSError as error:
        raise self.retry(exc=error, countdown=RETRY_DELAYS_BASE * 2**self.request.retries) from None
