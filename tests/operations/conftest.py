import os

import pytest


@pytest.fixture
def embedded_environment(tmp_path) -> dict:
    """The embedded setup (SQLite, the filesystem broker) in a folder of its own, for the
    Procfile's processes these tests start."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL",
                           "DJANGO_SETTINGS_MODULE", "CELERY_WORKER_NICE")}
    return {**env, "DATA_DIR": str(tmp_path)}
