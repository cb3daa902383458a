#!/usr/bin/env python3
"""Schemathesis against a live FormFlow on PostgreSQL: the OpenAPI schema must tell the truth.

    python3 scripts/schema_check.py --database-url URL --redis-url URL [--max-examples N]

Migrates a throwaway database, seeds an owner (a session token), a form with a submission and
an API key for it, starts the Procfile's web line (as production runs it), and runs
``schemathesis run`` on /api/schema/ with every check and every phase, stateful included. Its
settings, and each operation left out with the reason, are in schemathesis.toml at the root;
what the schema says but JSON Schema cannot check is in scripts/schema_hooks.py.
Exits non-zero on any failure: a server error, a status code or header the schema does not
list, a response that breaks its schema, or a request valid by the schema that is refused.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import smoke  # scripts/smoke.py, beside this file
import stack

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv-dev" / "bin"

SEED = """
import json
from accounts.models import User
from accounts.services import token_for
from forms_app.services import form_create
from integrations.models import Delivery, DeliveryState
from integrations.services import integration_create
from pullapi.services import api_key_create
from submissions.intake.store import submission_create
owner = User.objects.create_user(email="schema@example.com", password="correct-horse-battery",
                                 is_verified=True)
form = form_create(owner=owner, name="Contact", rate_limit=10_000)
integration_create(owner=owner, type="WEBHOOK", config={"url": "https://hooks.example.com/in"})
submission = submission_create(form=form, data=[["name", "Ada"], ["email", "ada@example.com"]],
                               ip=None, user_agent="", origin="")
delivery = Delivery.objects.get(submission=submission, integration__type="WEBHOOK")
Delivery.objects.filter(pk=delivery.pk).update(state=DeliveryState.FAILED, attempts=8,
                                               last_error="HTTP 500")
_, key = api_key_create(owner=owner, name="schema", forms=[str(form.pk)])
print(json.dumps({"token": str(token_for(owner)), "key": key, "slug": form.slug,
                  "form": str(form.pk), "submission": str(submission.pk),
                  "delivery": str(delivery.pk)}))
"""


def environment(args: argparse.Namespace, work: Path, base: str) -> dict:
    return smoke.production_env(
        args, work, base,
        # Every request comes from one address: the limits meant for strangers would turn most
        # of the run into 429s, which the schema lists but which test nothing else.
        PULL_REQUESTS_PER_MINUTE="100000",
        AUTH_REQUESTS_PER_MINUTE="100000",
        DEFAULT_MONTHLY_SUBMISSION_LIMIT="10000000",
        # So the Google endpoints do their work (a consent URL is made locally) rather than
        # answer 503 google_not_configured to every request.
        GOOGLE_OAUTH_CLIENT_ID="schema-check.apps.googleusercontent.com",
        GOOGLE_OAUTH_CLIENT_SECRET="schema-check-secret",
    )


def seed(env: dict) -> dict:
    subprocess.run([BIN / "python", "manage.py", "migrate", "--no-input"], cwd=ROOT, env=env,
                   check=True, stdout=subprocess.DEVNULL)
    output = subprocess.run([BIN / "python", "manage.py", "shell", "-c", SEED], cwd=ROOT,
                            env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--max-examples", type=int, default=None,
                        help="override schemathesis.toml's examples per operation")
    parser.add_argument("--include-path-regex", default=None,
                        help="test only the operations whose path matches")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="formflow-schema-"))
    port = stack.free_port()
    base = f"http://127.0.0.1:{port}"
    env = environment(args, work, base)
    seeded = seed(env)
    run_env = {**env, "FORMFLOW_TOKEN": seeded["token"], "FORMFLOW_API_KEY": seeded["key"],
               "FORMFLOW_SLUG": seeded["slug"], "FORMFLOW_FORM": seeded["form"],
               "FORMFLOW_SUBMISSION": seeded["submission"],
               "FORMFLOW_DELIVERY": seeded["delivery"],
               "SCHEMATHESIS_HOOKS": str(ROOT / "scripts" / "schema_hooks.py")}
    command = [BIN / "schemathesis", "--config-file", ROOT / "schemathesis.toml", "run",
               f"{base}/api/schema/", "--url", base]
    if args.max_examples:
        command += ["--max-examples", str(args.max_examples)]
    if args.include_path_regex:
        command += ["--include-path-regex", args.include_path_regex]
    with ExitStack() as processes:
        web = processes.enter_context(stack.started(
            stack.command("web", {**env, "PORT": str(port)}, BIN), env, work / "gunicorn.log",
            "gunicorn"))
        stack.wait_until_up(base, [web])
        result = subprocess.run([str(part) for part in command], cwd=ROOT, env=run_env)
    if result.returncode:
        print((work / "gunicorn.log").read_text()[-5000:], file=sys.stderr)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
