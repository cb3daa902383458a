"""/status and ``manage.py status``: the whole installation, for alerting (contract,
"Operations").

- ``unavailable``: submissions cannot be taken: the database cannot be reached or this
  release's migrations are not applied.
- ``degraded``: submissions are taken and kept, but something behind them is down or late:
  Redis, the broker, beat, the workers, the delivery backlog or the mail server. Nothing is
  lost (deliveries wait in the outbox), but it needs an operator.
- ``ok``: every check passes.
"""

from __future__ import annotations

from typing import Any

import formflow
from operations import readiness

CHECKS = {
    "database": readiness.database,
    "redis": readiness.redis,
    "broker": readiness.broker,
    "beat": readiness.beat,
    "workers": readiness.workers,
    "deliveries": readiness.deliveries,
    "mail": readiness.mail,
}
# Read from the database: without it they would only repeat its error.
NEEDS_DATABASE = ("beat", "workers", "deliveries", "mail")


def report() -> dict[str, Any]:
    checks: dict[str, readiness.Check] = {}
    for name, check in CHECKS.items():
        if name in NEEDS_DATABASE and "error" in checks["database"]:
            checks[name] = {"ok": False, "error": "database unavailable"}
        else:
            checks[name] = readiness.run(name, check)
    return {"status": verdict(checks), "version": formflow.version(), "checks": checks}


def verdict(checks: dict[str, readiness.Check]) -> str:
    if not checks["database"]["ok"]:
        return "unavailable"
    if all(check["ok"] for check in checks.values()):
        return "ok"
    return "degraded"
