"""A throwaway PostgreSQL cluster: ``initdb`` in a folder, ``postgres`` on a free loopback port,
stopped by PID. The tests' fixture (``tests/fixtures/postgres.py``) and ``neardup bench cold``
start their servers with this code.

Needs PostgreSQL's server programs (Debian's ``postgresql`` package puts them in
``/usr/lib/postgresql/<version>/bin``, off PATH): :func:`postgres_bin` raises
:class:`~neardup.errors.ConfigError` when there is no ``initdb``. PostgreSQL refuses to run as
root, so as root the cluster runs as an unprivileged user (``nobody``, present on every Debian)
that owns the folder. Clients log in with a password over TCP only (``scram-sha-256``, no trust, no
Unix socket), as in production. Durability is off (``fsync``, full pages): the cluster is thrown
away, and its figures are the database's work, not the disk's.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from neardup.bench.net import HOST, free_port
from neardup.errors import ConfigError

USER = "neardup"
DEBIAN_BINARIES = "/usr/lib/postgresql/*/bin/initdb"


def postgres_bin(pattern: str = DEBIAN_BINARIES) -> Path:
    """The folder holding ``initdb`` and ``postgres``: the newest of ``pattern``'s, else PATH's."""
    found = sorted(glob.glob(pattern), key=lambda p: int(Path(p).parent.parent.name))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise ConfigError("PostgreSQL is not installed (no initdb)",
                      hint="apt-get install postgresql (or make services)")  # fmt: skip


@dataclass
class PostgresServer:
    """A running cluster: its port, the password of ``USER``, its process."""

    port: int
    password: str
    proc: subprocess.Popen[bytes]
    data: Path

    def url(self, database: str = "postgres") -> str:
        """A ``postgresql://`` URL for ``database`` with the password in it."""
        return f"postgresql://{USER}:{self.password}@{HOST}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """``CREATE DATABASE name``; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def version(self) -> str:
        """The server's version, e.g. ``15.15``."""
        import psycopg

        with psycopg.connect(self.url()) as conn:
            row = conn.execute("SHOW server_version").fetchone()
        return str(row[0]).split()[0] if row else "?"

    def stop(self, timeout: float = 20.0) -> None:
        """Fast shutdown (SIGINT), then SIGKILL if it lingers."""
        if self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, signal.SIGINT)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout)


def _run_as() -> str | None:
    """The user to run PostgreSQL as: ``nobody`` when we are root (initdb refuses root), else ourselves."""
    return "nobody" if os.geteuid() == 0 else None


def start_postgres(folder: Path, settings: Mapping[str, str] | None = None) -> PostgresServer:
    """``initdb`` a cluster under ``folder`` and start it on a free port; waits until it accepts
    logins. ``settings``: more server settings (``shared_buffers``: ``1GB``), as ``-c`` options."""
    user = _run_as()
    data, pwfile = folder / "data", folder / "pw"
    password = secrets.token_urlsafe(18)
    pwfile.write_text(password + "\n")
    if user is not None:
        entry = pwd.getpwnam(user)
        for path in (folder, pwfile):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    pwfile.chmod(0o600)
    init = subprocess.run(
        [str(postgres_bin() / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={pwfile}", "--auth=scram-sha-256",
         "--encoding=UTF8", "--locale=C", "--no-sync"],
        user=user, capture_output=True, text=True, timeout=120, cwd=folder, check=False)
    if init.returncode != 0:
        raise RuntimeError(f"initdb failed: {init.stdout[-2000:]}{init.stderr[-2000:]}")
    pwfile.unlink()
    return _serve(folder, data, free_port(), password, settings)


def restart_postgres(server: PostgresServer, folder: Path, settings: Mapping[str, str] | None = None
                     ) -> PostgresServer:
    """Stop ``server`` and start it again on the same data, port and password with ``settings``."""
    server.stop()
    return _serve(folder, server.data, server.port, server.password, settings)


def _serve(folder: Path, data: Path, port: int, password: str, settings: Mapping[str, str] | None) -> PostgresServer:
    log = folder / "postgres.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [str(postgres_bin() / "postgres"), "-D", str(data), "-p", str(port), "-c", f"listen_addresses={HOST}",
             "-c", "unix_socket_directories=", "-c", "fsync=off", "-c", "synchronous_commit=off",
             "-c", "full_page_writes=off", "-c", "max_connections=50",
             *[x for k, v in (settings or {}).items() for x in ("-c", f"{k}={v}")]],
            user=_run_as(), stdout=out, stderr=subprocess.STDOUT, cwd=folder, start_new_session=True)
    server = PostgresServer(port, password, proc, data)
    _wait_ready(server, log)
    return server


def _wait_ready(server: PostgresServer, log: Path, timeout: float = 60.0) -> None:
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        if server.proc.poll() is not None:
            raise RuntimeError(f"postgres exited: {log.read_text()[-2000:]}")
        try:
            with psycopg.connect(server.url(), connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                server.stop()
                raise RuntimeError(f"postgres did not accept logins in {timeout:g} s: {log.read_text()[-2000:]}") \
                    from None
            time.sleep(0.1)
