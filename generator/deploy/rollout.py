"""`fabricgen deploy`: push rendered switch configs in waves with commit-confirm.

Sequence: validate + render (errors: nothing is pushed) -> pre-flight (the deploy's own
login survives the rendered users: preflight.py) -> take the fabric's deploy lock -> for
every target, back up the running config, build the candidate (Cumulus: the rendered file
plus the switch's unmanaged subtrees, candidate.py), load it and diff, and let the guard
read the diff (guard.py: eth0, mgmt VRF, deploy user, default ACLs). Nothing is committed
yet, so an auth, host-key or guard problem anywhere stops the rollout before any switch
changes -> ask (or --yes) -> waves (waves.py). Inside a wave every changed switch rebuilds
its candidate from a fresh read, is guarded again, commits with a confirm timer, is checked
on a fresh SSH session (the subtrees fabricgen manages must equal the rendered file), and
only when the whole wave is healthy are the commits confirmed. A failed device fails its
wave: pending commits of the wave are rolled back (or left to their timers when
unreachable) and later waves are not touched.

The lock is one per fabric in the state directory (lock.py), and its run id names the files
this run uploads to the switches. A switch where a commit waits for confirmation, or where
someone's edits wait unapplied in NVUE's pending revision, is refused: this run did not
make them. SIGINT/SIGTERM (interrupt.py) roll back the running wave's pending commits,
release the lock and exit 130/143.

This module executes and prints nothing: run_deploy returns a DeployRun (deploy_run.py) with
what it has to say in order, and shows progress and asks through the presenter its caller passes
(the CLI's: rollout_report.ConsolePresenter). The waves and the refusals decided from what backup +
diff read are rollout_plan.py (pure), the console wording is rollout_report.py.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from generator.common.json_text import config_db_text
from generator.common.selection import matching
from generator.deploy import rollout_plan, rollout_report
from generator.deploy.candidate import build_candidate
from generator.deploy.day0_evidence import evidence as day0_evidence
from generator.deploy.deploy_run import DeployRun, Presenter, Quiet, Recorder
from generator.deploy.guard import GuardContext, check_diff, touches_access
from generator.deploy.interrupt import Interrupted, StopSignals
from generator.deploy.lock import DeployLock, LockError, lock_path
from generator.deploy.overrides import CONFIRM_ENV, confirm_timeout, ssh_timeout  # noqa: F401
from generator.deploy.preflight import PreflightError, check_login_users
from generator.deploy.release_gate import release_name, release_refusal
from generator.deploy.report import (
    CHANGED,
    FAILED,
    REVERTING,
    ROLLED_BACK,
    SKIPPED,
    UNCHANGED,
    WOULD_CHANGE,
    DeviceResult,
    dry_run_lines,
)
from generator.deploy.sonic_guard import check_patch, provision_refusal, refusal_line
from generator.deploy.waves import Wave, natural_key
from generator.devices.credentials import Access, CredentialsError, Target, resolve_access
from generator.devices.factory import switch_driver
from generator.devices.sessions import KeptSessions, close_quietly, for_each, open_driver, pool_size
from generator.render.managed import ManagedSet, comparable, first_difference, for_plan
from generator.render.nvue_document import DocumentError, load_tree
from generator.render.sonic_managed import ProvisionError, SonicManaged, provision_config
from generator.safe_text import for_terminal

BACKUP_ENV = "FABRICGEN_BACKUP_DIR"


class DeviceFailed(Exception):
    """A post-check found the device in the wrong state; the message says which."""


@dataclass
class Job:
    """Everything the workers share; per-device state lives in dicts keyed by name."""

    os_name: str                      # cumulus | sonic
    os_version: str
    access: Access
    rendered: dict[str, str]          # switch name -> candidate text
    backup_dir: Path
    revert_in: int
    ssh_timeout: int
    accept_new_host_keys: bool
    concurrency: int
    results: dict[str, DeviceResult]
    diffs: dict[str, str] = field(default_factory=dict)
    # Cumulus: what fabricgen manages (None: SONiC, the whole file is the config) and, per
    # switch, what must survive an apply.
    managed: ManagedSet | None = None
    guards: dict[str, GuardContext] = field(default_factory=dict)
    # what the intent's `extra:` sets per switch (render/extra.py): NVUE key paths / config_db rows
    extra_owned: dict[str, tuple] = field(default_factory=dict)
    extra_rows: dict[str, tuple] = field(default_factory=dict)
    # SONiC: what fabricgen owns in config_db (generator/render/sonic_managed.py), and whether
    # this is a day-0 provisioning (full config_db + `config reload`) instead of a day-2 patch.
    sonic: SonicManaged | None = None
    provision: bool = False
    notes: dict[str, list[str]] = field(default_factory=dict)
    kept: dict[str, tuple[str, ...]] = field(default_factory=dict)
    refused: set[str] = field(default_factory=set)
    # `--day0`: the rollout drops rail and spine-pair waves only when every switch was read and
    # showed no traffic evidence (day0_evidence.py); a switch missing here was not read.
    day0: bool = False
    traffic: dict[str, list[str]] = field(default_factory=dict)
    # Concurrent first-contact logins would each rewrite known_hosts and lose the others' keys.
    known_hosts_lock: threading.Lock = field(default_factory=threading.Lock)
    run_id: str | None = None                 # names this run's files on the switches
    stop: threading.Event = field(default_factory=threading.Event)   # SIGINT/SIGTERM arrived
    stop_reason: str = "interrupted"
    # The backup + diff session of each switch to change, kept for its wave (devices/sessions.py).
    logins: KeptSessions = field(init=False)
    _parsed: dict[str, dict] = field(default_factory=dict)
    # SONiC day 0: the running config_db text each switch's day-0 file was built from, and that
    # (file, running config_db); its wave rebuilds it only when the fresh read differs
    _provisioned: dict[str, tuple[str, tuple[str, dict]]] = field(default_factory=dict)
    # deploy --plan made with --endpoints: each switch's running-config sha256 when the plan was made
    # (devices/running_digest.py); a switch that runs anything else is refused, and named in `moved`.
    planned_running: dict[str, str] | None = None
    moved: set[str] = field(default_factory=set)
    # --diff: what each switch to change runs, and its candidate, for the old -> new lines
    before: dict[str, str] = field(default_factory=dict)
    candidates: dict[str, str] = field(default_factory=dict)

    def rendered_db(self, name: str) -> dict:
        """SONiC: the rendered config_db of a switch, parsed once for the backup phase and its wave
        (callers do not modify it)."""
        parsed = self._parsed.get(name)
        if parsed is None:
            parsed = self._parsed[name] = json.loads(self.rendered[name])
        return parsed

    def __post_init__(self) -> None:
        self.logins = KeptSessions(lambda name: _open(self, name))

    @property
    def os_release(self) -> tuple[int, int]:
        major, minor = self.os_version.split(".")[:2]
        return int(major), int(minor)

    def sonic_for(self, name: str, rendered: dict | None = None) -> SonicManaged:
        """What fabricgen owns on this SONiC switch (its rendered file decides the seeded fields)."""
        if rendered is None:
            rendered = json.loads(self.rendered[name])
        return SonicManaged.of(rendered, self.sonic.management, self.extra_rows.get(name, ()))

    def managed_of(self, name: str) -> ManagedSet | None:
        """Cumulus: what fabricgen manages on this switch: the plan's set plus its `extra:` subtrees."""
        paths = self.extra_owned.get(name)
        return self.managed.with_owned(paths) if self.managed is not None and paths else self.managed

    def scrub(self, text: str) -> str:
        password = self.access.password
        return text.replace(password, "***") if password else text


# --- drivers -------------------------------------------------------------
def _driver(job: Job, target: Target):
    return switch_driver(job.os_name, job.os_version, target.host, target.port, target.username,
                         job.access.password, job.access.known_hosts, timeout=job.ssh_timeout,
                         accept_new_host_keys=job.accept_new_host_keys, run_id=job.run_id,
                         password_hint=job.access.password_source)


def _open(job: Job, name: str):
    return open_driver(_driver(job, job.access.targets[name]),
                       job.known_hosts_lock if job.accept_new_host_keys else None)


def _config_mismatch(job: Job, running: str, rendered: str, name: str = "") -> str | None:
    """None when the running config is what the deploy wanted, else where it is not."""
    managed = job.managed_of(name)
    if managed is not None:
        # Only the managed subtrees: the switch keeps its own eth0, users, LLDP ... and NVUE
        # prints defaults and newer-release keys nobody set (generator/render/managed.py).
        try:
            _, want = load_tree(rendered)
            _, have = load_tree(running)
        except DocumentError as exc:
            return f"the running config is unreadable: {exc}"
        want = managed.managed(want)
        have = comparable(have, managed, version=job.os_version, intended=want)
        if have == want:
            return None
        return f"the running config differs from the rendered file at {first_difference(want, have)}"
    try:
        have, want = json.loads(running), json.loads(rendered)
    except json.JSONDecodeError as exc:
        return f"the running config is unreadable: {exc}"
    if job.sonic is not None:
        return _sonic_mismatch(job, name, have, want)
    return _tables_mismatch(have, want)


def _sonic_mismatch(job: Job, name: str, have: dict, want: dict | None = None) -> str | None:
    """_config_mismatch of a parsed running config_db: only fabricgen's tables and fields (the
    switch keeps its MAC, FEATURE, AAA, ...)."""
    want = job.rendered_db(name) if want is None else want
    owned = job.sonic_for(name, want)
    return _tables_mismatch(owned.owned(have, shared=True), owned.owned(want, shared=True))


def _tables_mismatch(have: dict, want: dict) -> str | None:
    if have == want:
        return None
    tables = sorted(t for t in set(have) | set(want) if have.get(t) != want.get(t))
    return f"the running config differs from the rendered file in {', '.join(tables[:5])}"


def _candidate(job: Job, name: str, driver, running: str | None = None) -> tuple[str, dict | None]:
    """(candidate text, the running config it was built from: the NVUE `set` tree or config_db)."""
    if job.managed is None and job.sonic is None:
        return job.rendered[name], None
    if running is None:
        running = driver.get_config(retrieve="running")["running"]
    _still_as_planned(job, name, running)
    if job.sonic is not None:
        return _sonic_candidate(job, name, running)
    candidate = build_candidate(job.rendered[name], running, job.managed_of(name))
    job.kept[name] = candidate.kept_management
    return candidate.text, candidate.running


def _still_as_planned(job: Job, name: str, running: str) -> None:
    """deploy --plan: the switch must run what it ran when the plan was made (in the backup + diff
    phase and again in its wave, before the commit): the candidate was reviewed against that."""
    if job.planned_running is None:
        return
    from generator.devices.running_digest import running_sha256
    from generator.drift.normalize import ConfigParseError

    planned = job.planned_running.get(name)
    try:
        now = running_sha256(job.os_name, running)
    except ConfigParseError as exc:
        now, unreadable = None, f"its running config is unreadable ({exc})"
    if planned is None:
        why = "the plan holds no running-config hash for it"
    elif now is None:
        why = unreadable
    elif now != planned:
        why = f"its running config changed since the plan was made (sha256 {now[:12]}, the plan's {planned[:12]})"
    else:
        return
    job.moved.add(name)
    job.refused.add(name)
    raise DeviceFailed(f"refused: {why}; make a new plan")


def _sonic_candidate(job: Job, name: str, running_text: str) -> tuple[str, dict]:
    built = job._provisioned.get(name) if job.provision else None
    if built is not None and built[0] == running_text:
        # the wave's fresh read is byte for byte the one the file was built from (a pure function
        # of it and the render): the same file, without parsing and copying 3,000 lines again
        return built[1]
    try:
        running = json.loads(running_text or "{}")
        rendered = job.rendered_db(name)
    except json.JSONDecodeError as exc:
        raise DeviceFailed(f"the running config_db is unreadable: {exc}") from None
    if job.provision:
        try:
            config, notes = provision_config(rendered, running, management=job.sonic.management)
        except ProvisionError as exc:
            job.refused.add(name)
            raise DeviceFailed(f"refused before provisioning: {exc}") from None
        job.notes[name] = notes
    else:
        config = job.sonic_for(name, rendered).target(rendered, running)
    if job.provision:
        # the file `config reload` reads, uploaded to every switch of the wave: one line per table,
        # not one per field (180 kB instead of 300 kB for an SN5600 leaf; a 128-switch day 0 went
        # from 22.9 s to 21.8 s). The diff is printed from the tables, one field per line.
        job._provisioned[name] = running_text, (_compact_db(config), running)
        return job._provisioned[name][1]
    return config_db_text(config) + "\n", running


def _compact_db(config: dict) -> str:
    rows = ",\n".join(f"{json.dumps(table)}: {json.dumps(rows, sort_keys=True, separators=(',', ':'))}"
                      for table, rows in sorted(config.items()))
    return "{\n" + rows + "\n}\n"


def _load(job: Job, driver, text: str, running: dict | None = None) -> None:
    if job.provision:
        driver.load_provision_candidate(config=text, running=running)
    else:
        driver.load_replace_candidate(config=text)


def _guard(job: Job, name: str, driver, diff: str, running: dict | None) -> None:
    """Refuse (discard the candidate, raise) a diff that would cut the switch off or that
    SONiC cannot apply live."""
    if not diff:
        return
    refusal = None
    if job.sonic is not None and job.provision:
        refusal = provision_refusal(job.rendered_db(name), running or {})
    elif job.sonic is not None:
        # GCU's allow-list of the intent's release: the release gate refused any other release
        reasons = check_patch(driver.patch_ops, driver.staged_base or running or {},
                              release_name(job.os_name, job.os_release))
        refusal = refusal_line(reasons) if reasons else None
    elif job.managed is not None:
        refusal = check_diff(diff, job.guards[name], running)
    if refusal:
        job.refused.add(name)
        driver.discard_config()
        raise DeviceFailed(f"refused before apply: {refusal}")


def _refuse_foreign_pending(driver) -> None:
    """A commit waiting for confirmation, or edits waiting unapplied, that this run did not make
    (we hold the fabric's lock, and detach whatever we stage): another operator, another bastion
    or a crashed run is at work on the switch. Do not race it, and never apply its edits."""
    if driver.has_pending_commit():
        raise DeviceFailed("a commit is already pending confirmation on the switch; confirm or roll it "
                           "back there (or wait for its timer), then deploy again")
    pending = driver.pending_changes()
    if pending:
        raise DeviceFailed(f"the switch has unapplied edits in its pending revision ({len(pending.splitlines())} "
                           "line(s) of `nv config diff`) that this deploy did not make; apply or detach them "
                           "there (`nv config diff`, `nv config detach`), then deploy again")


def _message(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) < 400 else text[:397] + "..."


# --- phase 1: backup + diff ------------------------------------------------
def _prepare(job: Job, name: str) -> None:
    result = job.results[name]
    driver = None
    try:
        if job.stop.is_set():
            result.status, result.message = SKIPPED, job.stop_reason
            return
        driver = _open(job, name)
        # Before anything is read or staged: another release's document is never sent. Phase 2
        # reopens the same switches minutes later; a release does not change without a reboot
        # (the NOS install), which this run's backup and lock would not survive unnoticed.
        running = driver.nos_release()
        unknown = driver.nos_release_unknown() if running is None and hasattr(driver, "nos_release_unknown") \
            else None
        refusal = release_refusal(job.os_name, running, job.os_release, unknown)
        if refusal:
            job.refused.add(name)
            raise DeviceFailed(f"refused before any change: {refusal}")
        _refuse_foreign_pending(driver)
        running = driver.get_config(retrieve="running")["running"]
        suffix = "yaml" if job.os_name == "cumulus" else "json"
        _write_backup(job.backup_dir / f"{name}.{suffix}", running)
        text, tree = _candidate(job, name, driver, running)
        if job.day0:
            job.traffic[name] = [job.scrub(found) for found in day0_evidence(job.os_name, driver, tree)]
            if job.traffic[name]:
                # the run is refused (one line per such switch): nothing to stage or diff here
                result.status, result.message = SKIPPED, "not day 0"
                return
        _load(job, driver, text, tree)
        diff = driver.compare_config()
        _guard(job, name, driver, diff, tree)
        driver.discard_config()
        job.diffs[name] = diff
        if diff:
            job.before[name], job.candidates[name] = running, text
        result.diff_lines = len(diff.splitlines())
        result.status = WOULD_CHANGE if diff else UNCHANGED
        if diff:
            job.logins.keep(name, driver)       # its wave commits over this login
            driver = None
    except Exception as exc:  # noqa: BLE001 - every device failure is reported, none aborts the others
        result.status, result.message = FAILED, job.scrub(_message(exc))
        result.refused = name in job.refused
    finally:
        if driver is not None:
            close_quietly(driver)


# --- phase 2: one wave -----------------------------------------------------
class WaveRun:
    def __init__(self, job: Job, wave: Wave):
        self.job = job
        self.wave = wave
        self.abort = threading.Event()
        self.pending: dict[str, object] = {}     # name -> open driver with our commit pending
        self.lock = threading.Lock()

    def apply(self, name: str) -> None:
        job, result = self.job, self.job.results[name]
        if result.status == UNCHANGED:
            return
        if self.abort.is_set() or job.stop.is_set():
            result.status, result.message = SKIPPED, ("not started: " + job.stop_reason if job.stop.is_set()
                                                      else "not started: its wave failed")
            return
        driver = None
        committed = False
        try:
            driver = job.logins.take(name)
            # Between the backup and now another operator may have started something here.
            _refuse_foreign_pending(driver)
            # Rebuilt from a fresh read: what the switch holds now is what the replace keeps.
            text, running = _candidate(job, name, driver)
            _load(job, driver, text, running)
            diff = driver.compare_config()
            if not diff:
                driver.discard_config()
                result.status = UNCHANGED
                return
            _guard(job, name, driver, diff, running)
            if self.abort.is_set() or job.stop.is_set():
                driver.discard_config()
                result.status, result.message = SKIPPED, ("not committed: " + job.stop_reason if job.stop.is_set()
                                                          else "not committed: its wave failed")
                return
            # From here on the switch may hold our commit even if the call fails midway.
            committed = True
            logins = getattr(driver, "reconnects", 0)
            driver.commit_config(message="fabricgen deploy", revert_in=job.revert_in)
            relogged = getattr(driver, "reconnects", 0) > logins      # the commit's reload logged in again
            if (self._needs_new_login(diff) and not relogged) or not driver.is_alive().get("is_alive"):
                close_quietly(driver)
                driver = None
            try:
                driver = self._post_check(name, driver)
            except Exception as exc:  # noqa: BLE001
                raise DeviceFailed(f"post-check after the commit: {_message(exc)}") from None
            with self.lock:
                self.pending[name] = driver
            driver = None
        except Exception as exc:  # noqa: BLE001
            self.abort.set()
            result.status, result.message = FAILED, job.scrub(_message(exc))
            if committed:
                result.message += "; " + self._undo(name, driver)
                driver = None
        finally:
            if driver is not None:
                close_quietly(driver)

    def _needs_new_login(self, diff: str) -> bool:
        """The post-check logs in afresh when the change touched the way in: on Cumulus a diff
        that sets or unsets eth0, VRF mgmt, accounts, sshd or the control-plane ACLs
        (guard.touches_access); on SONiC always (its patch and reload touch MGMT tables and
        restart services the session lives on), unless the commit itself already logged in again
        after its `config reload` (day 0: that login is the proof). Any other change is checked
        on the session that committed it: one login per switch for the wave (issue 26)."""
        return self.job.managed is None or touches_access(diff)

    def _post_check(self, name: str, driver=None):
        """The commit must still be ours and pending, and the running config must be the
        rendered file (on Cumulus: in the subtrees fabricgen manages). Without `driver` a fresh
        login first proves management access survived the change."""
        driver = driver or _open(self.job, name)
        try:
            if not driver.has_pending_commit():
                raise DeviceFailed("the commit is no longer pending confirmation (timer expired, or "
                                   "someone else confirmed or rolled it back)")
            if self.job.sonic is not None and hasattr(driver, "running_config_db"):
                # the tables as the driver parsed them, and the render parsed once per run: 300 kB of
                # JSON per switch not parsed twice more in the middle of its wave (issue 32)
                mismatch = _sonic_mismatch(self.job, name, driver.running_config_db())
            else:
                running = driver.get_config(retrieve="running")["running"]
                mismatch = _config_mismatch(self.job, running, self.job.rendered[name], name)
            if mismatch:
                raise DeviceFailed(mismatch)
        except BaseException:
            close_quietly(driver)
            raise
        return driver

    def _undo(self, name: str, driver) -> str:
        """Roll back a commit of ours; if the switch cannot be reached its timer will."""
        try:
            if driver is None or not driver.is_alive().get("is_alive"):
                if driver is not None:
                    close_quietly(driver)
                driver = _open(self.job, name)
            if not driver.has_pending_commit():
                return "no commit pending, nothing to roll back"
            driver.rollback()
            return "rolled back"
        except Exception:  # noqa: BLE001
            return f"unreachable: its confirm timer reverts it within {self.job.revert_in}s"
        finally:
            if driver is not None:
                close_quietly(driver)

    def finish(self) -> bool:
        """Confirm every pending commit if the whole wave is healthy, else roll them back."""
        job = self.job
        healthy = not any(job.results[n].status == FAILED for n in self.wave.devices) and not job.stop.is_set()
        pending = dict(sorted(self.pending.items()))
        self.pending.clear()
        if not pending:
            return healthy

        def settle(name: str) -> bool:
            driver = pending[name]
            result = job.results[name]
            # A signal during the confirms turns the remaining ones into rollbacks.
            confirm = healthy and not job.stop.is_set()
            try:
                if confirm:
                    driver.confirm_commit()
                    result.status = CHANGED
                else:
                    driver.rollback()
                    result.status, result.message = ROLLED_BACK, (job.stop_reason if job.stop.is_set()
                                                                  else "its wave failed")
                return True
            except Exception as exc:  # noqa: BLE001
                action = "confirm" if confirm else "rollback"
                result.status = FAILED if confirm else REVERTING
                result.message = (f"{action} failed ({job.scrub(_message(exc))}); its confirm timer "
                                  f"reverts it within {job.revert_in}s")
                return False
            finally:
                close_quietly(driver)

        # In parallel: every second spent here runs down the confirm timers of the others.
        settled = for_each(list(pending), settle, job.concurrency)
        return healthy and all(settled.values())


# --- orchestration -----------------------------------------------------------
def _backup_root() -> Path:
    return Path(os.environ.get(BACKUP_ENV) or Path.cwd() / "backups")


def _new_backup_dir(fabric_dir: Path) -> Path:
    """A new 0700 directory for this run's backups: running configs hold password hashes and keys."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    fabric_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if fabric_dir.stat().st_uid == os.geteuid():
        os.chmod(fabric_dir, 0o700)
    for n in range(1000):
        path = fabric_dir / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            path.mkdir(mode=0o700)
            os.chmod(path, 0o700)          # whatever the umask
            return path
        except FileExistsError:
            continue
    raise RuntimeError(f"cannot create a backup directory under {fabric_dir}")


def _write_backup(path: Path, text: str) -> None:
    """0600, a new file (O_EXCL), never through a link."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        os.fchmod(fh.fileno(), 0o600)
        fh.write(text)


def _run_parallel(phase, description: str, names: list[str], workers: int, func) -> None:
    """FUNC on every name, WORKERS at once, as one progress phase (Presenter.progress)."""
    advance = phase(description, len(names))
    for_each(names, func, workers, done=lambda _name: advance())


def _confirmed(rec: Recorder, presenter: Presenter, yes: bool, question: str) -> bool:
    """--yes, or the operator's yes after everything said so far; refused without someone to ask."""
    if yes:
        return True
    presenter.show(rec.said)
    answer = presenter.ask(question)
    if answer is None:
        rec.err(rollout_report.NO_TERMINAL)
        return False
    return answer


def run_deploy(intent_path: str, *, endpoints: str | None = None, only: str | None = None,
               limit: str | None = None, dry_run: bool = False, yes: bool = False,
               accept_new_host_keys: bool = False, provision: bool = False, show_diff: bool = False,
               plan_file: str | None = None, day0: bool = False,
               presenter: Presenter | None = None) -> DeployRun:
    """SHOW_DIFF: print every switch's changes, old -> new (redacted), before the summary; a dry run
    without it prints one line per switch and the waves. PLAN_FILE: push exactly that saved plan
    (from_plan.py), or nothing. DAY0: drop the rail and spine-pair waves, refused unless every switch
    of the fabric shows no traffic evidence read from the device (day0_evidence.py). PRESENTER: what
    the operator sees while it runs and the push question (none: nothing shown, nothing asked)."""
    presenter = presenter or Quiet()
    rec = Recorder()
    stop = StopSignals()
    try:
        with stop:
            try:
                code = _run_deploy(intent_path, rec, presenter, stop, endpoints=endpoints, only=only, limit=limit,
                                   dry_run=dry_run, yes=yes, accept_new_host_keys=accept_new_host_keys,
                                   provision=provision, show_diff=show_diff, plan_file=plan_file, day0=day0)
            except Interrupted:
                code = stop.exit_code
    except BaseException:
        presenter.show(rec.said)        # a crash: what the run said before it, then the traceback
        raise
    if stop.signum is not None:
        # One line, after the lock is gone: what the signal did to the switches.
        lock_note = {True: "; the deploy lock was released", False: ""}.get(stop.lock_released, "")
        rec.err(f"interrupted by {stop.name}: {stop.summary}{lock_note}")
        return rec.run(stop.exit_code, stop.name)
    return rec.run(code)


def _run_deploy(intent_path: str, rec: Recorder, presenter: Presenter, stop: StopSignals, *, endpoints, only, limit,
                dry_run, yes, accept_new_host_keys, provision, show_diff=False, plan_file=None,
                day0=False) -> int:
    from generator.checks.runner import run_checks
    from generator.intent.loader import IntentError, load_intent

    try:
        loaded = load_intent(intent_path)
    except IntentError as exc:
        for problem in exc.problems:
            rec.err(f"error: {problem}")
        return 1
    checked = run_checks(loaded)
    if checked.errors or checked.plan is None:
        for finding in checked.errors:
            rec.err(finding.one_line())
        rec.err(f"error: {intent_path} has {len(checked.errors)} error(s); nothing was pushed")
        return 1
    plan = checked.plan
    if provision and plan.switch_os != "sonic":
        rec.err(f"error: --provision is for switch_os sonic (day 0: full config_db + config reload); "
                f"{intent_path} targets {plan.switch_os}, where every deploy already replaces the "
                "subtrees fabricgen manages; nothing was pushed")
        return 1
    if provision and only == "hosts":
        rec.err("error: --provision applies to switches; drop --only hosts; nothing was pushed")
        return 1
    if day0 and only == "hosts":
        rec.err("error: --day0 applies to switches; drop --only hosts; nothing was pushed")
        return 1
    if day0 and limit:
        # the switches --limit leaves out are not read, and may carry the jobs the waves protect
        rec.err(f"error: --day0 with --limit {limit!r}: day 0 is proven for the whole fabric only; drop "
                "--limit (or --day0, for rail-safe waves); nothing was pushed")
        return 1
    planned = None
    if plan_file is not None:
        from generator.deploy.from_plan import PlanRefused, load_planned
        from generator.render.output import render_files

        try:
            planned = load_planned(plan_file, intent_path=intent_path, intent_text=loaded.text, fabric=plan.fabric,
                                   files=render_files(plan, loaded.text))
        except PlanRefused as exc:
            for line in exc.lines:
                rec.err(f"error: {line}")
            if not exc.unreadable:
                rec.err(f"error: {plan_file} is not what {intent_path} deploys now; make a new plan "
                        "(fabricgen plan ... --out) and review it; nothing was pushed")
            return 1
        if planned.running is None and only != "hosts":
            # never inferred: without the hashes nobody checked the switches since the review
            rec.err(f"warning: {plan_file} holds no running-config hashes (made without --endpoints): a hand "
                    "change on a switch since the plan is not detected (the push replaces what fabricgen "
                    "manages, as a deploy without --plan does); make the plan with --endpoints to pin them")

    fabric_dir = _backup_root() / plan.fabric
    try:
        lock = DeployLock(lock_path(plan.fabric), plan.fabric)
        with stop.deferred():           # never unwound between the link and knowing the lock is ours
            lock.acquire()
    except LockError as exc:
        rec.err(f"error: {exc}")
        return 1
    try:
        return _deploy_locked(loaded, plan, fabric_dir, rec, presenter, endpoints=endpoints, only=only, limit=limit,
                              dry_run=dry_run, yes=yes, accept_new_host_keys=accept_new_host_keys,
                              provision=provision, stop=stop, run_id=lock.run_id, show_diff=show_diff,
                              planned=planned, day0=day0)
    except (CredentialsError, PreflightError) as exc:
        rec.err(f"error: {exc}; nothing was pushed")
        return 1
    finally:
        stop.lock_released = lock.release()


def _deploy_locked(loaded, plan, fabric_dir: Path, rec: Recorder, presenter: Presenter, *, endpoints, only, limit,
                   dry_run, yes, accept_new_host_keys, provision=False, stop: StopSignals | None = None,
                   run_id: str | None = None, show_diff: bool = False, planned=None,
                   day0: bool = False) -> int:
    stop = stop or StopSignals()
    from generator.render.output import render_files, switch_files, write_tree

    if planned is not None:
        files = planned.files
    elif only == "switches":
        # the switch configs only: no plan.json, cabling, inventory or host files to render and hash
        files = dict(switch_files(plan))
    else:
        files = render_files(plan, loaded.text)
    names = sorted(matching((sw.name for sw in plan.switches), limit), key=natural_key)
    backup_dir = rec.backup_dir = _new_backup_dir(fabric_dir)
    status = 0
    if stop.event.is_set():            # arrived while the lock was being taken
        return stop.exit_code
    if only in (None, "switches"):
        if not names:
            rec.err(f"error: --limit {limit!r} matches no switch of fabric {plan.fabric}")
            return 1
        status = _deploy_switches(loaded, plan, files, names, backup_dir, rec, presenter, endpoints=endpoints,
                                  dry_run=dry_run, yes=yes, accept_new_host_keys=accept_new_host_keys,
                                  provision=provision, stop=stop, run_id=run_id, show_diff=show_diff,
                                  planned_running=planned.running if planned is not None else None,
                                  day0=day0)
        if status:
            return status
    if stop.event.is_set():
        return stop.exit_code
    if only in (None, "hosts"):
        status = _deploy_hosts(files, backup_dir, rec, presenter, write_tree, intent_path=loaded.file,
                               endpoints=endpoints, only=only, limit=limit, dry_run=dry_run, yes=yes)
    return status


def _extra_ownership(plan, names) -> dict[str, dict[str, tuple]]:
    """Job's extra_owned / extra_rows: what the intent's `extra:` sets on each switch to deploy."""
    if not plan.extra:
        return {}
    from generator.render.extra import nvue_owned, sonic_owned

    by_name = {sw.name: sw for sw in plan.switches}
    if plan.switch_os == "cumulus":
        return {"extra_owned": {n: nvue_owned(plan, by_name[n]) for n in names if n in by_name}}
    return {"extra_rows": {n: sonic_owned(plan, by_name[n]) for n in names if n in by_name}}


def _deploy_switches(loaded, plan, files, names, backup_dir, rec: Recorder, presenter: Presenter, *, endpoints,
                     dry_run, yes, accept_new_host_keys, provision=False, stop: StopSignals | None = None,
                     run_id: str | None = None, show_diff: bool = False,
                     planned_running: dict[str, str] | None = None, day0: bool = False) -> int:
    stop = stop or StopSignals()
    suffix = "startup.yaml" if plan.switch_os == "cumulus" else "config_db.json"
    access = resolve_access(plan, names, loaded.file, endpoints)
    by_name = {sw.name: sw for sw in plan.switches}
    managed = guards = None
    if plan.switch_os == "cumulus":
        def where(key: str) -> str:
            line = loaded.line_of(key)
            return f"{loaded.file}:{line}: " if line else f"{loaded.file}: "

        check_login_users(plan, {access.targets[n].username for n in names}, access.password, where)
        managed = for_plan(plan)
        guards = {n: GuardContext(
            management=plan.management is not None,
            mgmt_address=f"{by_name[n].mgmt_ip}/{plan.management.prefix_len}" if plan.management else None,
            mgmt_gateway=plan.management.gateway if plan.management else None,
            deploy_user=plan.deploy_user, login_user=access.targets[n].username) for n in names}
    intent_deploy = loaded.intent.deploy
    concurrency = intent_deploy.concurrency
    rec.results.update((n, DeviceResult(n)) for n in names)
    job = Job(os_name=plan.switch_os, os_version=".".join(map(str, plan.switch_os_version)), access=access,
              rendered={n: files[f"switches/{n}/{suffix}"] for n in names}, backup_dir=backup_dir,
              revert_in=confirm_timeout(intent_deploy.confirm_timeout),
              ssh_timeout=ssh_timeout(30), accept_new_host_keys=accept_new_host_keys,
              concurrency=concurrency, results=rec.results,
              managed=managed, guards=guards or {},
              sonic=SonicManaged(plan.management is not None) if plan.switch_os == "sonic" else None,
              provision=provision, run_id=run_id, stop=stop.event, planned_running=planned_running,
              day0=day0, **_extra_ownership(plan, names))
    try:
        started = time.monotonic()
        presenter.show(rec.said)
        with presenter.progress() as phase, stop.deferred():
            # Nothing changes in this phase: as many sessions at once as the bastion allows
            # (devices/sessions.py), not the waves' blast radius.
            _run_parallel(phase, "backup + diff", names, pool_size(len(names), concurrency),
                          lambda n: _prepare(job, n))
        if stop.event.is_set():
            stop.summary = f"stopped during backup + diff, nothing was committed; backups in {backup_dir}"
            return stop.exit_code
        # Keys are now recorded: every later login is checked strictly.
        job.accept_new_host_keys = False

        if day0:
            # Every switch of the fabric was read (--limit is refused with --day0); one line per
            # switch that shows traffic, or could not be read, and nothing is pushed.
            refusals = rollout_plan.day0_refusals(names, job.traffic, job.results)
            if refusals:
                for n, found in refusals:
                    rec.err(f"error: {n}: not day 0: " + for_terminal("; ".join(found)[:600]))
                rec.err(f"error: --day0 refused: {len(refusals)} of {len(names)} switch(es) show traffic "
                        "evidence or could not be read; deploy without --day0 for rail-safe waves; "
                        "nothing was pushed")
                return 1
        order = rollout_plan.plan_rollout(plan, names, job.results, concurrency, day0=day0)
        waves, changed, failed = order.waves, order.changed, order.failed
        for wave in waves:
            for n in wave.devices:
                job.results[n].wave, job.results[n].label = wave.index, wave.label
        unchanged = order.unchanged(len(names))
        rec.out(f"{plan.fabric}: {len(names)} switch(es): {len(changed)} to change, {unchanged} unchanged, "
                f"{len(failed)} failed before any change; backups in {backup_dir}")
        kept = list(dict.fromkeys(label for n in names for label in job.kept.get(n, ())))
        if managed is not None and not managed.management and kept:
            rec.out(f"kept the switches' own management ({', '.join(kept)}): the intent has no management section")
        if day0:
            rec.out(f"day 0 (--day0): no switch shows traffic evidence (FRR BGP, data ports, LLDP, counters, "
                    f"flat files, snippets): the canary, then up to {concurrency} switch(es) per wave, rails "
                    "and spine pairs together")
        notes = list(dict.fromkeys(note for n in names for note in job.notes.get(n, ())))
        if notes:
            rec.out(f"provisioning {'; '.join(notes)}")
        if show_diff:
            for text in rollout_report.changes(job, plan, changed):
                rec.out(text)
        if dry_run:
            for line in dry_run_lines(job.results):
                rec.out(line)
            rec.table(job.results, dry_run=True)
            if failed:
                rec.err(rollout_report.refused_before_any_change(job, failed))
                return 1
            rec.out("dry run: nothing was committed" + ("" if show_diff else "; --diff prints each switch's diff"))
            return 0
        if failed:
            for n in names:
                if job.results[n].status != FAILED:
                    job.results[n].status = SKIPPED if job.results[n].status == WOULD_CHANGE else UNCHANGED
            rec.table(job.results)
            rec.err(rollout_report.refused_before_any_change(job, failed))
            return 1
        if not changed:
            rec.table(job.results)
            return 0
        for n in changed:
            rec.out(f"  {n}: {job.results[n].diff_lines} diff lines")
        if not _confirmed(rec, presenter, yes, f"push {len(changed)} switch(es) in {len(waves)} wave(s)?"):
            return 1

        for n in changed:
            job.results[n].status = SKIPPED  # until its wave runs
        stopped_at: Wave | None = None
        presenter.show(rec.said)
        with presenter.progress() as phase, stop.deferred():
            for wave in waves:
                if stop.event.is_set():
                    break
                run = WaveRun(job, wave)
                _run_parallel(phase, f"wave {wave.index} {wave.label}", list(wave.devices), concurrency,
                              run.apply)
                healthy = run.finish()
                if not healthy and not stop.event.is_set():
                    stopped_at = wave
                    break
        if stop.event.is_set():
            for n in changed:
                r = job.results[n]
                if r.status == SKIPPED and not r.message:
                    r.message = "not started: " + job.stop_reason
            rec.table(job.results)
            stop.summary = rollout_report.interrupt_summary(job, changed, backup_dir)
            return stop.exit_code
        stop.summary = "the switches were deployed before it came (report above)"
        if stopped_at is not None:
            for n in names:
                r = job.results[n]
                if r.wave > stopped_at.index and r.status == SKIPPED:
                    r.message = f"not started: wave {stopped_at.index} failed"
        seconds = time.monotonic() - started
        rec.table(job.results)
        if stopped_at is not None:
            rec.err(f"error: wave {stopped_at.index} ({stopped_at.label}) failed; the rollout stopped, later waves "
                    f"were not touched; backups in {backup_dir}")
            return 1
        rec.out(f"switches deployed in {seconds:.1f}s")
        return 0
    finally:
        job.logins.close_all()        # sessions of switches whose wave never came (a failure, a stop, no)


def _endpoint_host_access(endpoints: str | None) -> dict:
    """run_hosts_playbook's login arguments from the endpoints file's `hosts:` section, as drift,
    verify and discover read it (user, ssh_key, extravars; a lab's per-host servers)."""
    if endpoints is None:
        return {}
    from generator.devices.credentials import endpoint_host_access, endpoint_host_vars
    from generator.devices.endpoints import hosts_section

    section, _ = hosts_section(endpoints)
    extravars, ssh_key = endpoint_host_access(section, endpoints)
    return {"extravars": extravars, "ssh_key": ssh_key, "host_vars": endpoint_host_vars(section)}


def _deploy_hosts(files, backup_dir, rec: Recorder, presenter: Presenter, write_tree, *, intent_path, endpoints,
                  only, limit, dry_run, yes) -> int:
    if not any(rel.startswith("hosts/") for rel in files):
        rec.out("hosts: none in the plan")
        return 0
    if endpoints is not None:
        from generator.devices.endpoints import hosts_section

        section, reason = hosts_section(endpoints)
        if section is None:
            # An endpoints file that only lists switches (the lab) has no route to the GPU servers.
            line = f"hosts: skipped: {reason}"
            if only == "hosts":
                rec.err("error: " + line)
                return 1
            rec.out(line)
            return 0
    try:
        from generator.deploy.hosts import run_hosts_playbook
    except ImportError:
        rec.out("hosts: not available")
        return 1 if only == "hosts" else 0
    if not dry_run and not _confirmed(rec, presenter, yes, "configure the hosts?"):
        return 1
    render_dir = write_tree(files, backup_dir / "render")
    known_hosts = (Path(endpoints) if endpoints else Path(intent_path)).resolve().parent / "known_hosts"
    try:
        access = _endpoint_host_access(endpoints)
        absent = sorted({rel.split("/")[1] for rel in files if rel.startswith("hosts/") and rel.count("/") >= 2}
                        - set(access.get("host_vars") or {})) if access.get("host_vars") else []
        if absent:
            rec.out(f"hosts: {len(absent)} not in the endpoints file's hosts.servers (not installed), skipped: "
                    f"{', '.join(absent[:8])}{' ...' if len(absent) > 8 else ''}")
        presenter.show(rec.said)        # the playbook takes minutes: what came before is on the screen
        result = rec.hosts = run_hosts_playbook(
            render_dir, render_dir / "inventory.yml", limit=limit, check=dry_run, diff=dry_run,
            known_hosts=known_hosts if known_hosts.is_file() else None, **access)
    except (OSError, RuntimeError) as exc:
        rec.err(f"error: hosts: {_message(exc)}")
        return 1
    for host, task, message in result.failures:
        # the pre-flight lines name their host already ("gpu02: rail 1 ...")
        message = message.removeprefix(f"{host}: ")
        rec.err(f"hosts: {host}: {task}: {message}")
    # hosts this run drained and did not give back to the scheduler, with why (issue 24, item 3)
    for host, why in result.left_drained:
        rec.err(f"hosts: {host}: left drained: {why}")
    # Ansible goes on past an unreachable host; the playbook stops the rollout after its batch (issue 33)
    if result.lost:
        rec.err(f"hosts: rollout stopped after the batch that lost {', '.join(result.lost)} (unreachable): "
                "no later batch started")
    for host, why in result.not_restored:
        rec.err(f"hosts: {host}: {why}")
    # a drain someone else set or ended during the run: theirs, not resumed (issue 33, item 3)
    for host, what in result.drain_notes:
        rec.err(f"hosts: {host}: warning: {what}")
    # a bad rail port on a host whose settings are in place: not a failure of the run (issue 24)
    for host, what in result.port_warnings:
        rec.err(f"hosts: {host}: warning: {what}")
    rec.out(f"hosts: {result.status}: {len(result.hosts)} host(s), {result.changed} change(s)"
            + (f", {len(result.left_drained)} left drained by this run: "
               + ", ".join(h for h, _ in result.left_drained) if result.left_drained else ""))
    return 0 if result.ok and not result.not_restored else 1
