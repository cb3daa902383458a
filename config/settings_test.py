"""Test settings: the real settings with fast hashing and tasks run in-process."""

import os
import tempfile

# Production refuses to generate keys when DATABASE_URL is set (the PostgreSQL pass of the
# suite). Tests use fixed keys of their own, the same in every process a test starts.
os.environ.setdefault("SECRET_KEY", "test-only-secret-key-" + "x" * 48)
os.environ.setdefault("FIELD_ENCRYPTION_KEYS", "dGVzdC1vbmx5LWZlcm5ldC1rZXktMzItYnl0ZXMhISE=")
# Each test run counts metrics in a folder of its own (and the processes it starts inherit
# it), so a run beside another, or beside dev.py start, never adds their counts to its own.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="formflow-metrics-"))

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
# Eager tasks run inside the request that nudged them: a lingering worker would hold each
# request a quarter of a second. tests/integrations/test_nudge.py runs them as in production.
DELIVERY_LINGER_SECONDS = 0.0
DELIVERY_BATCH_PACE_SECONDS = 0.0
NUDGE_SKIP_SECONDS = 0.0
# Messages a test sends with eager mode off stay in this process, never in DATA_DIR or Redis.
CELERY_BROKER_URL = "memory://"
CELERY_BROKER_TRANSPORT_OPTIONS = {}
