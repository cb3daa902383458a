"""File uploads over HTTP against the production web server, with the floor in the same run.

    python3 bench/uploads.py [--count 10] [--storage local|s3]

Starts gunicorn with the edge worker (one process, 8 threads, as `dev.py start`) on SQLite in
a scratch DATA_DIR, and a form that keeps files (maxBytes 25 MiB, one file a submission, any
type). Uploads --count files of 1 MB and of 20 MB, one after another and then 4 at a time, as
multipart posts over loopback, and reports MB/s per size, and the web worker's peak resident
memory (VmHWM) before and after. The floor is writing the same bytes to a file in the same
folder (write + close, as the storage does; no fsync), in the same run. --storage s3 stores to
moto's S3 server on loopback instead of the folder.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import secrets
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # bench/load.py: its manage.py and /proc helpers
import stack  # scripts/stack.py, on the path load.py set

MB = 1000 * 1000
BOUNDARY = "BenchBoundary"
SETUP = """
from accounts.models import User
from forms_app.services import form_create
owner = User.objects.create_user("bench@example.com", "bench-password-1", is_verified=True,
                                 monthly_submission_limit=10**9)
form = form_create(owner=owner, name="Uploads", rate_limit=10000, spam_filter=False,
                   file_uploads={"maxBytes": 26214400, "maxFiles": 1,
                                 "types": ["application/octet-stream"]})
print(form.slug)
"""


def python_bin() -> Path:
    return load.VENV_BIN if (load.VENV_BIN / "gunicorn").exists() else Path(sys.executable).parent


def body_for(data: bytes) -> tuple[bytes, bytes]:
    head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"bench.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n").encode()
    return head, b"\r\n--" + BOUNDARY.encode() + b"--\r\n"


def upload(port: int, slug: str, data: bytes) -> int:
    head, tail = body_for(data)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.putrequest("POST", f"/api/v1/f/{slug}")
    conn.putheader("Content-Type", f"multipart/form-data; boundary={BOUNDARY}")
    conn.putheader("Accept", "application/json")
    conn.putheader("Content-Length", str(len(head) + len(data) + len(tail)))
    conn.endheaders()
    conn.send(head)
    view = memoryview(data)
    for start in range(0, len(data), 1 << 20):
        conn.send(view[start:start + (1 << 20)])
    conn.send(tail)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status


def timed_uploads(port: int, slug: str, data: bytes, count: int, parallel: int) -> float:
    """MB/s of ``count`` uploads of ``data``, ``parallel`` at a time."""
    statuses: list[int] = []
    lock = threading.Lock()
    todo = list(range(count))

    def worker() -> None:
        while True:
            with lock:
                if not todo:
                    return
                todo.pop()
            status = upload(port, slug, data)
            with lock:
                statuses.append(status)

    began = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(parallel)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    if statuses != [200] * count:
        raise SystemExit(f"uploads answered {sorted(set(statuses))}")
    return count * len(data) / MB / elapsed


def floor(folder: Path, data: bytes, count: int) -> float:
    began = time.perf_counter()
    for n in range(count):
        path = folder / f"floor-{n}"
        with path.open("wb") as out:
            view = memoryview(data)
            for start in range(0, len(data), 64 * 1024):
                out.write(view[start:start + 64 * 1024])
        path.unlink()
    return count * len(data) / MB / (time.perf_counter() - began)


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def environment(work: Path, storage: str, moto_port: int) -> dict:
    env = {
        **os.environ,
        "DATA_DIR": str(work / "data"),
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEYS": base64.urlsafe_b64encode(os.urandom(32)).decode(),
        "DEFAULT_STORAGE_QUOTA_BYTES": str(100 * 1024**3),
    }
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE",
                 "STORAGE_URL"):
        env.pop(name, None)
    if storage == "s3":
        env.update(STORAGE_URL="s3://bench/uploads", S3_ENDPOINT_URL=f"http://127.0.0.1:{moto_port}",
                   AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                   AWS_DEFAULT_REGION="us-east-1")
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--storage", choices=["local", "s3"], default="local")
    args = parser.parse_args()
    bin_dir = python_bin()
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as running:
        work = Path(scratch)
        moto_port = stack.free_port()
        if args.storage == "s3":
            from moto.server import ThreadedMotoServer

            moto = ThreadedMotoServer(ip_address="127.0.0.1", port=moto_port, verbose=False)
            moto.start()
            running.callback(moto.stop)
            import boto3

            boto3.client("s3", endpoint_url=f"http://127.0.0.1:{moto_port}",
                         region_name="us-east-1", aws_access_key_id="bench",
                         aws_secret_access_key="bench").create_bucket(Bucket="bench")
        env = environment(work, args.storage, moto_port)
        load.manage(env, "migrate", "--no-input", python=bin_dir / "python")
        slug = load.manage(env, "shell", "-c", SETUP, python=bin_dir / "python").split()[-1]
        port = stack.free_port()
        # The Procfile's web line, with one process: the peak memory read is that process's.
        web_line = stack.command("web", {**env, "PORT": str(port), "BIND_HOST": "127.0.0.1",
                                         "WEB_CONCURRENCY": "1", "WEB_THREADS": "8"},
                                 bin_dir)
        web = running.enter_context(stack.started(web_line, env, work / "web.log"))
        stack.wait_for_answer(f"http://127.0.0.1:{port}/healthz")
        (worker_pid,) = load.descendants(web.pid)
        results = {"storage": args.storage, "count": args.count,
                   "rss_mb_at_start": round(peak_rss_mb(worker_pid), 1), "sizes": {}}
        for size in (1, 20):
            # Random bytes behind a fixed head, so no chance magic number makes it an image.
            data = b"BENCHDATA" + os.urandom(size * MB - 9)
            results["sizes"][f"{size}MB"] = {
                "http_MBps": round(timed_uploads(port, slug, data, args.count, 1), 1),
                "http_MBps_4_at_once": round(timed_uploads(port, slug, data, args.count, 4), 1),
                "disk_floor_MBps": round(floor(work, data, args.count), 1),
                "rss_mb_peak_so_far": round(peak_rss_mb(worker_pid), 1),
            }
        results["rss_mb_peak"] = round(peak_rss_mb(worker_pid), 1)
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
