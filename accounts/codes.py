"""The codes mailed to an address (verification, password reset): made, and kept only as
keyed hashes, so neither the database nor the broker ever holds one in the clear."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings

from accounts.models import CodePurpose, EmailCode, User


def new_code() -> str:
    return f"{secrets.randbelow(1_000_000):06d}"


def hash_code(user: User, code: str, purpose: str) -> str:
    # A verification code keeps the message it always had; other purposes are keyed apart,
    # so a code mailed for one purpose never works for another.
    prefix = "" if purpose == CodePurpose.VERIFY else f"{purpose}:"
    message = f"{prefix}{user.pk}:{code}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def is_current(user: User, code: str, purpose: str = CodePurpose.VERIFY) -> bool:
    entry = EmailCode.objects.filter(user=user, purpose=purpose).first()
    return entry is not None and hmac.compare_digest(
        entry.code_hash, hash_code(user, code, purpose)
    )
