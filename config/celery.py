import contextlib
import logging
import os
import signal
import threading
import time

from celery import Celery, signals
from django import db

from config.boot import load_settings
from operations.workers import WorkerHeartbeat

load_settings()
app = Celery("formflow")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(related_name="jobs")  # jobs that span apps (integrations/jobs.py)

# Each worker stamps its heartbeat from its own timer (/status's workers).
app.steps["worker"].add(WorkerHeartbeat)


def _log_as_django_does(loglevel=None, **_kwargs) -> None:
    """The worker and beat log through Django's LOGGING, so LOG_FORMAT=json holds for them as
    for the web processes; the level comes from --loglevel as before. Applied at import too,
    so what Celery warns before it sets up logging (running as root) is a log line already."""
    import logging.config

    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    logging.captureWarnings(True)  # as Django's own set-up does: warnings are log lines too
    if loglevel:
        logging.getLogger().setLevel(loglevel)


# Connected, it replaces Celery's own logging set-up.
signals.setup_logging.connect(_log_as_django_does)
_log_as_django_does()


@signals.task_prerun.connect
@signals.task_postrun.connect
def _close_old_connections(sender=None, **_kwargs) -> None:
    """Between tasks, what Django does between requests: drop only broken or expired
    connections, so a worker reuses one connection for many deliveries. A task run eagerly
    belongs to its caller's connection and transaction, which are left alone."""
    if sender is not None and getattr(sender.request, "is_eager", False):
        return
    db.close_old_connections()


@signals.worker_init.connect
@signals.beat_init.connect
def _bounded_sessions(**_kwargs) -> None:
    """Before the pool starts, so every pool (prefork, threads, solo) and the beat inside the
    worker inherit it, and in a beat of its own: a worker's session cannot hold locks forever
    (core/infra/dbtimeouts.py)."""
    from core.infra.dbtimeouts import bound_worker_sessions

    bound_worker_sessions()


@signals.worker_init.connect
def _yield_to_intake(**_kwargs) -> None:
    """Delivery takes only the CPU that intake leaves, where both share a machine (dev.py
    start, one-box installs): deliveries wait durably in the outbox, a visitor posting a form
    does not. Set in the worker's main process before its pool starts, so the pool, the
    embedded beat and the consumer all inherit it. Under a flood intake keeps its pace and
    deliveries run in the gaps, catching up when it ends; on a machine of their own workers
    run at full speed all the same. CELERY_WORKER_NICE=0 turns it off."""
    from django.conf import settings

    os.nice(settings.CELERY_WORKER_NICE)
    if settings.CELERY_WORKER_NICE and os.getsid(0) == os.getpid():
        _lower_session_group(settings.CELERY_WORKER_NICE)


def _lower_session_group(nice: int) -> None:
    """Where Linux groups processes by session for the scheduler (autogroup, on by default
    on many distributions), a process's nice orders it only within its own session: a worker
    that leads a session of its own (a systemd unit, a process manager's child) would still
    take its full share against the web's session. The group's nice ranks the session as a
    whole; raising it needs no privilege. Nothing to do where autogroup is off or absent."""
    try:
        with open("/proc/self/autogroup", "w") as group:
            group.write(str(nice))
    except FileNotFoundError:
        pass
    except OSError as error:
        logging.getLogger(__name__).info("The worker's session group keeps its priority: %s",
                                         error)


# --- Stopping in time (contract, Operations: "Stopping is graceful") -------------------------
# A worker told to stop (SIGTERM, to its main process or to its whole group) starts no new
# delivery attempt, hands back what it claimed, lets the attempts in flight end (each within
# its 10 s deadline) and exits within WORKER_STOP_SECONDS (core/infra/stopping.py). Celery's
# warm shutdown alone waited for the running task, whatever it still meant to do.


def _stop_seconds() -> float:
    from django.conf import settings

    return float(settings.WORKER_STOP_SECONDS)


def _stop_requested(*_args) -> None:
    from core.infra import stopping

    stopping.request(_stop_seconds())


@signals.worker_process_init.connect
def _fresh_pool_process(**_kwargs) -> None:
    from core.infra import stopping

    stopping.forget()  # a request it inherited (if any) was its parent's


@signals.task_prerun.connect
def _pool_process_stops_gracefully(**_kwargs) -> None:
    """A pool process hears of the stop from its main process, or directly from a SIGTERM
    sent to the whole group (systemd's default): either way it finishes what it has in
    flight instead of dying on the spot, which would send those attempts again later.
    billiard sets its own handler (exit at once) after worker_process_init, so this one is
    set before a task runs. Only in a pool process: the main process keeps Celery's."""
    import billiard.process  # type: ignore[import-untyped]

    if billiard.process.current_process()._name == "MainProcess":
        return
    if signal.getsignal(signal.SIGTERM) is not _stop_requested:
        signal.signal(signal.SIGTERM, _stop_requested)


@signals.worker_shutting_down.connect
def _stop_in_time(**_kwargs) -> None:
    """In the main process: the tasks it runs itself (solo and thread pools) hear of the stop,
    the pool's processes are told, and whatever still runs a moment before
    WORKER_STOP_SECONDS is killed, so the worker exits in time whatever a task does (its
    leases hand its deliveries on)."""
    import billiard.process

    from core.infra import stopping

    seconds = _stop_seconds()
    stopping.request(seconds)
    children = billiard.process.active_children()
    for child in children:
        with contextlib.suppress(OSError):
            os.kill(child.pid, signal.SIGTERM)
    timer = threading.Timer(max(seconds - 1.5, 0.0), _kill_what_is_left, [children])
    timer.daemon = True
    timer.start()


def _kill_what_is_left(children: list) -> None:
    logging.getLogger(__name__).warning("The worker did not stop in time: killing it")
    for child in children:
        with contextlib.suppress(OSError):
            os.kill(child.pid, signal.SIGKILL)
    time.sleep(1.0)  # the main process ends by itself once its pool has
    os._exit(1)


@signals.worker_process_shutdown.connect
@signals.worker_shutdown.connect
def _slow_lane_ends(**_kwargs) -> None:
    """A process's slow lane (a thread of its own) ends with its attempt in flight before
    the process does."""
    from integrations.delivery import worker

    worker.lane.finish()


@signals.worker_process_init.connect
def _asynchronous_commits(**_kwargs) -> None:
    """A worker's writes commit without waiting for the disk (core/infra/dbtimeouts.py)."""
    from core.infra.dbtimeouts import commit_worker_writes_asynchronously

    commit_worker_writes_asynchronously()


# The sweep runs every 5 seconds; Celery writes three INFO lines for each run (beat sends it,
# the worker receives it, it succeeds). Those lines say nothing unless someone is debugging,
# and they pushed everything else (a verification code printed to the console) off the screen.
# Beat's routine ticks (every few seconds) would scroll a verification code off a console.
ROUTINE_TASKS = (
    "integrations.tasks.sweep_deliveries", "sweep-deliveries",
    "submissions.tasks.place_in_feed", "place-in-feed",
)
CELERY_LOGGERS = ("celery.beat", "celery.worker.strategy", "celery.app.trace")


class RoutineAtDebug(logging.Filter):
    """Celery's INFO lines about a routine task, written at DEBUG instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        message = record.getMessage()
        if not any(name in message for name in ROUTINE_TASKS):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


for _name in CELERY_LOGGERS:
    logging.getLogger(_name).addFilter(RoutineAtDebug())
