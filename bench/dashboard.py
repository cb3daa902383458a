"""The owner's dashboard pages on a big form, over HTTP, on the production setup.

    python3 bench/dashboard.py [--rows 100000]

The production setup of bench/load.py (PostgreSQL, Redis, gunicorn 2 x 4 threads). One form
holds --rows submissions spread over the last 29 days (a second form as many), seeded in SQL
and vacuumed, with the folder counts' checkpoints where the hourly job leaves them. Each page
is requested with the owner's session cookie; it prints the median and the slowest of 10
requests, in milliseconds, measured by the client on the same
machine (so the server's time plus a loopback round trip), after WARM_UP requests:

- the forms list (/dashboard/): folder sizes, the 30-day chart, the newest submission and
  the integrations' health of every form;
- the form's page: its first page, a page in the middle and its last page of the inbox;
- one submission's page with its delivery ledger;
- searches of the form's page (submissions/search/): text in one row, text in every row (its
  count stops at 1,000), text in no row, text in every row within the last 7 days, and the
  export of what one search matches.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import exports
import load
import stack  # scripts/stack.py, on the path load.py set

SPREAD = exports.SEED.replace("now() - interval '30 days' + n * interval '1 ms'",
                              "now() - interval '29 days' + n * (interval '29 days' / {rows})")
CHECKPOINTS = """
from forms_app.models import Form
from submissions import folders
folders.advance_all(Form.objects.values_list("pk", flat=True))
"""
PAGE_SIZE = 20  # dashboard/views/form_sections.py
# Each of the 2 web processes loads its templates and opens its connections on its first
# request of a page: a few requests first, so both have, as in a server that has run a while.
WARM_UP = 4
FIRST_SUBMISSION = ("SELECT id FROM submissions_submission WHERE form_id = '{form}' "
                    "ORDER BY submitted_at DESC LIMIT 1")


def page(url: str, token: str) -> dict:
    request = urllib.request.Request(url, headers={"Cookie": f"ff_token={token}"})

    def fetch() -> None:
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
            assert response.status == 200, url

    return stack.timed(fetch, 10, warm_up=WARM_UP)


def main() -> None:
    args, work, port, base, env = exports.big_form_setup(__doc__, 100_000, "dashboard")
    load.sql(env, SPREAD.format(rows=args.rows))
    # As autovacuum leaves a table some minutes after a bulk load: the visibility map set, so
    # counting a range of the index need not visit the rows.
    load.sql(env, "VACUUM ANALYZE submissions_submission")
    load.manage(env, "shell", "-c", CHECKPOINTS)
    form, token, _key = load.manage(env, "shell", "-c", exports.CREDENTIALS).split()[-3:]
    submission = subprocess.run(
        ["psql", "-At", env["DATABASE_URL"], "-c", FIRST_SUBMISSION.format(form=form)],
        check=True, capture_output=True, text=True).stdout.strip()
    last_page = -(-args.rows // PAGE_SIZE)
    week_ago = (datetime.now(UTC) - timedelta(days=6)).date().isoformat()
    service = load.servers(args, env, port, None)
    report: dict = {"rows": args.rows}
    with ExitStack() as running:
        running.enter_context(stack.started(service["commands"]["web"], service["env"],
                                            work / "web.log"))
        stack.wait_for_answer(base + "/healthz")
        pages = {
            "forms_list": "/dashboard/",
            "form_page_1": f"/dashboard/forms/{form}",
            "form_page_middle": f"/dashboard/forms/{form}?page={last_page // 2}",
            "form_page_last": f"/dashboard/forms/{form}?page={last_page}",
            "submission": f"/dashboard/forms/{form}/submissions/{submission}",
            "search_one_row": f"/dashboard/forms/{form}?q=ada{args.rows // 2}%40",
            "search_every_row": f"/dashboard/forms/{form}?q=LOVELACE",
            "search_no_row": f"/dashboard/forms/{form}?q=zqx",
            "search_every_row_last_7_days": (
                f"/dashboard/forms/{form}?q=lovelace&first_day={week_ago}"),
            "search_export_csv": f"/dashboard/forms/{form}/export?format=csv&q=number+9999",
        }
        for name, path in pages.items():
            report[name] = page(base + path, token)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
