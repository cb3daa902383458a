"""A big form read whole and deep, over HTTP, against PostgreSQL's own figures.

    python3 bench/exports.py [--rows 1000000]

The production setup of bench/load.py (PostgreSQL, Redis, gunicorn 2 x 4 threads). One form
holds --rows submissions of five fields (a second form as many, so the index has to pick one
out), seeded in SQL and ANALYZEd. In the same run it times PostgreSQL's COPY of the same rows
(id, submitted_at, data, in export order) to /dev/null, then reads over HTTP:

- the CSV export, the JSON export and the NDJSON bulk sync, whole: rows a second and the ratio
  to COPY, the time to the first byte, PostgreSQL's temporary-file bytes
  (pg_stat_database.temp_bytes) before and after, the web processes' largest resident memory;
- a full pull API walk, 100 rows a page, oldest first, with the key's rate limit lifted: rows
  a second, against the same keyset queries run straight in psql;
- pages of the owner's list (100 a page): page 1, the middle, page 9,000 and the last, the
  median of 5 requests each.

Every read is checked against the database: each row's id in the database's order, and the
seeded row number in its fields, so a repeated, missing or misplaced row fails the run.
"""

from __future__ import annotations

import argparse
import csv
import http.client
import json
import mmap
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import uuid
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load
import stack  # scripts/stack.py, on the path load.py set

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


IDS_SQL = ("SELECT id FROM submissions_submission WHERE form_id = '{form}' AND status = 'inbox' "
           "ORDER BY submitted_at, id")
# The pull API's keyset queries run in the database alone: 101 rows a page, past the last.
WALK_SQL = """
DO $$
DECLARE last_at timestamptz := '-infinity'; last_id uuid := '{zero}'; got int; r record;
BEGIN
  LOOP
    got := 0;
    FOR r IN SELECT id, submitted_at, data FROM submissions_submission
             WHERE form_id = '{form}' AND status = 'inbox' AND submitted_at >= last_at
               AND (submitted_at > last_at OR id > last_id)
             ORDER BY submitted_at, id LIMIT 101 LOOP
      got := got + 1;
      IF got <= 100 THEN last_at := r.submitted_at; last_id := r.id; END IF;
    END LOOP;
    EXIT WHEN got <= 100;
  END LOOP;
END $$;
"""
ROW_ID = re.compile(rb'"id"\s*:\s*"([0-9a-f-]{36})"')
ROW_N = re.compile(rb'"n"\s*:\s*(\d+)')


def database_ids(env: dict, form: str) -> list[str]:
    return subprocess.run(["psql", "-At", env["DATABASE_URL"], "-c", IDS_SQL.format(form=form)],
                          check=True, capture_output=True, text=True).stdout.split()


def psql_seconds(env: dict, statement: str) -> float:
    began = time.monotonic()
    subprocess.run(["psql", "-q", env["DATABASE_URL"], "-c", statement], check=True)
    return time.monotonic() - began


def exact(ids: list[str], got_ids: list[str], got_numbers: list[int]) -> bool:
    """The rows the database holds, each once, in its order (the seeded n counts from 1)."""
    return got_ids == ids and got_numbers == list(range(1, len(ids) + 1))


def check_json(path: Path, ids: list[str]) -> bool:
    with path.open("rb") as body, mmap.mmap(body.fileno(), 0, access=mmap.ACCESS_READ) as text:
        got = [match.decode() for match in ROW_ID.findall(text)]
        numbers = [int(match) for match in ROW_N.findall(text)]
    return exact(ids, got, numbers)


def check_csv(path: Path, ids: list[str]) -> bool:
    with path.open(newline="", encoding="utf-8") as body:
        rows = csv.reader(body)
        if next(rows) != ["id", "submittedAt", "name", "email", "company", "message", "n"]:
            return False
        got, numbers = [], []
        for row in rows:
            got.append(row[0])
            numbers.append(int(row[-1]))
    return exact(ids, got, numbers)


def pull_walk(base: str, form: str, key: str, ids: list[str], database_seconds: float) -> dict:
    """Every row through the pull API, 100 a page, oldest first, over one connection."""
    address = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    headers = {"Authorization": f"Bearer {key}"}
    got, numbers, pages, cursor = [], [], 0, None
    began = time.monotonic()
    while True:
        query = {"formId": form, "limit": 100, "order": "asc"}
        if cursor:
            query["cursor"] = cursor
        connection.request("GET", "/api/v1/submissions?" + urllib.parse.urlencode(query),
                           headers=headers)
        response = connection.getresponse()
        page = json.loads(response.read())
        if response.status != 200:
            raise SystemExit(f"pull page {pages}: {response.status} {page}")
        pages += 1
        for row in page["data"]:
            got.append(row["id"])
            numbers.append(row["fields"]["n"])
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            break
    seconds = time.monotonic() - began
    connection.close()
    rate = len(got) / seconds
    return {
        "rows_per_second": round(rate),
        "database_rows_per_second": round(len(ids) / database_seconds),
        "ratio_to_database": round(rate / (len(ids) / database_seconds), 2),
        "pages": pages,
        "ms_per_page": round(seconds / pages * 1000, 2),
        "exact": exact(ids, got, numbers),
    }


def owner_pages(base: str, form: str, token: str, ids: list[str]) -> dict:
    """Pages of the owner's list (newest first, 100 a page): the median of 5 requests."""
    last = -(-len(ids) // 100)
    newest_first = ids[::-1]
    report = {}
    for page in sorted({1, last // 2, min(last, 9 * last // 10), last}):
        url = f"{base}/api/v1/forms/{form}/submissions?page={page}&limit=100"
        times, body = [], {}
        for _ in range(5):
            began = time.monotonic()
            with urllib.request.urlopen(
                urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"}),
                timeout=60,
            ) as response:
                body = json.loads(response.read())
            times.append(time.monotonic() - began)
        expected = newest_first[(page - 1) * 100: page * 100]
        report[f"page_{page}"] = {
            "ms": round(statistics.median(times) * 1000, 1),
            "exact": [row["id"] for row in body["data"]] == expected
            and body["total"] == len(ids),
        }
    return report


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


def read_whole(url: str, headers: dict, sink: Path) -> dict:
    """Read the answer into ``sink`` (the page cache: writing it costs next to nothing)."""
    request = urllib.request.Request(url, headers=headers)
    began = time.monotonic()
    first_byte, size, newlines = None, 0, 0
    with urllib.request.urlopen(request, timeout=600) as response, sink.open("wb") as out:
        while chunk := response.read(1 << 16):
            if first_byte is None:
                first_byte = time.monotonic() - began
            size += len(chunk)
            newlines += chunk.count(b"\n")
            out.write(chunk)
    return {"seconds": time.monotonic() - began, "first_byte_s": first_byte, "bytes": size,
            "newlines": newlines}


def measure(env: dict, web_pid: int, url: str, headers: dict, rows: int, copy_rate: float,
            sink: Path) -> dict:
    memory = PeakMemory(web_pid)
    memory.start()
    before = temp_bytes(env)
    result = read_whole(url, headers, sink)
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


def big_form_setup(doc: str, rows: int, name: str):
    """bench/load.py's production setup for one big form, with --rows (default ``rows``): its
    arguments, work folder, web port, base URL and environment."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--rows", type=int, default=rows)
    args = argparse.Namespace(setup="production", accounts=1, server="edge",
                              **vars(parser.parse_args()))
    work = Path(tempfile.mkdtemp(prefix=f"formflow-{name}-"))
    port = stack.free_port()
    env, _ = load.prepare(args, work, stack.free_port())
    return args, work, port, f"http://127.0.0.1:{port}", env


def main() -> None:
    args, work, port, base, env = big_form_setup(__doc__, 1_000_000, "exports")
    seeded = time.monotonic()
    load.sql(env, SEED.format(rows=args.rows))
    report: dict = {"rows": args.rows, "seed_seconds": round(time.monotonic() - seeded, 1)}
    form, token, key = load.manage(env, "shell", "-c", CREDENTIALS).split()[-3:]
    began = time.monotonic()
    subprocess.run(["psql", "-q", env["DATABASE_URL"], "-c", COPY.format(form=form)],
                   check=True)
    copy_rate = args.rows / (time.monotonic() - began)
    report["copy_rows_per_second"] = round(copy_rate)
    ids = database_ids(env, form)
    walk_seconds = psql_seconds(env, WALK_SQL.format(form=form, zero=uuid.UUID(int=0)))
    # The contract's 60 requests a minute would make the walk take hours: lifted here.
    env = {**env, "PULL_REQUESTS_PER_MINUTE": str(10**6)}
    service = load.servers(args, env, port, None)
    with ExitStack() as running:
        web = running.enter_context(stack.started(service["commands"]["web"], service["env"],
                                                  work / "web.log"))
        stack.wait_for_answer(base + "/healthz")
        owner = {"Authorization": f"Bearer {token}"}
        puller = {"Authorization": f"Bearer {key}"}
        targets = {
            "csv": (f"{base}/api/v1/forms/{form}/export?format=csv", owner),
            "json": (f"{base}/api/v1/forms/{form}/export?format=json", owner),
            "ndjson_stream": (f"{base}/api/v1/submissions/stream?formId={form}", puller),
        }
        checks = {"csv": check_csv, "json": check_json, "ndjson_stream": check_json}
        for name, (url, headers) in targets.items():
            sink = work / f"{name}.out"
            report[name] = measure(env, web.pid, url, headers, args.rows, copy_rate, sink)
            report[name]["exact"] = checks[name](sink, ids)
            sink.unlink()
        report["pull_walk"] = pull_walk(base, form, key, ids, walk_seconds)
        report["owner_list"] = owner_pages(base, form, token, ids)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
