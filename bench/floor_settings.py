"""The floor: FormFlow's own settings, serving one bare view (bench/floor_urls.py).

FormFlow's public-endpoint shortcut is left out: it would serve the floor's URL with
FormFlow's own view."""

from config.settings import *  # noqa: F403
from config.settings import MIDDLEWARE

ROOT_URLCONF = "bench.floor_urls"
PUBLIC_ENDPOINT = "submissions.intake.middleware.PublicEndpointMiddleware"
MIDDLEWARE = [name for name in MIDDLEWARE if name != PUBLIC_ENDPOINT]
