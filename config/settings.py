"""Settings for FormFlow. Every value comes from the environment through ``config.env``;
each default works on a fresh machine with nothing but Python (docs/configuration.md)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url

import formflow
from config import env
from config.storage import uploads_storage

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = env.private_folder(Path(env.string("DATA_DIR", str(BASE_DIR / "var"))).resolve())
DEBUG = env.boolean("DEBUG", False)

# A shared database means the service may run on several machines, and every one of them must
# sign and encrypt with the same keys: a key generated into one machine's DATA_DIR would make
# tokens and stored secrets unreadable on the others. So production never generates them.
DATABASE_SCHEMES = ("postgres", "postgresql", "sqlite")
SHARED_KEYS_REQUIRED = not DEBUG and env.url("DATABASE_URL", DATABASE_SCHEMES) is not None


def _key(name: str, filename: str, make) -> str:
    if SHARED_KEYS_REQUIRED:
        why = "with DATABASE_URL set and DEBUG off, every machine must share it"
        return env.required(name, why)
    return env.optional(name) or env.generated_secret(DATA_DIR, filename, make)


SECRET_KEY = _key("SECRET_KEY", "secret_key", env.new_secret_key)
FIELD_ENCRYPTION_KEYS = env.string_list(
    "FIELD_ENCRYPTION_KEYS", _key("FIELD_ENCRYPTION_KEYS", "fernet_key", env.new_fernet_key)
)
ALLOWED_HOSTS = env.string_list("ALLOWED_HOSTS", "localhost,127.0.0.1")
BASE_URL = env.http_url("BASE_URL", "http://localhost:8000")
BASE_URL_IS_HTTPS = urlsplit(BASE_URL).scheme == "https"
if DEBUG and BASE_URL_IS_HTTPS:
    # An https BASE_URL is a public site: DEBUG there shows settings and stack traces to
    # visitors and sends cookies without Secure.
    raise env.ConfigError("DEBUG must be off when BASE_URL is https (a public site)")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "audit",
    "accounts",
    "teams",
    "forms_app",
    "submissions",
    "pullapi",
    "integrations",
    "dashboard",
    "operations",
    "files",
]

MIDDLEWARE = [
    "operations.middleware.RequestMetricsMiddleware",  # first: it times all the others
    "django.middleware.security.SecurityMiddleware",
    "core.api.middleware.ContentSecurityPolicyMiddleware",
    "core.api.middleware.NoStoreMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "core.api.middleware.ApiErrorMiddleware",
    "core.api.middleware.NulInPathMiddleware",
    "submissions.intake.middleware.PublicEndpointMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = (env.url("DATABASE_URL", DATABASE_SCHEMES)
                or f"sqlite:///{DATA_DIR / 'db.sqlite3'}")
# Connections are kept for a minute. Django's CONN_HEALTH_CHECKS is left off: it costs every
# request one more round trip (a fifth of a submission's time under load); a connection that
# broke is dropped at the end of the request that saw the error.
DATABASES = {
    "default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Web and worker share the file: wait for a lock instead of failing at once. IMMEDIATE
    # takes the write lock at BEGIN, so a transaction that reads and then writes can't fail
    # with "database is locked" when another process wrote in between.
    # WAL lets readers run beside the one writer, and with synchronous=NORMAL a commit appends
    # to the log without waiting for the disk (a power cut may lose the last commits, never
    # corrupt the file).
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
elif env.boolean("DATABASE_PREPARED_STATEMENTS", True):
    # Parameters bound by the server, and a statement run twice on a connection is prepared:
    # PostgreSQL then skips parsing and planning, psycopg skips quoting every parameter. It
    # was a third more submissions a second (bench/load.py). A pooler that hands a session's
    # statements to other sessions (PgBouncer before 1.21 in transaction mode) needs it off.
    DATABASES["default"]["OPTIONS"] = {"server_side_binding": True, "prepare_threshold": 2}
# Web sessions give up on a stuck lock or statement (core/infra/dbtimeouts.py). Off for a pooler
# in transaction mode, which would hand the setting to other clients: set it on the role.
DATABASE_SESSION_TIMEOUTS = env.boolean("DATABASE_SESSION_TIMEOUTS", True)
# Django's .iterator() outside a transaction reads through a cursor that outlives it (WITH
# HOLD), which a pooler in transaction mode cannot carry: the next fetch may reach another
# server session ("cursor ... does not exist"). Off, .iterator() fetches its rows at once;
# the exports, which must stream, read through a cursor inside their own transaction
# (submissions/export/pg.py) either way.
if not DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = not env.boolean(
        "DATABASE_SERVER_SIDE_CURSORS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.url("REDIS_URL", ("redis", "rediss", "unix"))
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "formflow",
        }
    }
else:
    # One process's memory: enough for the embedded single-process server. Several web
    # processes must share REDIS_URL so rate limits hold across them.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.ModelBackend"]
AUTH_PASSWORD_VALIDATORS = [
    {
        "NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator",
        "OPTIONS": {"user_attributes": ("email", "name")},
    },
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}


# --- Uploaded files (contract, "File uploads") --------------------------------------------
# A folder in the local data folder by default; ``s3://bucket/prefix`` for any S3-compatible
# store (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION, S3_ENDPOINT_URL).
STORAGE_URL = env.optional("STORAGE_URL")
# How many machines run this installation's processes (docs/deploy.md, "More than one
# machine"): above 1, uploads on one machine's disk are refused at start.
MACHINES = env.integer("MACHINES", 1, minimum=1)
STORAGES["uploads"] = uploads_storage(STORAGE_URL, DATA_DIR, MACHINES)
DEFAULT_STORAGE_QUOTA_BYTES = env.integer(
    "DEFAULT_STORAGE_QUOTA_BYTES", 1024 * 1024 * 1024, minimum=0)

# Serve static files straight from the apps' folders, so no collectstatic step is needed.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# --- Security -----------------------------------------------------------------------------
TRUSTED_PROXY_COUNT = env.integer("TRUSTED_PROXY_COUNT", 0, minimum=0)
if TRUSTED_PROXY_COUNT:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.boolean("SECURE_SSL_REDIRECT", BASE_URL_IS_HTTPS)
SECURE_HSTS_SECONDS = env.integer(
    "SECURE_HSTS_SECONDS", 31_536_000 if BASE_URL_IS_HTTPS else 0, minimum=0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_SECURE = not DEBUG
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SECURE = not DEBUG
CSRF_TRUSTED_ORIGINS = [BASE_URL] if urlsplit(BASE_URL).netloc else []
X_FRAME_OPTIONS = "DENY"

# --- Accounts and JWT ---------------------------------------------------------------------
AUTH_COOKIE_NAME = "ff_token"
AUTH_COOKIE_SECURE = not DEBUG
OTP_LIFETIME = timedelta(minutes=30)
OTP_MAX_ATTEMPTS = 5
OTP_RESEND_INTERVAL = timedelta(seconds=60)
JWT_LIFETIME = timedelta(days=7)
# Who may sign up (accounts/registration.py): open, invite or closed.
REGISTRATION = env.choice("REGISTRATION", ("open", "invite", "closed"), "open")

SIMPLE_JWT = {
    "ACCESS_TOKEN_LIFETIME": JWT_LIFETIME,
    "ALGORITHM": "HS256",
    "SIGNING_KEY": SECRET_KEY,
    "AUTH_HEADER_TYPES": ("Bearer",),
    "USER_ID_FIELD": "id",
    "USER_ID_CLAIM": "sub",
    "TOKEN_TYPE_CLAIM": "typ",
    "JTI_CLAIM": "jti",
    "UPDATE_LAST_LOGIN": False,
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.JWTCookieOrHeaderAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.BoundedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "core.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.FormFlowSchema",
    "UNAUTHENTICATED_USER": None,
    # ?format= belongs to the export endpoint, not to renderer selection.
    "URL_FORMAT_OVERRIDE": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "FormFlow API",
    "DESCRIPTION": "Self-hostable form backend: forms, public submissions, pull API, integrations.",
    "VERSION": formflow.version(),
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {"FieldTypeEnum": "forms_app.field_rules.TYPES",
                            "RoleEnum": "teams.roles.Role"},
    # Operation ids (what generated clients name their functions) are the path after /api:
    # pinned, since the public endpoint's /f/{slug} outside /api/ would move the common prefix
    # spectacular guesses, and with it every id.
    "SCHEMA_PATH_PREFIX": "/api",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.schema.components",
    ],
}

# --- Email --------------------------------------------------------------------------------
EMAIL_HOST = env.optional("EMAIL_HOST")
if EMAIL_HOST:
    EMAIL_BACKEND = "accounts.smtp.BoundedEmailBackend"  # every send bounded by the wall clock
    EMAIL_PORT = env.integer("EMAIL_PORT", 587)
    EMAIL_HOST_USER = env.string("EMAIL_HOST_USER")
    EMAIL_HOST_PASSWORD = env.string("EMAIL_HOST_PASSWORD")
    # STARTTLS by default (port 587). A relay that speaks plain SMTP needs EMAIL_USE_TLS=off;
    # one that wants TLS from the first byte (port 465) needs EMAIL_USE_SSL=on.
    EMAIL_USE_TLS = env.boolean("EMAIL_USE_TLS", True)
    EMAIL_USE_SSL = env.boolean("EMAIL_USE_SSL", False)
    if EMAIL_USE_TLS and EMAIL_USE_SSL:
        raise env.ConfigError("EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be on: choose one")
    EMAIL_TIMEOUT = 10
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
DEFAULT_FROM_EMAIL = env.string("DEFAULT_FROM_EMAIL", "FormFlow <no-reply@localhost>")

# --- Product limits and integrations ------------------------------------------------------
# Requests a minute per client address to every account endpoint and page anyone can reach
# (the contract's 20). Behind a NAT many people share an address; an operator may lift it.
AUTH_REQUESTS_PER_MINUTE = env.integer("AUTH_REQUESTS_PER_MINUTE", 20, minimum=1)
# The pull API's requests a minute per key (the contract's 60); a bench lifts it.
PULL_REQUESTS_PER_MINUTE = env.integer("PULL_REQUESTS_PER_MINUTE", 60, minimum=1)
DEFAULT_MONTHLY_SUBMISSION_LIMIT = env.integer("DEFAULT_MONTHLY_SUBMISSION_LIMIT", 1000, minimum=0)
EMAIL_PROVIDER_API_URL = env.string("EMAIL_PROVIDER_API_URL", "https://api.resend.com").rstrip("/")
RECAPTCHA_VERIFY_URL = env.string(
    "RECAPTCHA_VERIFY_URL", "https://www.google.com/recaptcha/api/siteverify"
)
HCAPTCHA_VERIFY_URL = env.string("HCAPTCHA_VERIFY_URL", "https://api.hcaptcha.com/siteverify")
TURNSTILE_VERIFY_URL = env.string(
    "TURNSTILE_VERIFY_URL", "https://challenges.cloudflare.com/turnstile/v0/siteverify"
)
GOOGLE_OAUTH_CLIENT_ID = env.optional("GOOGLE_OAUTH_CLIENT_ID")
GOOGLE_OAUTH_CLIENT_SECRET = env.optional("GOOGLE_OAUTH_CLIENT_SECRET")
GOOGLE_OAUTH_AUTH_URI = env.string(
    "GOOGLE_OAUTH_AUTH_URI", "https://accounts.google.com/o/oauth2/auth"
)
GOOGLE_OAUTH_TOKEN_URI = env.string("GOOGLE_OAUTH_TOKEN_URI", "https://oauth2.googleapis.com/token")
GOOGLE_SHEETS_API_URL = env.string("GOOGLE_SHEETS_API_URL", "https://sheets.googleapis.com/")
WEBHOOK_ALLOW_PRIVATE_NETWORKS = env.boolean("WEBHOOK_ALLOW_PRIVATE_NETWORKS", False)
# A worker with nothing left to deliver looks for new rows this long before it stops, so under
# a steady load no commit needs to wake it; a web process that saw a worker on the job skips
# telling it again for NUDGE_SKIP_SECONDS (integrations/delivery/nudge.py).
DELIVERY_LINGER_SECONDS = 0.25
NUDGE_SKIP_SECONDS = 0.1
# After a batch that was not full, a worker claims again no sooner than this after its last
# claim, so rows gather into fuller batches (integrations/delivery/worker.py).
DELIVERY_BATCH_PACE_SECONDS = 0.05
# A batch's destinations are attempted side by side, each on a thread (and a database
# connection) of its own, at most this many at once: a destination whose attempt takes its
# whole 10 s deadline then holds up only its own rows (integrations/delivery/attempt.py).
DELIVERY_DESTINATIONS_AT_ONCE = env.integer("DELIVERY_DESTINATIONS_AT_ONCE", 8, minimum=1)
DELIVERY_RETRY_DELAYS = env.integer_list(
    "DELIVERY_RETRY_DELAYS", "5,300,1800,7200,18000,36000,36000"
)

# --- Celery -------------------------------------------------------------------------------
BROKER_DIR = DATA_DIR / "broker"
CELERY_BROKER_URL = env.optional("CELERY_BROKER_URL") or REDIS_URL or "filesystem://"
if CELERY_BROKER_URL == "filesystem://":
    for folder in ("queue", "processed", "control"):
        (BROKER_DIR / folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Every folder is named, or kombu writes the missing ones into the working directory.
        "control_folder": str(BROKER_DIR / "control"),
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2, "socket_timeout": 5}
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = 60
CELERY_TASK_TIME_LIMIT = 90
# A worker told to stop (SIGTERM) starts no new attempt, hands back what it claimed, lets the
# attempts in flight end (each within its 10 s deadline) and exits within this many seconds;
# past it, what still runs is killed (config/celery.py). At least 11: an attempt's 10 s.
WORKER_STOP_SECONDS = env.integer("WORKER_STOP_SECONDS", 20, minimum=11)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery's Django fixup closes every database connection after each task unless this is set:
# reconnecting to PostgreSQL was a quarter of a delivery's CPU. Connections are kept instead,
# and config.celery closes only unusable or expired ones (CONN_MAX_AGE), as a request does.
CELERY_DB_REUSE_MAX = 1_000_000
# How much delivery workers yield the CPU to web processes on the same machine (config.celery).
CELERY_WORKER_NICE = env.integer("CELERY_WORKER_NICE", 19, minimum=0)
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
# Beat's own loop stamps a heartbeat that /status reads (operations/beat.py).
CELERY_BEAT_SCHEDULER = "operations.beat:HeartbeatScheduler"
CELERY_BEAT_SCHEDULE = {
    "sweep-deliveries": {"task": "integrations.tasks.sweep_deliveries", "schedule": 5},
    # The feed's sequencer (submissions/feed/); readers also run it before they read.
    "place-in-feed": {"task": "submissions.tasks.place_in_feed", "schedule": 2},
    # Retention, spam, Idempotency-Keys, revoked tokens, the audit log's 400 days
    # (integrations/jobs.py).
    "purge": {"task": "submissions.tasks.purge", "schedule": 3600},
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2  # a broker outage must not hold a submission for long
CELERY_TASK_ALWAYS_EAGER = False

SILENCED_SYSTEM_CHECKS = ["django_ratelimit.W001"]

# --- Operations ---------------------------------------------------------------------------
# /metrics answers only this bearer token; unset, it is a 404 (operations/views.py).
METRICS_TOKEN = env.optional("METRICS_TOKEN")
# Web and worker processes each count in a file of this folder, and a scrape adds them up
# (prometheus-client's multiprocess mode; docs/operating.md, "Metrics").
METRICS_DIR = env.private_folder(Path(env.export_default(
    "PROMETHEUS_MULTIPROC_DIR", str(DATA_DIR / "metrics"))))
SENTRY_DSN = env.optional("SENTRY_DSN")
LOG_FORMAT = env.choice("LOG_FORMAT", ("plain", "json"), "plain")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {"()": "core.logs.JsonFormatter"},
    },
    "filters": {"link_tokens": {"()": "core.logs.CutLinkTokens"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": "INFO"},
    # Both name a request's path, which may be a mailed link with its token.
    "loggers": {"django.request": {"level": "ERROR", "filters": ["link_tokens"]},
                "django.security.csrf": {"filters": ["link_tokens"]},
                # The worker pool's own logger (billiard's) does not propagate: without a
                # handler of its own its lines (a pool process stopped) print bare. ERROR,
                # as Celery sets it.
                "multiprocessing": {"handlers": ["console"], "level": "ERROR",
                                    "propagate": False}},
}
CSRF_FAILURE_VIEW = "core.api.middleware.csrf_failure"
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024  # the contract: bodies over 10 MiB are 413
# A file part is a field like any other: up to the contract's 200 (Django's default is 100).
DATA_UPLOAD_MAX_NUMBER_FILES = 200

# The web server's edge (edge/): how long a client may take to send a request's line
# and headers, then its body, before it gets 408; and how many connections one web process
# keeps open before it answers 503. Slow clients hold no thread, only a connection.
SERVER_HEADER_TIMEOUT = env.integer("SERVER_HEADER_TIMEOUT", 10, minimum=1)
SERVER_BODY_TIMEOUT = env.integer("SERVER_BODY_TIMEOUT", 60, minimum=1)
SERVER_MAX_CONNECTIONS = env.integer("SERVER_MAX_CONNECTIONS", 1000, minimum=1)

if SENTRY_DSN:
    from config import errors_reporting

    errors_reporting.start(SENTRY_DSN, release=formflow.__version__)
