#!/usr/bin/env python3
"""What ships in deploy/, the Containerfile and the backup story, proven on this machine.

    python3 scripts/deploy_check.py [units] [caddy] [ride] [container] [restore]  # all by default
        [--postgres postgres://postgres@127.0.0.1:5432] [--database-prefix formflow_deploy]
        [--redis-url redis://127.0.0.1:6379/12] [--base-cache /var/cache/formflow-ci]

- units: `systemd-analyze verify` on deploy/systemd/*.service, in a scratch root (--root) that
  holds the system's own units and stand-ins for the venv's commands; any warning fails.
- caddy: the production smoke (scripts/smoke.py production --behind-caddy) through
  deploy/Caddyfile over HTTPS from Caddy's own CA: client address, BASE_URL, Secure cookies.
- ride: deploy/Caddyfile in front of the Procfile's web, which is stopped and started again
  while requests flow through Caddy: every one is answered 200, none refused.
- container: a Debian base made by debootstrap (kept in --base-cache between runs), the image
  built from the Containerfile on it with podman, then the image's web, worker and beat on the
  host's network, PostgreSQL and Redis, smoke-tested.
- restore: a file uploaded to the caddy smoke's form, `manage.py backup` (the database and
  the stored files in one archive), `manage.py restore` into a fresh database and an empty
  DATA_DIR, the Procfile's web started on it with the same two keys, and `scripts/smoke.py
  check --read-back` finds the submissions the smoke made and downloads the file byte for
  byte.

Each prints its duration; the run exits non-zero when one fails. Needs root (debootstrap,
podman) and the packages podman, buildah, debootstrap, runc and caddy.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import smoke
import stack

ROOT = stack.ROOT
BASE_IMAGE = "localhost/formflow-base-bookworm"
IMAGE = "localhost/formflow:check"
# This machine's podman: crun rejects its cgroup layout, and the default rlimits are above what
# a process here may set (recipes: "Containers on these machines").
CONTAINERS_CONF = """[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
"""
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
STAGES = ("units", "caddy", "ride", "container", "restore")


def run(*words: str | Path, check: bool = True, **options) -> subprocess.CompletedProcess:
    return subprocess.run([str(word) for word in words], check=check, **options)


# --- units ------------------------------------------------------------------------------------


def units(_args: argparse.Namespace, work: Path) -> None:
    root = work / "root"
    shutil.copytree("/usr/lib/systemd/system", root / "usr/lib/systemd/system", symlinks=True)
    target = root / "etc/systemd/system"
    target.mkdir(parents=True)
    found = sorted((ROOT / "deploy" / "systemd").glob("*.service"))
    for unit in found:
        shutil.copy(unit, target)
        # Stand-ins for the venv's commands, which systemd checks are executable.
        for path in re.findall(r"^Exec\w*=(\S+)", unit.read_text(), re.MULTILINE):
            stand_in = root / path.lstrip("/")
            stand_in.parent.mkdir(parents=True, exist_ok=True)
            stand_in.write_text("#!/bin/sh\n")
            stand_in.chmod(0o755)
    result = subprocess.run(
        ["systemd-analyze", "verify", f"--root={root}", "--man=no",
         *(f"/etc/systemd/system/{unit.name}" for unit in found)],
        capture_output=True, text=True)
    said = (result.stdout + result.stderr).strip()
    # A unit systemd reads with warnings ("Unknown key", "ignoring") still exits 0.
    if result.returncode or said:
        raise stack.StackFailed(f"systemd-analyze verify: {said or result.returncode}")
    print(f"units: {', '.join(unit.name for unit in found)} verified", flush=True)


# --- caddy and restore ------------------------------------------------------------------------


def postgres_url(args: argparse.Namespace, name: str) -> str:
    return f"{args.postgres.rstrip('/')}/{args.database_prefix}_{name}"


def fresh_database(args: argparse.Namespace, name: str) -> str:
    admin = f"{args.postgres.rstrip('/')}/postgres"
    database = f"{args.database_prefix}_{name}"
    run("psql", "-q", admin, "-c", f"DROP DATABASE IF EXISTS {database}", "-c",
        f"CREATE DATABASE {database}")
    return postgres_url(args, name)


def flush_redis(url: str) -> None:
    run("redis-cli", "-u", url, "flushdb", stdout=subprocess.DEVNULL)


def caddy(args: argparse.Namespace, work: Path) -> None:
    database = fresh_database(args, "smoke")
    flush_redis(args.redis_url)
    run(sys.executable, "dev.py", "install", cwd=ROOT)  # .venv, from the runtime lock alone
    code = smoke.main(["production", "--database-url", database, "--redis-url", args.redis_url,
                       "--venv", str(ROOT / ".venv"), "--behind-caddy",
                       "--record", str(work / "record.json")])
    if code:
        raise stack.StackFailed("the production smoke through Caddy failed")


def restore(args: argparse.Namespace, work: Path) -> None:
    """The drill an operator runs: a file uploaded to the smoke's form, `manage.py backup`,
    `manage.py restore` into a fresh database and an empty DATA_DIR, then every submission
    read back and the file downloaded byte for byte, with the same two keys."""
    record = work / "record.json"
    source = app_environment(args, postgres_url(args, "smoke"), work / "source-data")
    with web_on(source, work, "source") as base:
        smoke.add_file(base, record)
    archive = work / "formflow.tar"
    manage(source, "backup", str(archive))
    restored = app_environment(args, fresh_database(args, "restored"), work / "restored-data")
    manage(restored, "restore", str(archive))
    manage(restored, "migrate", "--no-input")
    with web_on(restored, work, "restored") as base:
        if smoke.main(["check", "--base-url", base, "--read-back", str(record)]):
            print((work / "restored-web.log").read_text(errors="replace")[-3000:], flush=True)
            raise stack.StackFailed("the restored backup did not give the submissions back")
    secrets_readable(restored, record)


def app_environment(args: argparse.Namespace, database: str, data_dir: Path) -> dict:
    port = stack.free_port()
    env = {**os.environ, "DATABASE_URL": database, "REDIS_URL": args.redis_url,
           "BASE_URL": f"http://127.0.0.1:{port}", "PORT": str(port), "DATA_DIR": str(data_dir)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


@contextmanager
def web_on(env: dict, work: Path, name: str) -> Iterator[str]:
    """The Procfile's web line on ``env``'s database, while the block runs: its base URL."""
    log = work / f"{name}-web.log"
    with stack.started(stack.command("web", env, stack.RUNTIME_BIN), env, log,
                       f"web on the {name} database") as web:
        stack.wait_until_up(env["BASE_URL"], [web])
        yield env["BASE_URL"]


def manage(env: dict, *arguments: str) -> None:
    run(stack.RUNTIME_BIN / "python", "manage.py", *arguments, cwd=ROOT, env=env)


# --- ride: a web restart behind Caddy ------------------------------------------------------


def ride(args: argparse.Namespace, work: Path) -> None:
    """deploy/Caddyfile rides a web restart: requests sent through Caddy all the while the
    web process stops and starts again are each answered, none refused (lb_try_duration)."""
    https_port = stack.free_port()
    env = app_environment(args, postgres_url(args, "smoke"), work / "ride-data")
    env.update(BASE_URL=f"https://localhost:{https_port}", TRUSTED_PROXY_COUNT="1",
               ALLOWED_HOSTS="localhost,127.0.0.1")
    local = f"http://127.0.0.1:{env['PORT']}"
    with ExitStack() as cleanup:
        smoke.caddy(cleanup, work, int(env["PORT"]), https_port)
        flood = Flood(f"https://localhost:{https_port}/healthz")
        with web_process(env, work, "before") as web:
            stack.wait_until_up(local, [web], headers=smoke.VIA_PROXY)
            flood.start()  # flows while this web stops and the next one starts
            time.sleep(2)
        with web_process(env, work, "after") as web:
            stack.wait_until_up(local, [web], headers=smoke.VIA_PROXY)
            time.sleep(2)
            answers = flood.stop()
    refused = [answer for answer in answers if answer != 200]
    if refused or len(answers) < 10:
        raise stack.StackFailed(f"across a web restart Caddy answered {len(answers)} requests, "
                                f"{len(refused)} not 200: {sorted(set(map(str, refused)))}")
    print(f"ride: {len(answers)} requests through Caddy across a web restart, all 200",
          flush=True)


def web_process(env: dict, work: Path, turn: str):
    return stack.started(stack.command("web", env, stack.RUNTIME_BIN), env,
                         work / f"ride-web-{turn}.log", f"web ({turn} the restart)")


class Flood:
    """GETs one after another on a thread, each answer's status kept (an error's name when
    nothing answered)."""

    def __init__(self, url: str) -> None:
        self.url, self.answers = url, []
        self.running = threading.Event()
        self.thread = threading.Thread(target=self._send, daemon=True)

    def start(self) -> None:
        self.running.set()
        self.thread.start()

    def stop(self) -> list:
        self.running.clear()
        self.thread.join(timeout=60)
        return self.answers

    def _send(self) -> None:
        while self.running.is_set():
            try:
                status, _, _ = stack.request("GET", self.url, timeout=30, context=smoke.TLS)
            except OSError as error:
                status = type(error).__name__
            self.answers.append(status)
            time.sleep(0.05)


# Integration secrets are encrypted with FIELD_ENCRYPTION_KEYS: the restored webhook's signing
# secret must decrypt, with the keys kept beside the dump, to the one the smoke was given.
DECRYPT = """
import json
from integrations.models import Integration
print(json.dumps([row.secrets.get("signingSecret") for row in Integration.objects.all()]))
"""


def secrets_readable(env: dict, record: Path) -> None:
    wanted = json.loads(record.read_text())["signingSecret"]
    output = run(stack.RUNTIME_BIN / "python", "manage.py", "shell", "-c", DECRYPT, cwd=ROOT,
                 env=env, capture_output=True, text=True).stdout
    if wanted not in json.loads(output.strip().splitlines()[-1]):
        raise stack.StackFailed("the restored webhook's signing secret did not decrypt")
    print("restore: the webhook's signing secret decrypts with the kept keys", flush=True)


# --- container --------------------------------------------------------------------------------


def apt_mirror() -> str:
    """The Debian mirror this machine's apt uses."""
    sources = [*Path("/etc/apt/sources.list.d").glob("*"), Path("/etc/apt/sources.list")]
    for source in sources:
        if source.is_file():
            for found in re.findall(r"(?:URIs:\s*|^deb\s+(?:\[[^]]*\]\s+)?)(\S+/debian)\b",
                                    source.read_text(), re.MULTILINE):
                return found
    return "http://deb.debian.org/debian"


def base_image(args: argparse.Namespace, work: Path) -> None:
    """A minimal Debian with python3 and python3-venv, as a podman image: made by debootstrap
    once, then kept as a tarball in --base-cache (when that folder can be made)."""
    if run("podman", "image", "exists", BASE_IMAGE, check=False).returncode == 0:
        return
    cache = Path(args.base_cache)
    tarball = cache / "bookworm-min.tar"
    if not tarball.exists():
        rootfs = work / "rootfs"
        print(f"container: debootstrap from {apt_mirror()}", flush=True)
        run("debootstrap", "--variant=minbase", "--include=python3,python3-venv,ca-certificates",
            "bookworm", rootfs, apt_mirror(), stdout=subprocess.DEVNULL)
        try:
            cache.mkdir(parents=True, exist_ok=True)
        except OSError:
            tarball = work / "bookworm-min.tar"
        # apt's package lists and downloaded packages are of no use in the image.
        run("tar", "-C", rootfs, "--exclude=./var/cache/apt/archives/*.deb",
            "--exclude=./var/lib/apt/lists/*", "-cf", tarball, ".")
        shutil.rmtree(rootfs, ignore_errors=True)
    run("podman", "import", tarball, BASE_IMAGE, stdout=subprocess.DEVNULL)


def container(args: argparse.Namespace, work: Path) -> None:
    conf = work / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    os.environ["CONTAINERS_CONF"] = str(conf)
    base_image(args, work)
    # pip in the build reaches the index the way this machine does only with its CA bundle,
    # mounted for the build and never copied into the image.
    commit = run("git", "rev-parse", "--short=7", "HEAD", cwd=ROOT, capture_output=True,
                 text=True).stdout.strip()
    run("podman", "build", "--network=host", f"--volume={CA_BUNDLE}:{CA_BUNDLE}:ro",
        f"--build-arg=BASE_IMAGE={BASE_IMAGE}", f"--build-arg=COMMIT={commit}",
        f"--tag={IMAGE}", "--file=Containerfile", ".", cwd=ROOT, stdout=subprocess.DEVNULL)
    user = run("podman", "run", "--rm", "--entrypoint=id", IMAGE, "-u",
               capture_output=True, text=True).stdout.strip()
    if user == "0":
        raise stack.StackFailed("the image runs as root")
    # The image has no .git: its version carries the commit only through the build argument.
    version = run("podman", "run", "--rm", "--entrypoint=python", IMAGE, "-c",
                  "import formflow; print(formflow.version())",
                  capture_output=True, text=True).stdout.strip()
    if not version.endswith(f"+{commit}"):
        raise stack.StackFailed(f"the image says version {version!r}, not ...+{commit}")
    print(f"container: {IMAGE} {version} built on {BASE_IMAGE}; it runs as uid {user}",
          flush=True)
    database = fresh_database(args, "container")
    flush_redis(args.redis_url)
    if smoke.main(["container", "--image", IMAGE, "--database-url", database,
                   "--redis-url", args.redis_url]):
        raise stack.StackFailed("the smoke against the image failed")


# --- The command line -------------------------------------------------------------------------

RUNNERS = {"units": units, "caddy": caddy, "ride": ride, "container": container,
           "restore": restore}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stages", nargs="*", metavar="STAGE", help=", ".join(STAGES))
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--database-prefix", default="formflow_deploy")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/12")
    parser.add_argument("--base-cache", default="/var/cache/formflow-ci",
                        help="where the debootstrap'ed base is kept between runs")
    args = parser.parse_args(argv)
    stages = args.stages or list(STAGES)
    unknown = set(stages) - set(STAGES)
    if unknown:
        parser.error(f"no such stage: {', '.join(sorted(unknown))} (stages: {', '.join(STAGES)})")
    for needs_smoke in ("ride", "restore"):  # both run on the caddy smoke's database
        if needs_smoke in stages and "caddy" not in stages:
            stages.insert(stages.index(needs_smoke), "caddy")
    # The two keys the restored database needs: the same for the smoke and the restore.
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ.setdefault("FIELD_ENCRYPTION_KEYS",
                          base64.urlsafe_b64encode(os.urandom(32)).decode())
    work = Path(tempfile.mkdtemp(prefix="formflow-deploy-"))
    failed = []
    with ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, work, ignore_errors=True)
        for name in STAGES:
            if name not in stages:
                continue
            try:
                with stack.stage(f"deploy check: {name}"):
                    RUNNERS[name](args, work)
            except (stack.StackFailed, subprocess.CalledProcessError) as error:
                print(f"deploy check: {name} FAILED: {error}", flush=True)
                failed.append(name)
    print("deploy check: " + (f"FAILED: {', '.join(failed)}" if failed else "passed"),
          flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
