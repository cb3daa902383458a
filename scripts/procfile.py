#!/usr/bin/env python3
"""The Procfile's reader: the one way anything here gets a process's command line.

    python3 scripts/procfile.py show NAME            # the expanded command line
    python3 scripts/procfile.py run [--migrate] NAME # become that process (the image's entry)
    python3 scripts/procfile.py units DIR            # write the systemd units (deploy/systemd)

A Procfile line is ``name: command``. In a command, ``${NAME:-default}`` is the environment's
NAME, else the default, as a POSIX shell reads it (so foreman, honcho and `sh -c` agree), and
``${NAME}`` or ``$NAME`` is the environment's NAME, which must then be set. The command's first
word is looked up in the given bin folder (a venv's) before PATH.

Standard library only: dev.py reads it before anything is installed.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROCFILE = ROOT / "Procfile"
ENTRY = re.compile(r"^([A-Za-z0-9_-]+):\s*(.+?)\s*$")
VARIABLE = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}|\$(\w+)")


class ProcfileError(Exception):
    pass


def entries() -> dict[str, str]:
    """Every ``name: command`` line of the Procfile, in order; other lines are comments."""
    found = {}
    for line in PROCFILE.read_text().splitlines():
        match = ENTRY.match(line)
        if match and not line.lstrip().startswith("#"):
            found[match[1]] = match[2]
    return found


def expand(line: str, env: Mapping[str, str]) -> str:
    def value(match: re.Match) -> str:
        name = match[1] or match[3]
        if env.get(name):
            return env[name]
        if match[2] is not None:
            return match[2]
        raise ProcfileError(f"the Procfile needs {name}, and it is not set")

    return VARIABLE.sub(value, line)


def command(
    name: str, env: Mapping[str, str] | None = None, bin_dir: Path | str | None = None
) -> list[str]:
    """The Procfile's ``name`` line as an argument list, with ``env`` (default: this process's
    environment) filled in."""
    lines = entries()
    if name not in lines:
        raise ProcfileError(f"the Procfile has no {name!r} line (it has {', '.join(lines)})")
    words = shlex.split(expand(lines[name], os.environ if env is None else env))
    if bin_dir is not None and (Path(bin_dir) / words[0]).exists():
        words[0] = str(Path(bin_dir) / words[0])
    return words


# --- systemd units ----------------------------------------------------------------------------

APP_DIR = "/opt/formflow"
DATA_DIR = "/var/lib/formflow"
ENV_FILE = "/etc/formflow/formflow.env"

UNIT = """\
# Generated from the Procfile by `python3 scripts/procfile.py units deploy/systemd`
# (tests/test_procfile.py checks that it matches): edit the Procfile, not this file.
# docs/deploy.md says where each path comes from.
[Unit]
Description=FormFlow {name}
Documentation=file://{app}/docs/deploy.md
After=network-online.target postgresql.service redis-server.service
Wants=network-online.target

[Service]
Type=simple
User=formflow
Group=formflow
WorkingDirectory={app}
# The Procfile's defaults; the environment file, read after, overrides any of them.
Environment={defaults}
EnvironmentFile={env_file}
{pre}ExecStart={exec}
Restart=always
RestartSec=2
# SIGTERM to the main process (gunicorn and Celery stop their children gracefully), SIGKILL
# to whatever is left after TimeoutStopSec.
KillMode=mixed
TimeoutStopSec=30
StateDirectory=formflow
StateDirectoryMode=0700
UMask=0077

# Sandboxing: the service writes only DATA_DIR, sees no home folders, devices or other /tmp.
NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths={data}
PrivateTmp=yes
ProtectHome=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
SystemCallArchitectures=native
CapabilityBoundingSet=

[Install]
WantedBy=multi-user.target
"""

# The web unit prepares the database before it starts: migrate does nothing when it is current.
MIGRATE = f"ExecStartPre={APP_DIR}/.venv/bin/python manage.py migrate --no-input\n"
ALWAYS = {"DATA_DIR": DATA_DIR}


def systemd_word(word: str) -> str:
    # % starts a systemd specifier; a word with a space or quote is quoted.
    word = word.replace("%", "%%")
    if re.search(r"[\s\"'\\]", word):
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return word


def unit(name: str, line: str) -> str:
    defaults = dict(ALWAYS)

    def as_systemd(match: re.Match) -> str:
        variable = match[1] or match[3]
        if match[2] is not None:
            defaults[variable] = match[2]
        return "${" + variable + "}"

    words = shlex.split(VARIABLE.sub(as_systemd, line))
    words[0] = f"{APP_DIR}/.venv/bin/{words[0]}"
    return UNIT.format(
        name=name,
        app=APP_DIR,
        data=DATA_DIR,
        env_file=ENV_FILE,
        defaults=" ".join(f'"{key}={value}"' for key, value in defaults.items()),
        pre=MIGRATE if name == "web" else "",
        exec=" ".join(systemd_word(word) for word in words),
    )


def units() -> dict[str, str]:
    """Each Procfile line's systemd unit, by file name."""
    return {f"formflow-{name}.service": unit(name, line) for name, line in entries().items()}


# --- The command line -------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    usage = __doc__.split("\n\n")[1]
    if len(argv) < 2:
        print(usage, file=sys.stderr)
        return 2
    action, rest = argv[0], argv[1:]
    try:
        if action == "show":
            print(shlex.join(command(rest[0], bin_dir=Path(sys.executable).parent)))
        elif action == "run":
            if rest[0] == "--migrate":
                subprocess.run([sys.executable, "manage.py", "migrate", "--no-input"], cwd=ROOT,
                               check=True)
                rest = rest[1:]
            words = command(rest[0], bin_dir=Path(sys.executable).parent)
            os.chdir(ROOT)
            os.execvp(words[0], words)
        elif action == "units":
            folder = Path(rest[0])
            folder.mkdir(parents=True, exist_ok=True)
            for filename, text in units().items():
                (folder / filename).write_text(text)
                print(f"wrote {folder / filename}")
        else:
            print(usage, file=sys.stderr)
            return 2
    except (ProcfileError, subprocess.CalledProcessError) as error:
        print(f"procfile: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
