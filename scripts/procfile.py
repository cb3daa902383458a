#!/usr/bin/env python3
"""The Procfile's reader: the one way anything here gets a process's command line.

    python3 scripts/procfile.py show NAME            # the expanded command line
    python3 scripts/procfile.py run [--migrate] NAME # become that process (the image's entry)
    python3 scripts/procfile.py units DIR            # write the systemd units (deploy/systemd)
    python3 scripts/procfile.py manage [--env-file F] [--user U] ARGS...
                                  # manage.py ARGS as the units run (deploy/formflow-manage)

A Procfile line is ``name: command``. In a command, ``${NAME:-default}`` is the environment's
NAME, else the default, as a POSIX shell reads it (so foreman, honcho and `sh -c` agree), and
``${NAME}`` or ``$NAME`` is the environment's NAME, which must then be set. The command's first
word is looked up in the given bin folder (a venv's) before PATH.

Standard library only: dev.py reads it before anything is installed.
"""

from __future__ import annotations

import os
import pwd
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
# (tests/project/test_procfile.py checks that it matches): edit the Procfile, not this file.
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


# --- manage.py as the units run it ------------------------------------------------------------

SERVICE_USER = "formflow"
# What a unit's process gets from systemd besides its Environment= and EnvironmentFile=.
PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "TERM", "TZ")


def environment_file(path: Path) -> dict[str, str]:
    """An EnvironmentFile= as systemd reads it: KEY=VALUE lines, # and ; comments, a value in
    matching quotes unquoted. Not a shell script: a value such as ``FormFlow <no-reply@x>``
    is taken as it is, so sourcing the file with ``.`` would not do."""
    found = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        quote = value[:1]
        if len(value) >= 2 and quote in ("'", '"') and value[-1] == quote:
            value = value[1:-1]
            if quote == '"':
                value = re.sub(r"\\(.)", r"\1", value)
        found[key] = value
    return found


def manage_environment(env_file: Path, user: pwd.struct_passwd) -> dict[str, str]:
    """What a unit's process sees: the units' defaults, then the environment file over them."""
    env = {name: os.environ[name] for name in PASSED_THROUGH if name in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(HOME=user.pw_dir, USER=user.pw_name, LOGNAME=user.pw_name, **ALWAYS)
    env.update(environment_file(env_file))
    return env


def become(user: pwd.struct_passwd) -> None:
    """Root drops to the service user, as the units run (User=, Group=); anyone else stays
    who they are (the service user itself, or an operator with their own copy)."""
    if os.getuid() == user.pw_uid:
        return
    if os.getuid() != 0:
        raise ProcfileError(f"run it as root or as {user.pw_name} (sudo)")
    os.setgroups([])
    os.setgid(user.pw_gid)
    os.setuid(user.pw_uid)


def manage(argv: list[str]) -> None:
    """Become ``python manage.py ARGS`` with the venv's Python, the environment file, the
    service user, the working folder and the umask of the units."""
    env_file, user_name = Path(ENV_FILE), SERVICE_USER
    while argv[:1] in (["--env-file"], ["--user"]) and len(argv) > 1:
        if argv[0] == "--env-file":
            env_file = Path(argv[1])
        else:
            user_name = argv[1]
        argv = argv[2:]
    try:
        user = pwd.getpwnam(user_name)
    except KeyError:
        raise ProcfileError(f"there is no user {user_name!r} (--user)") from None
    try:
        env = manage_environment(env_file, user)  # read before dropping: the file is 0640
    except OSError as error:
        raise ProcfileError(f"cannot read the environment file {env_file}: {error}") from None
    venv_python = ROOT / ".venv" / "bin" / "python"
    python = str(venv_python) if venv_python.exists() else sys.executable
    become(user)
    os.umask(0o077)
    os.chdir(ROOT)
    os.execve(python, [python, "manage.py", *argv], env)


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
        elif action == "manage":
            manage(rest)
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
