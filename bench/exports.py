"""Exports and the bulk sync of a big form, over HTTP, against PostgreSQL's own COPY.

    python3 bench/exports.py [--rows 1000000]

The production setup of bench/load.py (PostgreSQL, Redis, gunicorn 2 x 4 threads). One form
holds --rows submissions of five fields (a second form as many, so the index has to pick one
out), seeded in SQL and ANALYZEd. In the same run it times PostgreSQL's COPY of the same rows
(id, submitted_at, data, in export order) to /dev/null, then each of CSV export, JSON export
and the NDJSON bulk sync read whole over HTTP. For each: rows a second and the ratio to COPY,
the time to the first byte, PostgreSQL's temporary-file bytes (pg_stat_database.temp_bytes)
before and after, and the web processes' largest resident memory while it ran.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load

SEED = """
INSERT INTO forms_app_form (id, owner_id, slug, name, allowed_origins, rate_limit,
    captcha_provider, recaptcha_secret_encrypted, spam_filter, blocked_words, field_names,
    created_at, updated_at)
SELECT gen_random_uuid(), owner_id, 'other' || substr(md5(random()::text), 1, 8), 'Other', '[]',
       10, 'recaptcha', '', true, '[]', '[]', now(), now()
FROM forms_app_form LIMIT 1;
UPDATE forms_app_form SET field_names = '["name", "email", "company", "message", "n"]';
INSERT INTO submissions_submission (id, form_id, data, ip, user_agent, origin, status,
                                    submitted_at)
SELECT gen_random_uuid(), f.id,
       jsonb_build_array(jsonb_build_array('name', 'Ada Lovelace'),
                         jsonb_build_array('email', 'ada' || n || '@example.com'),
                         jsonb_build_array('company', 'Analytical Engines Ltd'),
                         jsonb_build_array('message', 'Hello there, a sentence or two of text '
                                           || 'as contact forms carry, number ' || n),
                         jsonb_build_array('n', n)),
       '203.0.113.5', 'bench', '', 'inbox', now() - interval '30 days' + n * interval '1 ms'
FROM forms_app_form f, generate_series(1, {rows}) AS n;
ANALYZE;
"""

CREDENTIALS = """
from accounts.models import User
from accounts.services import token_for
from forms_app.models import Form
from pullapi.services import api_key_create
owner = User.objects.get()
form = Form.objects.exclude(name="Other").get()
print(form.pk, str(token_for(owner)), api_key_create(owner=owner, name="bench",
      forms=[str(form.pk)])[1])
"""

COPY = ("\\copy (SELECT id, submitted_at, data FROM submissions_submission WHERE form_id = "
        "'{form}' AND status = 'inbox' ORDER BY submitted_at, id) TO '/dev/null' WITH CSV")


def temp_bytes(env: dict) -> int:
    out = subprocess.run(
        ["psql", "-At", env["DATABASE_URL"], "-c",
         "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()"],
        check=True, capture_output=True, text=True).stdout
    return int(out.strip())


class PeakMemory(threading.Thread):
    """The largest resident set of the web processes, sampled every 0.1 s."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pids = load.descendants(pid)
        self.peak_kib = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            for pid in self.pids:
                try:
                    text = Path(f"/proc/{pid}/status").read_text()
                except FileNotFoundError:
                    continue
                rss = int(text.split("VmRSS:")[1].split()[0])
                self.peak_kib = max(self.peak_kib, rss)
            time.sleep(0.1)


def read_whole(url: str, headers: dict) -> dict:
    request = urllib.request.Request(url, headers=headers)
    began = time.monotonic()
    first_byte, size, newlines = None, 0, 0
    with urllib.request.urlopen(request, timeout=600) as response:
        while chunk := response.read(1 << 16):
            if first_byte is None:
                first_byte = time.monotonic() - began
            size += len(chunk)
            newlines += chunk.count(b"\n")
    return {"seconds": time.monotonic() - began, "first_byte_s": first_byte, "bytes": size,
            "newlines": newlines}


def measure(env: dict, web_pid: int, url: str, headers: dict, rows: int, copy_rate: float
            ) -> dict:
    memory = PeakMemory(web_pid)
    memory.start()
    before = temp_bytes(env)
    result = read_whole(url, headers)
    memory.done.set()
    memory.join()
    rate = rows / result["seconds"]
    return {
        "rows_per_second": round(rate),
        "ratio_to_copy": round(rate / copy_rate, 2),
        "first_byte_s": round(result["first_byte_s"], 3),
        "seconds": round(result["seconds"], 2),
        "megabytes": round(result["bytes"] / 1e6, 1),
        "temp_bytes_written": temp_bytes(env) - before,
        "web_peak_rss_mib": round(memory.peak_kib / 1024, 1),
        "lines": result["newlines"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = argparse.Namespace(setup="production", accounts=1, server="edge",
                              **vars(parser.parse_args()))
    work = Path(tempfile.mkdtemp(prefix="formflow-exports-"))
    port = load.free_port()
    base = f"http://127.0.0.1:{port}"
    env, _ = load.prepare(args, work, load.free_port())
    seeded = time.monotonic()
    load.sql(env, SEED.format(rows=args.rows))
    report: dict = {"rows": args.rows, "seed_seconds": round(time.monotonic() - seeded, 1)}
    form, token, key = load.manage(env, "shell", "-c", CREDENTIALS).split()[-3:]
    began = time.monotonic()
    subprocess.run(["psql", "-q", env["DATABASE_URL"], "-c", COPY.format(form=form)],
                   check=True)
    copy_rate = args.rows / (time.monotonic() - began)
    report["copy_rows_per_second"] = round(copy_rate)
    service = load.servers(args, env, port, None)
    with ExitStack() as stack:
        web = stack.enter_context(load.process(service["commands"]["web"], service["env"],
                                               work / "web.log"))
        load.wait_up(base + "/healthz")
        owner = {"Authorization": f"Bearer {token}"}
        puller = {"Authorization": f"Bearer {key}"}
        targets = {
            "csv": (f"{base}/api/v1/forms/{form}/export?format=csv", owner),
            "json": (f"{base}/api/v1/forms/{form}/export?format=json", owner),
            "ndjson_stream": (f"{base}/api/v1/submissions/stream?formId={form}", puller),
        }
        for name, (url, headers) in targets.items():
            report[name] = measure(env, web.pid, url, headers, args.rows, copy_rate)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
