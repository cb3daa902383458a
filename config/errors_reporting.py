"""Error reports to Sentry (or a Sentry-compatible service) when SENTRY_DSN is set.

Started from the settings, so the web processes, the workers and beat all report. Personal
data stays out: no request bodies, cookies, headers' credentials or user addresses are sent
(``send_default_pii`` off, request bodies never), only the stack and the request's path.
"""

from __future__ import annotations


def start(dsn: str, *, release: str) -> None:
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        release=f"formflow@{release}",
        send_default_pii=False,
        max_request_body_size="never",
        traces_sample_rate=0.0,
        integrations=[DjangoIntegration(), CeleryIntegration()],
    )
