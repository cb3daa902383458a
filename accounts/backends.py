from django.contrib.auth.backends import ModelBackend

from accounts import signin_guard


class GuardedModelBackend(ModelBackend):
    """Django's backend (the admin's sign-in), counting failures toward the per-address limit
    the API and the dashboard share (accounts/signin_guard.py)."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None and username:
            signin_guard.failed(username)
        return user
