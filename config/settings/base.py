"""Settings shared by every environment, read from the process environment (and `.env`).

With nothing set, the platform runs on its embedded defaults: a SQLite file under `var/`,
Celery tasks executed in-process, and the offline judge.
"""

import os
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF

from infrastructure.storage import storage_from_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env")

DEVELOPMENT_SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
SECRET_KEY = env("SECRET_KEY", default=DEVELOPMENT_SECRET_KEY)
DEBUG = env.bool("DEBUG", default=True)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "axes",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_prometheus",
    "csp",
    "infrastructure",
    "accounts",
    "trajectories",
    "annotation",
    "judges",
    "failures",
    "metrics",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "infrastructure.middleware.RetryAfterMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "infrastructure.middleware.RejectNullCharactersMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "trajectories.middleware.ReportReplacedTextMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "infrastructure.middleware.WorkersUnreachableMiddleware",
    "infrastructure.errors.SiteErrorPagesMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
    "axes.middleware.AxesMiddleware",
]

# Content-Security-Policy on every response: scripts, styles and everything else from this site
# only, so a script that slipped into uploaded text could not run. Templates hold no inline script,
# style or event attribute; screenshots are served by the web process, whatever the storage.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

ROOT_URLCONF = "config.urls"
CSRF_FAILURE_VIEW = "infrastructure.errors.csrf_failure"
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

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file-backed test database (beside the main one) lets a Celery worker process see test data.
    _db_file = Path(DATABASES["default"]["NAME"])
    DATABASES["default"]["TEST"] = {"NAME": str(_db_file.with_name(f"test-{_db_file.name}"))}
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 30, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # PostgreSQL's JIT compiles any plan it estimates costly, such as the leaderboard ranking thousands of runs
    # by index lookups: 450 ms of compiling for 85 ms of work at 5,000 runs (BENCHMARKS.md).
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("options", "-c jit=off")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out client before any password check
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=VAR_DIR / "static")
# The README's images, so that its sections served under /docs/ show them.
STATICFILES_DIRS = [BASE_DIR / "static", ("docs/screenshots", BASE_DIR / "docs" / "screenshots")]
MEDIA_URL = "media/"
MEDIA_ROOT = env.path("MEDIA_ROOT", default=VAR_DIR / "media")
# Shared by web and workers: a folder (MEDIA_ROOT, or file:///path) or an S3-compatible bucket (config/storage.py).
MEDIA_STORAGE_URL = env("MEDIA_STORAGE_URL", default="")
STORAGES = {
    "default": storage_from_url(MEDIA_STORAGE_URL),
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Proxies in front of the web process that append to X-Forwarded-For (0: clients connect directly).
# Login lockout and API throttling count per client address, so this must be right behind a proxy.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)

# Login protection (django-axes) on the login page, the admin and POST /api/token/: after
# LOGIN_FAILURE_LIMIT failed passwords for one account from one address, or from one address, that
# pair or address is locked for LOGIN_LOCKOUT_MINUTES (each further failure restarts the wait). An
# account is locked for everyone only after LOGIN_ACCOUNT_FAILURE_LIMIT failures, and never at an
# address it has logged in from before (accounts/lockout.py). Admins see failed logins and unlock under Admin > Axes.
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
LOGIN_ACCOUNT_FAILURE_LIMIT = env.int("LOGIN_ACCOUNT_FAILURE_LIMIT", default=100)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = "accounts.lockout.lockout_parameters"
AXES_CLIENT_IP_CALLABLE = "accounts.lockout.client_address"
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"
AXES_ENABLE_ACCESS_FAILURE_LOG = True
AXES_VERBOSE = False  # no banner on every command; events go to the log

# API tokens (django-rest-knox): stored as SHA-512 hashes, each with a name, an expiry and its last use.
API_TOKEN_TTL_DAYS = env.int("API_TOKEN_TTL_DAYS", default=90)
API_TOKEN_MAX_TTL_DAYS = env.int("API_TOKEN_MAX_TTL_DAYS", default=365)
API_TOKEN_LIMIT_PER_USER = env.int("API_TOKEN_LIMIT_PER_USER", default=20)
KNOX_TOKEN_MODEL = "accounts.ApiToken"
# knox's migrations would create the table of its own token model, which ApiToken replaces.
MIGRATION_MODULES = {"knox": None}
REST_KNOX = {
    "TOKEN_MODEL": KNOX_TOKEN_MODEL,
    "AUTH_HEADER_PREFIX": "Token",
    "TOKEN_TTL": timedelta(days=API_TOKEN_TTL_DAYS),
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Requests per client: anonymous ones per address, authenticated ones per account; `token` is
    # POST /api/token/ per address. Counts live in the cache: set CACHE_URL for several processes.
    "DEFAULT_THROTTLE_CLASSES": ["accounts.throttling.AnonRateThrottle", "accounts.throttling.UserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env("API_THROTTLE_ANON", default="60/minute"),
        "user": env("API_THROTTLE_USER", default="1200/minute"),
        "token": env("API_THROTTLE_TOKEN", default="10/minute"),
    },
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    "DEFAULT_PARSER_CLASSES": [
        "trajectories.parsers.JSONParser",  # lone surrogates replaced in every JSON body
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "infrastructure.api.OrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "infrastructure.api.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "infrastructure.api.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "infrastructure.api_schema.AutoSchema",
}
# The OpenAPI schema at /api/schema/ and its docs page at /api/docs/ (Swagger UI served locally, no CDN).
SPECTACULAR_SETTINGS = {
    "TITLE": "Trajscope API",
    "DESCRIPTION": (
        "Upload agent runs, record gold steps, evaluate, and read scores, aggregates, leaderboards, "
        "comparisons and exports. Authenticate with `Authorization: Token <token>` (a token made on the "
        "API tokens page, or by POST /api/token/; each expires) or a session. Requests are rate-limited "
        "(429 with Retry-After). Every error answers with `detail` (a sentence) and `code` (a stable word); "
        "validation errors add `errors`, a map from field path (`steps[2].text`) to its message."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SCHEMA_PATH_PREFIX": "/api/",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "TAGS": [
        {"name": "tasks", "description": "Benchmark tasks and their published evaluation configs."},
        {"name": "runs", "description": "Agent runs: list, read, upload (import) and import jobs."},
        {"name": "trajectories", "description": "What a run did on a task, step by step."},
        {"name": "gold", "description": "Human gold trajectories, their review, and task requirements."},
        {"name": "judges", "description": "Judge configurations (admins) and judge decisions (reviewers audit)."},
        {"name": "evaluations", "description": "Evaluation jobs: start, follow, cancel, re-run."},
        {"name": "results", "description": "Scores, aggregates, the leaderboard and run comparisons."},
        {"name": "exports", "description": "CSV / JSON downloads with documented columns, and the gold dataset."},
        {"name": "token", "description": "Get a new API token (shown once; revoke it on the API tokens page)."},
    ],
}
# Computed reports (leaderboard, comparisons, plots) are cached here. Several web or worker
# processes share them only through a shared cache: CACHE_URL=redis://127.0.0.1:6379/1.
CACHES = {"default": env.cache_url("CACHE_URL", default="locmemcache://")}
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    # A Redis that is down answers as an empty cache instead of failing requests (infrastructure/cache.py).
    CACHES["default"]["BACKEND"] = "infrastructure.cache.OptionalRedisCache"

# Anonymous visitors may read the leaderboard; off: accounts only.
PUBLIC_LEADERBOARD = env.bool("PUBLIC_LEADERBOARD", default=False)

# Background work. No broker configured means tasks run in-process, synchronously.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
if CELERY_TASK_ALWAYS_EAGER:
    CELERY_BROKER_URL = "memory://localhost/"  # a host named, so that kombu has nothing to warn about
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
if CELERY_BROKER_URL.startswith("filesystem://"):
    # A broker made of files: lets a worker process run beside the embedded defaults (and tests).
    _broker_folder = str(env.path("CELERY_BROKER_FOLDER", default=VAR_DIR / "broker"))
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": _broker_folder, "data_folder_out": _broker_folder, "control_folder": _broker_folder,
        "store_processed": False,
    }
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_TASK_DEFAULT_QUEUE", default="celery")
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Prometheus scrapes /metrics with this bearer token; unset: only from this machine, counting
# TRUSTED_PROXY_COUNT (config/monitoring.py). Production refuses to start without it while METRICS_ENABLED.
METRICS_TOKEN = env("METRICS_TOKEN", default="")
METRICS_ENABLED = env.bool("METRICS_ENABLED", default=True)
# /metrics asks the broker for its queue depth with this timeout, and reuses the answer this long.
METRICS_BROKER_TIMEOUT = env.float("METRICS_BROKER_TIMEOUT", default=0.5)
METRICS_BROKER_CACHE = env.float("METRICS_BROKER_CACHE", default=15.0)

# Unfinished jobs one account may have at once, by kind (admins: no limit); 0 = no limit.
JOB_LIMITS_PER_ACCOUNT = {
    "import": env.int("MAX_IMPORTS_PER_ACCOUNT", default=5),
    "evaluation": env.int("MAX_EVALUATIONS_PER_ACCOUNT", default=3),
    "outcome judging": env.int("MAX_OUTCOME_JOBS_PER_ACCOUNT", default=3),
    "failure attribution": env.int("MAX_ATTRIBUTION_JOBS_PER_ACCOUNT", default=3),
}
# Jobs whose queue message is missing are sent again by a sweeper in every worker (config/jobs.py).
JOB_SWEEP_INTERVAL = env.float("JOB_SWEEP_INTERVAL", default=15.0)  # seconds; 0 turns the sweeper off
JOB_REDISPATCH_AFTER = env.float("JOB_REDISPATCH_AFTER", default=60.0)  # silent this long + empty queue: resend
JOB_STALLED_AFTER = env.float("JOB_STALLED_AFTER", default=120.0)  # silent this long: shown stalled, retry offered
# Chart jobs once finished are read no more (the image is in the cache): removed this long after they finish.
PLOT_JOBS_KEPT_HOURS = env.float("PLOT_JOBS_KEPT_HOURS", default=24.0)
REDIS_URL = env("REDIS_URL", default=CELERY_BROKER_URL if CELERY_BROKER_URL.startswith("redis") else "")

# Judges.
JUDGE_BACKEND = env("JUDGE_BACKEND", default="offline")
JUDGE_MODEL = env("JUDGE_MODEL", default="gpt-4o-mini")
OPENAI_BASE_URL = env("OPENAI_BASE_URL", default="https://api.openai.com/v1")
OPENAI_API_KEY = env("OPENAI_API_KEY", default="")
# LLM judge requests (a JudgeConfig's `options` override these per judge).
JUDGE_TIMEOUT = env.float("JUDGE_TIMEOUT", default=60.0)
JUDGE_MAX_RETRIES = env.int("JUDGE_MAX_RETRIES", default=4)
JUDGE_CONCURRENCY = env.int("JUDGE_CONCURRENCY", default=8)
JUDGE_REQUESTS_PER_MINUTE = env.int("JUDGE_REQUESTS_PER_MINUTE", default=500)  # all workers together; 0 = no limit
# USD per million tokens, by model; a model not listed (e.g. self-hosted) is recorded at cost 0.
# `image_tokens`: how the model counts an image's prompt tokens ({"base", "tile"} of OpenAI's tile rule;
# 85 and 170 when not given), for the outcome judge's cost estimate.
JUDGE_PRICES = env.json(
    "JUDGE_PRICES",
    default={
        "gpt-4o-mini": {"input": 0.15, "output": 0.60, "image_tokens": {"base": 2833, "tile": 5667}},
        "gpt-4o": {"input": 2.50, "output": 10.00},
        "gpt-4.1-mini": {"input": 0.40, "output": 1.60},
        "gpt-4.1": {"input": 2.00, "output": 8.00},
    },
)

# Uploads of agent runs (checked by the ingestion service, not only by Django).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FILES = env.int("UPLOAD_MAX_FILES", default=1000)
# Trajectory ingestion limits, applied to every import (command line, upload page, API).
INGEST_MAX_UPLOAD_BYTES = env.int("INGEST_MAX_UPLOAD_BYTES", default=2 * 1024**3)  # files as uploaded
INGEST_MAX_FILES = env.int("INGEST_MAX_FILES", default=5000)  # counting the files inside zips
INGEST_MAX_UNCOMPRESSED_BYTES = env.int("INGEST_MAX_UNCOMPRESSED_BYTES", default=16 * 1024**3)
INGEST_MAX_FILE_BYTES = env.int("INGEST_MAX_FILE_BYTES", default=64 * 1024**2)  # one file, or one JSONL line
INGEST_MAX_COMPRESSION_RATIO = env.float("INGEST_MAX_COMPRESSION_RATIO", default=100.0)
# Exports (CSV/JSON of scores, judge decisions, aggregates) stream; one over this many rows is refused,
# and a text longer than EXPORT_MAX_TEXT_CHARS is cut there, with its length and SHA-256.
EXPORT_MAX_ROWS = env.int("EXPORT_MAX_ROWS", default=1_000_000)
EXPORT_MAX_TEXT_CHARS = env.int("EXPORT_MAX_TEXT_CHARS", default=10_000)
# Steps of one trajectory (published WebArena runs stop at 30 to 100): pages, exports and judges grow with them.
INGEST_MAX_STEPS = env.int("INGEST_MAX_STEPS", default=1000)
# A worker's import of more render files than this is split into chunks of as many, imported by any worker;
# a chunk that fails is retried alone, after IMPORT_CHUNK_RETRY_SECONDS, then twice as long each time.
IMPORT_CHUNK_FILES = env.int("IMPORT_CHUNK_FILES", default=500)
IMPORT_CHUNK_RETRIES = env.int("IMPORT_CHUNK_RETRIES", default=3)
IMPORT_CHUNK_RETRY_SECONDS = env.float("IMPORT_CHUNK_RETRY_SECONDS", default=5.0)
# Steps the trajectory page shows at first; the next ones load a page at a time as the reader scrolls.
TRAJECTORY_STEPS_PER_PAGE = env.int("TRAJECTORY_STEPS_PER_PAGE", default=50)
# Steps in one page of GET /api/trajectories/<id>/ (?steps_page=, ?steps_page_size= up to this):
# every trajectory within INGEST_MAX_STEPS comes whole, as before.
API_STEPS_PAGE_SIZE = env.int("API_STEPS_PAGE_SIZE", default=1000)
# Processes that parse the files of one import while the importing process stores them; 1 parses in-process.
INGEST_WORKERS = env.int("INGEST_WORKERS", default=os.cpu_count() or 1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}
