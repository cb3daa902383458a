"""The codes mailed to an address (verification, password reset) and the one-time links
mailed beside them: made, and kept only as hashes, so neither the database nor the broker ever
holds one in the clear."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings
from django.db.models import F, Q

from accounts.models import CodePurpose, EmailCode, User
from core import clock


def new_code() -> str:
    return f"{secrets.randbelow(1_000_000):06d}"


def hash_code(user: User, code: str, purpose: str) -> str:
    # A verification code keeps the message it always had; other purposes are keyed apart,
    # so a code mailed for one purpose never works for another.
    prefix = "" if purpose == CodePurpose.VERIFY else f"{purpose}:"
    message = f"{prefix}{user.pk}:{code}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def link_digest(token: str) -> str:
    # 256 random bits need no salt or slow hash: the digest only keeps the database from
    # holding a usable link.
    return hashlib.sha256(token.encode()).hexdigest()


def new_link(user: User, code: str, purpose: str) -> str | None:
    """A one-time link token for ``user``'s current code of ``purpose``, or None if that code
    is no longer the current one. Minted when the mail is sent, so the broker never carries
    it; a later token for the same code replaces the earlier one."""
    token = secrets.token_urlsafe(32)
    code_hash = hash_code(user, code, purpose)
    minted = EmailCode.objects.filter(user=user, purpose=purpose, code_hash=code_hash).update(
        link_hash=link_digest(token), link_code_hash=code_hash
    )
    return token if minted else None


def live_link(token: str) -> Q:
    """The rows whose live link ``token`` is: minted for the row's current code, unexpired."""
    return Q(link_hash=link_digest(token), link_code_hash=F("code_hash"),
             expires_at__gt=clock.now())
