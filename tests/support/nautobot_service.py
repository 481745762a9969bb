"""A real Nautobot (PostgreSQL, Redis, uWSGI) in a private directory, for the `fabricgen sot` tests
and benches.

Nautobot is a server fabricgen talks to over HTTP, never a library it imports: it lives in its own
venv (.venv-nautobot, `make setup-nautobot`, pinned by constraints-nautobot.txt), since its Django
stack pins releases (pillow<13, python-dateutil 2.x) that clash with fabricgen's constraints.txt.

Everything the service runs sits in one state directory: PostgreSQL's cluster (initdb), its socket
and Redis's socket in a directory only the service user can enter, so neither database listens on
TCP; the generated nautobot_config.py (random SECRET_KEY and database password), the logs, and the
API token in a 0600 file. Only uWSGI listens, on a free 127.0.0.1 port. PostgreSQL refuses to run
as root (postgres(1)): as root, the databases and Nautobot run as Debian's `postgres` user, which
owns nothing else here.

The slow step, `nautobot-server migrate`, runs once per schema key: its empty database is kept as a
pg_dump (tests/support/nautobot_db_cache.py) and restored next time.

    python -m tests.support.nautobot_service start --state-dir DIR [--env-file F]  # leaves it running
    python -m tests.support.nautobot_service stop --state-dir DIR
    python -m tests.support.nautobot_service prepare   # migrate into the cache (CI, before make test)

    with nautobot_service.running() as nautobot:       # a bench: nautobot.url, nautobot.token
        ...
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import nautobot_db_cache
from tests.support.owned_process import OwnedProcess, stop, stop_session

REPO = Path(__file__).resolve().parents[2]
VENV_ENV = "FABRICGEN_NAUTOBOT_VENV"
DEFAULT_VENV = REPO / ".venv-nautobot"
CONSTRAINTS = REPO / "constraints-nautobot.txt"
PG_BINDIR_ENV = "FABRICGEN_PG_BINDIR"
DB_NAME = "nautobot"
DB_USER = "postgres"
# uWSGI: two worker processes of two threads; a bulk POST of a few hundred objects holds one worker
# while the status poll and a second client still get answers.
UWSGI_PROCESSES = 2
UWSGI_THREADS = 2
READY_TIMEOUT = 180.0
# Bounds on the steps, so a fixture start cannot hang a test run: the migrate took 12 to 24 min on a
# loaded 2-core machine; every other step takes seconds to a minute.
MIGRATE_TIMEOUT = 3600.0
STEP_TIMEOUT = 600.0
# state directories under the temp dir: stop_abandoned finds those of test runs that died
STATE_PREFIX = "fabricgen-nautobot-"


# Every Nautobot app a test server may serve, migrated into the one cached database: a server started
# without one of them ignores its tables (nautobot-bgp-models: issue 37, ASNs as objects of their own
# when the app is installed; tests/sot/test_sot_bgp_models.py)
MIGRATED_APPS = ("nautobot_bgp_models",)
APPS_ENV = "FABRICGEN_NAUTOBOT_APPS"


class ServiceError(RuntimeError):
    """A step of the service failed; the message names it and the log to read."""


@dataclass(frozen=True)
class Tools:
    nautobot_server: Path
    pg_bindir: Path
    redis_server: Path
    service_user: pwd.struct_passwd

    @property
    def python(self) -> Path:
        return self.nautobot_server.parent / "python"

    def pg(self, program: str) -> str:
        return str(self.pg_bindir / program)

    def pg_major(self) -> str:
        out = subprocess.run([self.pg("postgres"), "--version"], capture_output=True, text=True, check=True)
        match = re.search(r"(\d+)(?:\.\d+)?", out.stdout)
        if not match:
            raise ServiceError(f"cannot read PostgreSQL's version from {out.stdout.strip()!r}")
        return match.group(1)


def find_tools(env: dict[str, str] | None = None) -> Tools | str:
    """What the service needs on this machine, or one line saying what is missing and how to get it."""
    env = os.environ if env is None else env
    venv = Path(env.get(VENV_ENV) or DEFAULT_VENV)
    nautobot_server = venv / "bin" / "nautobot-server"
    if not nautobot_server.is_file():
        return f"no Nautobot venv at {venv}: run `make setup-nautobot`"
    pg_bindir = _pg_bindir(env)
    if pg_bindir is None:
        return "PostgreSQL server binaries (initdb, postgres) not found: apt-get install postgresql"
    redis = shutil.which("redis-server")
    if redis is None:
        return "redis-server not found: apt-get install redis-server"
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and no `postgres` user to run PostgreSQL as (postgres refuses root)"
    else:
        user = pwd.getpwuid(os.geteuid())
    return Tools(nautobot_server, pg_bindir, Path(redis), user)


def _pg_bindir(env: dict[str, str]) -> Path | None:
    candidates = [Path(env[PG_BINDIR_ENV])] if env.get(PG_BINDIR_ENV) else []
    # Debian keeps the server binaries out of PATH, one directory per major version
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name)
                         if p.parent.name.isdigit() else 0, reverse=True)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).resolve().parent)
    for bindir in candidates:
        if all((bindir / prog).is_file() for prog in ("initdb", "postgres", "pg_dump", "pg_restore", "psql")):
            return bindir
    return None


@dataclass
class NautobotService:
    """A running Nautobot: `url`, `token` (read from the 0600 `token_file`), `processes` to stop."""

    state_dir: Path
    url: str
    token_file: Path
    processes: list[OwnedProcess]
    timings: dict[str, float] = field(default_factory=dict)
    _fabric_counter: int = 0

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Token {self.token}", "Accept": "application/json"}

    def fresh_fabric(self, base: str) -> str:
        """A fabric name no other test of this server uses: `base-N-xxxx`, [a-z0-9-]+ as the intent
        requires, so its `fabricgen:<fabric>` tag and Location are the test's alone."""
        self._fabric_counter += 1
        return f"{base}-{self._fabric_counter}-{secrets.token_hex(2)}"

    def stop(self) -> None:
        stop_service(self.state_dir)

    def write_env_file(self, path: Path) -> None:
        """The dev instance's address for other shells: URL, token file, PIDs; never the token."""
        pids = ",".join(str(p.pid) for p in self.processes)  # no blank: the file is sourced by shells
        text = (
            f"# Nautobot from {REPO} (tests/support/nautobot_service.py), state in {self.state_dir}\n"
            f"# stop it: cd {REPO} && .venv/bin/python -m tests.support.nautobot_service stop"
            f" --state-dir {self.state_dir}\n"
            f"NAUTOBOT_URL={self.url}\nNAUTOBOT_TOKEN_FILE={self.token_file}\nNAUTOBOT_PIDS={pids}\n"
        )
        _write_private(path, text)


def start(state_dir: Path, tools: Tools, env: dict[str, str] | None = None, log=None,
          owner_pid: int | None = None, apps: tuple[str, ...] = ()) -> NautobotService:
    """Start PostgreSQL, Redis and Nautobot in `state_dir` (new or empty) and return once the API
    answers. On failure, what was started is stopped and the directory stays for its logs.
    `owner_pid`: the process (a test run) whose end abandons the service (stop_abandoned);
    None for a service left running on purpose. `apps`: the Nautobot apps it serves (of MIGRATED_APPS)."""
    unknown = sorted(set(apps) - set(MIGRATED_APPS))
    if unknown:
        raise ServiceError(f"apps {unknown} are not migrated into the test database: add them to MIGRATED_APPS")
    env = dict(os.environ if env is None else env)
    log = log or (lambda line: print(line, file=sys.stderr))
    stack = _Stack(state_dir, tools, env, log, owner_pid, apps)
    try:
        return stack.run()
    except BaseException:
        stack.stop_started()
        raise


@contextmanager
def running(tools: Tools | None = None, log=None, apps: tuple[str, ...] = ()) -> Iterator[NautobotService]:
    """A server in a new directory under the temp dir for the length of a `with` (tests, benches),
    owned by this process; servers of earlier runs killed before their cleanup are stopped first."""
    if tools is None:
        found = find_tools()
        if isinstance(found, str):
            raise ServiceError(found)
        tools = found
    # the temp dir, not pytest's tmp_path: that one is root's 0700, closed to the `postgres` user
    temp = Path(tempfile.gettempdir())
    stop_abandoned(temp)
    service = start(Path(tempfile.mkdtemp(prefix=STATE_PREFIX, dir=temp)), tools, log=log, owner_pid=os.getpid(),
                    apps=apps)
    try:
        yield service
    finally:
        service.stop()


def prepare_cache(tools: Tools, env: dict[str, str] | None = None, log=None) -> None:
    """Migrate into the dump cache without serving (CI's step before `make test`)."""
    env = dict(os.environ if env is None else env)
    log = log or (lambda line: print(line, file=sys.stderr))
    state_dir = Path(tempfile.mkdtemp(prefix=f"{STATE_PREFIX}prepare-"))
    stack = _Stack(state_dir, tools, env, log, os.getpid())
    dump, why = stack.dump()
    if dump is not None and dump.is_file():
        log(f"nautobot: {why}: already there")
        shutil.rmtree(state_dir, ignore_errors=True)
        return
    try:
        stack.databases()
        stack.database_schema()
    finally:
        stack.stop_started()
    shutil.rmtree(state_dir, ignore_errors=True)


def stop_abandoned(parent: Path, prefix: str = STATE_PREFIX) -> list[Path]:
    """Stop the services under `parent`/`prefix`* whose owner (a test run killed before its
    teardown, e.g. by SIGKILL) is gone. Only directories and records of this uid count: another
    user could write any PID into a file under /tmp."""
    stopped = []
    for record in sorted(parent.glob(f"{prefix}*/service.json")):
        try:
            if record.parent.lstat().st_uid != os.geteuid() or record.lstat().st_uid != os.geteuid():
                continue
            owner = json.loads(record.read_text()).get("owner")
        except (OSError, ValueError):
            continue
        if owner is not None and not OwnedProcess.from_json(owner).alive():
            stop_service(record.parent)
            stopped.append(record.parent)
    return stopped


def stop_service(state_dir: Path) -> None:
    """Stop exactly the processes recorded in `state_dir`/service.json, last started first, then
    remove the directory."""
    record = state_dir / "service.json"
    if record.is_file():
        processes = [OwnedProcess.from_json(p) for p in json.loads(record.read_text())["processes"]]
        for proc in reversed(processes):
            # PostgreSQL: SIGINT is its "fast" shutdown; SIGTERM ("smart") waits for every client
            stop(proc, signal.SIGINT if proc.name == "postgres" else signal.SIGTERM)
            stop_session(proc)
    shutil.rmtree(state_dir, ignore_errors=True)


class _Stack:
    def __init__(self, state_dir: Path, tools: Tools, env: dict[str, str], log, owner_pid: int | None,
                 apps: tuple[str, ...] = ()) -> None:
        self.dir = state_dir
        self.apps = apps
        self.owner = OwnedProcess.of("owner", owner_pid) if owner_pid is not None else None
        self.tools = tools
        self.env = env
        self.log = log
        self.processes: list[OwnedProcess] = []
        self.timings: dict[str, float] = {}
        self.db_password = secrets.token_urlsafe(24)
        self.pgdata = state_dir / "pgdata"
        self.sockets = state_dir / "sockets"
        self.home = state_dir / "nautobot"
        self.logs = state_dir / "logs"
        self.nautobot_version = _installed_version(tools)
        self.nautobot_user = False  # Nautobot's processes run as the service user (decided in databases())

    # -- the steps ------------------------------------------------------------------------------

    def run(self) -> NautobotService:
        self.databases()
        self.database_schema()
        token_file = self.admin_token()
        url = self.serve()
        service = NautobotService(self.dir, url, token_file, list(self.processes), dict(self.timings))
        return service

    def databases(self) -> None:
        began = time.monotonic()
        self.dir.mkdir(parents=True, exist_ok=True)
        if any(self.dir.iterdir()):
            raise ServiceError(f"{self.dir} is not empty: give the service a new directory")
        # the service user must pass through to its own directories; nothing here is readable by others
        self.dir.chmod(0o711)
        self.logs.mkdir(mode=0o700)
        user = self.tools.service_user
        for owned in (self.pgdata, self.sockets, self.home):
            owned.mkdir(mode=0o700)
            os.chown(owned, user.pw_uid, user.pw_gid)
        self._record()
        if not self._service_user_can("-w", self.pgdata):
            raise ServiceError(f"user {user.pw_name} cannot reach {self.pgdata}: a directory above it is "
                               "closed; give a state directory under /tmp or /var/tmp")
        # Nautobot runs as the service user too, unless its venv sits where that user cannot read
        # (a checkout in a 0700 home): then as the caller, with a note
        self.nautobot_user = self._service_user_can("-x", self.tools.python)
        if not self.nautobot_user:
            self.log(f"nautobot: {user.pw_name} cannot run {self.tools.python}: Nautobot runs as uid {os.geteuid()}")
            os.chown(self.home, os.geteuid(), os.getegid())
        self._initdb()
        self._spawn("postgres", [
            self.tools.pg("postgres"), "-D", str(self.pgdata),
            "-c", "listen_addresses=", "-c", f"unix_socket_directories={self.sockets}",
            # a throwaway test database: durability buys nothing, and fsync costs seconds per migrate
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
        ], as_service_user=True)
        self._spawn("redis", [
            str(self.tools.redis_server), "--port", "0", "--unixsocket", str(self.sockets / "redis.sock"),
            "--unixsocketperm", "700", "--save", "", "--appendonly", "no", "--daemonize", "no",
            "--dir", str(self.sockets),
        ], as_service_user=True)
        self._wait_for(lambda: self._psql("SELECT 1", check=False).returncode == 0, "postgres", 60)
        self._wait_for(lambda: (self.sockets / "redis.sock").exists(), "redis", 30)
        self.timings["databases_s"] = round(time.monotonic() - began, 1)

    def database_schema(self) -> None:
        """An empty migrated database: restored from the cache, or migrated (and then cached)."""
        self._write_config()
        self._psql(f"CREATE DATABASE {DB_NAME}")
        dump, why = self.dump()
        self.log(f"nautobot: {why}")
        began = time.monotonic()
        if dump is not None and dump.is_file():
            self._run("pg_restore", [self.tools.pg("pg_restore"), "--no-owner", "--exit-on-error",
                                     "-h", str(self.sockets), "-U", DB_USER, "-d", DB_NAME, str(dump)],
                      env=self._pg_env())
            self.timings["restore_s"] = round(time.monotonic() - began, 1)
            self.log(f"nautobot: restored the migrated database in {self.timings['restore_s']} s")
            return
        self.log("nautobot: migrating an empty database (minutes on 2 cores; cached afterwards)")
        self._run("migrate", [str(self.tools.nautobot_server), "migrate", "--no-input"], env=self._nautobot_env(MIGRATED_APPS),
                  as_service_user=self.nautobot_user, timeout=MIGRATE_TIMEOUT)
        self.timings["migrate_s"] = round(time.monotonic() - began, 1)
        self.log(f"nautobot: migrated in {self.timings['migrate_s']} s")
        if dump is not None:
            partial = dump.with_name(f".{dump.name}.{os.getpid()}.partial")
            self._run("pg_dump", [self.tools.pg("pg_dump"), "-Fc", "-h", str(self.sockets), "-U", DB_USER,
                                  "-f", str(partial), DB_NAME], env=self._pg_env())
            os.replace(partial, dump)  # atomic: a parallel run sees the whole dump or none
            nautobot_db_cache.prune_other_ci_runs(dump)

    def dump(self) -> tuple[Path | None, str]:
        key = nautobot_db_cache.schema_key(CONSTRAINTS.read_bytes() if CONSTRAINTS.is_file() else b"",
                                           self.tools.pg_major())
        return nautobot_db_cache.dump_path(self.nautobot_version, key, self.env)

    def admin_token(self) -> Path:
        """A superuser and a v1 API token (40 hex), both random, made in this run: the token goes to
        a 0600 file; it travels to Nautobot on stdin, never on a command line."""
        began = time.monotonic()
        token = secrets.token_hex(20)
        password = secrets.token_urlsafe(18)
        script = (
            "import json, sys\n"
            "import nautobot\n"
            "nautobot.setup()\n"
            "from django.contrib.auth import get_user_model\n"
            "from nautobot.users.models import Token\n"
            "secret = json.loads(sys.stdin.read())\n"
            "user = get_user_model().objects.create_superuser('admin', 'admin@example.invalid', secret['password'])\n"
            "Token.objects.create(user=user, key=secret['token'], description='fabricgen tests')\n"
        )
        self._run("superuser and token", [str(self.tools.python), "-c", script], env=self._nautobot_env(),
                  stdin=json.dumps({"token": token, "password": password}), as_service_user=self.nautobot_user)
        token_file = self.dir / "token"
        _write_private(token_file, token + "\n")
        _write_private(self.dir / "admin-password", password + "\n")  # for the web UI of a dev instance
        self.timings["token_s"] = round(time.monotonic() - began, 1)
        return token_file

    def serve(self) -> str:
        """uWSGI on a free loopback port: the port is free when chosen, but another process may take
        it before uWSGI binds; then uWSGI exits and another port is tried."""
        began = time.monotonic()
        token = (self.dir / "token").read_text().strip()
        for _attempt in range(3):
            port = _free_port()
            proc = self._spawn("nautobot", [
                str(self.tools.nautobot_server), "start",
                f"--http-socket=127.0.0.1:{port}", "--master", "--die-on-term", "--need-app",
                f"--processes={UWSGI_PROCESSES}", f"--threads={UWSGI_THREADS}",
                # each worker loads Django itself: no database connection crosses a fork
                "--lazy-apps", "--buffer-size=32768", "--disable-logging",
                # uWSGI's plain http-socket closes the connection after each response yet answers
                # HTTP/1.1 without saying so: a client reusing it (requests.Session) had 3 of 30 reads
                # reset. Saying "Connection: close" makes every client open a fresh one.
                "--add-header=Connection: close",
            ], env=self._nautobot_env(), as_service_user=self.nautobot_user)
            url = f"http://127.0.0.1:{port}"
            if self._wait_for(lambda url=url: _status_ok(url, token), "nautobot", READY_TIMEOUT, proc=proc,
                              fail=False):
                self.timings["serve_s"] = round(time.monotonic() - began, 1)
                self.log(f"nautobot: {url} answers /api/status/ ({self.timings['serve_s']} s after start)")
                return url
            log_text = (self.logs / "nautobot.log").read_text(errors="replace")
            if proc.alive() or "Address already in use" not in log_text:
                raise ServiceError(f"nautobot did not answer {url}/api/status/ within {READY_TIMEOUT:.0f} s: "
                                   f"see {self.logs / 'nautobot.log'}")
            self.processes.remove(proc)
            self._record()
        raise ServiceError(f"nautobot found no free port in 3 tries: see {self.logs / 'nautobot.log'}")

    def stop_started(self) -> None:
        for proc in reversed(self.processes):
            stop(proc, signal.SIGINT if proc.name == "postgres" else signal.SIGTERM)
            stop_session(proc)
        self.processes.clear()
        self._record()

    # -- helpers ---------------------------------------------------------------------------------

    def _service_user_can(self, test_flag: str, path: Path) -> bool:
        return self._run("access check", ["test", test_flag, str(path)], as_service_user=True,
                         check=False).returncode == 0

    def _initdb(self) -> None:
        # initdb reads the superuser's password from a file (--pwfile): one the service user owns,
        # 0600 in its 0700 socket directory, gone once the cluster exists
        pwfile = self.sockets / "initdb-password"
        _write_private(pwfile, self.db_password + "\n")
        user = self.tools.service_user
        os.chown(pwfile, user.pw_uid, user.pw_gid)
        try:
            self._run("initdb", [self.tools.pg("initdb"), "-D", str(self.pgdata), "-U", DB_USER,
                                 "--auth=scram-sha-256", f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C.UTF-8"],
                      as_service_user=True)
        finally:
            pwfile.unlink(missing_ok=True)

    def _pg_env(self) -> dict[str, str]:
        # libpq reads PGPASSWORD from the environment of this child only: no file, no argv
        return {**_plain_env(), "PGPASSWORD": self.db_password}

    def _psql(self, sql: str, check: bool = True) -> subprocess.CompletedProcess:
        return self._run("psql", [self.tools.pg("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(self.sockets),
                                  "-U", DB_USER, "-d", "postgres", "-c", sql], env=self._pg_env(), check=check)

    def _nautobot_env(self, apps: tuple[str, ...] | None = None) -> dict[str, str]:
        # only what Nautobot needs: NAUTOBOT_* of the caller's shell would override the generated config
        env = {k: v for k, v in self.env.items() if not k.startswith(("NAUTOBOT_", "DJANGO_", "OTEL_", APPS_ENV))}
        env.update(NAUTOBOT_ROOT=str(self.home), NAUTOBOT_CONFIG=str(self.home / "nautobot_config.py"),
                   HOME=str(self.home))
        # the config's PLUGINS: every app for the migrate, the served ones for the server
        env[APPS_ENV] = ",".join(self.apps if apps is None else apps)
        return env

    def _write_config(self) -> None:
        settings = {
            "db_password": self.db_password,
            "sockets": str(self.sockets),
            "secret_key": secrets.token_urlsafe(50),
        }
        text = f'''"""Generated by tests/support/nautobot_service.py for one test service; holds secrets (0600)."""
from nautobot.core.settings import *  # noqa: F403

DATABASES["default"].update(
    ENGINE="django.db.backends.postgresql", NAME={DB_NAME!r}, USER={DB_USER!r},
    PASSWORD={settings["db_password"]!r}, HOST={settings["sockets"]!r}, PORT="",
)
# Redis on a unix socket in the service's private directory (django-redis and kombu URL forms)
CACHES["default"]["LOCATION"] = "unix://{settings["sockets"]}/redis.sock?db=1"
CELERY_BROKER_URL = "redis+socket://{settings["sockets"]}/redis.sock?virtual_host=0"
SECRET_KEY = {settings["secret_key"]!r}
ALLOWED_HOSTS = ["127.0.0.1"]
INSTALLATION_METRICS_ENABLED = False
METRICS_ENABLED = False
# the apps this process serves (every migrated one for `migrate`): nautobot_service.py sets the list
PLUGINS = [app for app in __import__("os").environ.get({APPS_ENV!r}, "").split(",") if app]
# INFO logs a line per object a bulk write touches (the API's "Updating interface ..."): warnings
# and errors are what a test reads in nautobot.log
LOGGING["loggers"]["nautobot"]["level"] = "WARNING"
'''
        config = self.home / "nautobot_config.py"
        _write_private(config, text)
        if self.nautobot_user:
            os.chown(config, self.tools.service_user.pw_uid, self.tools.service_user.pw_gid)

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None,
               as_service_user: bool = False) -> OwnedProcess:
        with open(self.logs / f"{name}.log", "ab") as out:
            popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                     env=env if env is not None else _plain_env(), cwd=self.dir,
                                     start_new_session=True, **self._user_args(as_service_user))
        proc = OwnedProcess.of(name, popen.pid)
        self.processes.append(proc)
        self._record()
        return proc

    def _run(self, what: str, argv: list[str], env: dict[str, str] | None = None, stdin: str | None = None,
             as_service_user: bool = False, check: bool = True, timeout: float = STEP_TIMEOUT
             ) -> subprocess.CompletedProcess:
        log_file = self.logs / f"{what.replace(' ', '-')}.log"
        with open(log_file, "ab") as out:
            try:
                done = subprocess.run(argv, input=stdin.encode() if stdin is not None else None,
                                      stdin=subprocess.DEVNULL if stdin is None else None, stdout=out,
                                      stderr=subprocess.STDOUT, env=env if env is not None else _plain_env(),
                                      cwd=self.dir, timeout=timeout, **self._user_args(as_service_user))
            except subprocess.TimeoutExpired:
                raise ServiceError(f"{what} took over {timeout:.0f} s and was killed (log: {log_file})") from None
        if check and done.returncode != 0:
            tail = log_file.read_text(errors="replace").strip().splitlines()[-1:] or [""]
            raise ServiceError(f"{what} failed (exit {done.returncode}): {tail[0][:200]} (log: {log_file})")
        return done

    def _user_args(self, as_service_user: bool) -> dict:
        if not as_service_user or os.geteuid() != 0:
            return {}
        user = self.tools.service_user
        return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}

    def _wait_for(self, ready, name: str, timeout: float, proc: OwnedProcess | None = None,
                  fail: bool = True) -> bool:
        """Poll `ready` until it holds, the process died, or `timeout` s passed (a bound, not a sleep)."""
        proc = proc or next((p for p in self.processes if p.name == name), None)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return True
            if proc is not None and not proc.alive():
                break
            time.sleep(0.1)
        if fail:
            raise ServiceError(f"{name} did not become ready within {timeout:.0f} s: see {self.logs / (name + '.log')}")
        return False

    def _record(self) -> None:
        record = {"owner": self.owner.to_json() if self.owner else None,
                  "processes": [p.to_json() for p in self.processes]}
        _write_private(self.dir / "service.json", json.dumps(record, indent=1) + "\n")


def _installed_version(tools: Tools) -> str:
    """nautobot's version from the venv's metadata (dist-info name), without starting Python there."""
    site = tools.nautobot_server.parent.parent / "lib"
    found = sorted(site.glob("python3*/site-packages/nautobot-*.dist-info"))
    if not found:
        raise ServiceError(f"no nautobot dist-info under {site}: run `make setup-nautobot`")
    return found[-1].name.removeprefix("nautobot-").removesuffix(".dist-info")


def _plain_env() -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _status_ok(url: str, token: str) -> bool:
    request = urllib.request.Request(f"{url}/api/status/", headers={"Authorization": f"Token {token}",
                                                                     "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def _write_private(path: Path, text: str) -> None:
    """Created 0600 before a byte is written, replaced atomically."""
    partial = path.with_name(f".{path.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(partial, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.nautobot_service", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    start_cmd = sub.add_parser("start", help="start a service and leave it running")
    start_cmd.add_argument("--state-dir", type=Path, required=True, help="a new or empty directory")
    start_cmd.add_argument("--env-file", type=Path, help="write NAUTOBOT_URL/NAUTOBOT_TOKEN_FILE/NAUTOBOT_PIDS here (0600)")
    start_cmd.add_argument("--app", action="append", default=[], choices=MIGRATED_APPS,
                           help="serve this Nautobot app too (repeatable)")
    stop_cmd = sub.add_parser("stop", help="stop the service of a state directory and remove it")
    stop_cmd.add_argument("--state-dir", type=Path, required=True)
    sub.add_parser("prepare", help="migrate an empty database into the dump cache")
    args = parser.parse_args(argv)

    if args.command == "stop":
        if not (args.state_dir / "service.json").is_file():
            print(f"error: {args.state_dir}/service.json not found: not a Nautobot service directory", file=sys.stderr)
            return 2
        stop_service(args.state_dir)
        return 0
    tools = find_tools()
    if isinstance(tools, str):
        print(f"error: {tools}", file=sys.stderr)
        return 2
    try:
        if args.command == "prepare":
            prepare_cache(tools)
            return 0
        service = start(args.state_dir.resolve(), tools, apps=tuple(args.app))
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.env_file:
        service.write_env_file(args.env_file)
    pids = " ".join(f"{p.name}={p.pid}" for p in service.processes)
    print(f"NAUTOBOT_URL={service.url}\nNAUTOBOT_TOKEN_FILE={service.token_file}\n# {pids}\n# {service.timings}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
