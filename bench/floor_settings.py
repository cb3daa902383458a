"""The floor: FormFlow's own settings, serving one bare view (bench/floor_urls.py)."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.floor_urls"
