"""`fabricgen render` at scale: render and write every device's files over the available
cores, hashing each file as it is written, without holding the render in memory.

render_files() (output.py) keeps its contract for the in-memory users (tests, deploy,
drift, plan, verify). This path writes the same bytes: the devices are split across
forked workers, each renders its slice, writes each file once into the temporary output
directory and hands back (path, sha256) pairs; the parent writes the fabric-wide files
meanwhile and then manifest.json from all the hashes (sorted, so the bytes do not depend
on the number of workers). Workers: len(os.sched_getaffinity(0)), or FABRICGEN_WORKERS.
On Linux a worker is killed when its render dies (_die_with), so a killed render leaves no
worker behind.
"""

from __future__ import annotations

import ctypes
import errno
import gc
import hashlib
import os
import pickle
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from generator.common.errors import FabricgenError
from generator.plan.model import FabricPlan
from generator.render.output import SCRIPT_MODE, write_file

if TYPE_CHECKING:
    from generator.render.reuse import PreviousRender

WORKERS_ENV = "FABRICGEN_WORKERS"


class WorkerError(FabricgenError, RuntimeError):
    """A render worker failed: the first line of what it raised."""


def worker_count() -> int:
    """FABRICGEN_WORKERS if set (>= 1), else the CPUs this process may run on."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise ValueError(f"{WORKERS_ENV}={raw!r}: give a whole number of workers, 1 or more")
        return int(raw)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:                      # not Linux
        return max(1, os.cpu_count() or 1)


def _write(root: Path, rel: str, content: str, made: set[str], seen: dict[tuple[str, bool], str],
           previous: PreviousRender | None = None) -> str:
    """Write one file below ROOT (new, never followed through a link); its sha256.

    A file whose bytes and mode this worker has written before becomes a hard link to that
    first copy. Most host files are the same on every host (the QoS unit, the udev rule, nccl.conf,
    nccl.env and sysctl.conf wherever hosts share their rail names): at 98k GPUs that is ~60k of
    ~90k files. A link adds a directory entry but no inode, and inode allocation is what file
    creation costs on ext4 after a large delete (the allocator skips recently freed inodes one by
    one, `recently_deleted()` in fs/ext4/ialloc.c); a re-render deletes the previous tree, so
    every render but the first meets that. Readers see plain files with the same bytes; an
    in-place edit of one (rather than a rewrite) would show in its twins, which is why rendered files
    are read-only (output.FILE_MODE). With PREVIOUS (the render
    this one replaces), an unchanged file is a hard link to its previous copy (generator.render.reuse)."""
    data = content.encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    parent = rel.rpartition("/")[0]
    if parent and parent not in made:
        (root / parent).mkdir(parents=True, exist_ok=True)
        made.add(parent)
    path = f"{root}/{rel}"                  # no Path per file (65k at 98k GPUs): REL is our own relative name
    script = rel.endswith(".sh")
    first = seen.get((digest, script))
    if first is None and previous is not None:
        first = previous.source(rel, digest, len(data), script)
    if first is not None:
        try:
            os.link(first, path, follow_symlinks=False)
            seen.setdefault((digest, script), path)
            return digest
        except OSError as exc:
            # ext4 allows 65,000 links to an inode: start a new copy. A previous tree on another
            # file system, or going away under us, is only a missed shortcut.
            if exc.errno != errno.EMLINK and (previous is None or exc.errno not in (errno.EXDEV, errno.ENOENT)):
                raise
    write_file(path, data)
    if script:
        os.chmod(path, SCRIPT_MODE)             # as write_tree: scripts executable whatever the umask
    seen[(digest, script)] = path
    return digest


def _device_jobs(plan: FabricPlan) -> list[Callable[[], Iterable[tuple[str, str]]]]:
    from generator.render.hosts import render_host

    jobs: list[Callable[[], Iterable[tuple[str, str]]]] = []
    if plan.switch_os == "cumulus":
        from generator.render.nvue import render_switch

        for sw in plan.switches:
            jobs.append(lambda sw=sw: ((f"switches/{sw.name}/startup.yaml", render_switch(plan, sw)),))
    else:
        from generator.render.sonic import render_config_db

        for sw in plan.switches:
            jobs.append(lambda sw=sw: ((f"switches/{sw.name}/config_db.json", render_config_db(plan, sw)),))
    for host in plan.hosts:
        jobs.append(lambda host=host: sorted(render_host(plan, host).items()))
    return jobs


def _warm(plan: FabricPlan) -> None:
    """Compile the templates and the per-plan shared files once, before forking, so that every
    worker inherits them instead of building its own."""
    from generator.render.environment import environment
    from generator.render.hosts import _shared

    env = environment()
    for name in env.list_templates():
        if name.endswith(".j2"):
            env.get_template(name)
    if plan.hosts:
        _shared(plan)


def _run_jobs(jobs, root: Path, stats: dict[str, float], previous: PreviousRender | None = None) -> list[tuple[str, str]]:
    """Render and write JOBS; STATS gets the seconds spent rendering and writing."""
    made: set[str] = set()
    seen: dict[tuple[str, bool], str] = {}
    out = []
    rendering = writing = 0.0
    clock = time.perf_counter
    for job in jobs:
        t0 = clock()
        files = job()
        t1 = clock()
        for rel, content in files:
            out.append((rel, _write(root, rel, content, made, seen, previous)))
        rendering += t1 - t0
        writing += clock() - t1
    stats["render_s"] = stats.get("render_s", 0.0) + rendering
    stats["write_s"] = stats.get("write_s", 0.0) + writing
    return out


def _child(jobs, root: Path, wfd: int, previous: PreviousRender | None) -> None:
    """In a forked worker: render and write JOBS, send the hashes (or the error) to WFD, exit."""
    code = 0
    try:
        gc.disable()                        # acyclic garbage; keeps the inherited pages shared
        stats: dict[str, float] = {}
        payload = ("ok", (_run_jobs(jobs, root, stats, previous), stats))
    except OSError as exc:
        code, payload = 1, ("oserror", (exc.errno, exc.strerror, exc.filename))
    except BaseException:                   # noqa: BLE001 - everything must reach the parent
        code, payload = 1, ("error", traceback.format_exc().strip().splitlines()[-1])
    try:
        with os.fdopen(wfd, "wb") as fh:
            pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        os._exit(code)


def _collect(payload, stats: dict[str, float]) -> list[tuple[str, str]]:
    kind, value = payload
    if kind == "ok":
        written, theirs = value
        for key, seconds in theirs.items():
            stats[key] = stats.get(key, 0.0) + seconds
        return written
    if kind == "oserror":
        raise OSError(*value)
    raise WorkerError(value)


def write_devices(plan: FabricPlan, root: Path, also: Callable[[], list[tuple[str, str]]],
                  workers: int | None = None, stats: dict[str, float] | None = None,
                  previous: PreviousRender | None = None) -> list[tuple[str, str]]:
    """Render and write every device file of PLAN below ROOT over WORKERS processes while the
    calling process runs ALSO (which writes other files and returns their hashes). Every
    (path, sha256) written, unsorted. STATS, when given, adds up the seconds the workers spent
    rendering (render_s) and writing (write_s), and those of ALSO (fabric_s)."""
    workers = worker_count() if workers is None else workers
    stats = {} if stats is None else stats
    jobs = _device_jobs(plan)

    def fabric_wide() -> list[tuple[str, str]]:
        t0 = time.perf_counter()
        written = also()
        stats["fabric_s"] = time.perf_counter() - t0
        return written

    if workers <= 1 or not hasattr(os, "fork") or len(jobs) < 2 * workers:
        return fabric_wide() + _run_jobs(jobs, root, stats, previous)
    _warm(plan)
    # The plan moves to the permanent generation: no collection in a worker walks (and so copies)
    # its pages. No gc.collect() first: the gc docs (gc.freeze) advise against it before a fork
    # ("avoiding creation of freed 'holes' in memory pages in the parent process"), and in a process
    # holding much more than the plan (a test session, a service) it cost a full walk per render.
    # Objects someone else froze stay frozen: unfreeze only what this call froze.
    ours = gc.get_freeze_count() == 0
    gc.freeze()
    children: list[tuple[int, int]] = []
    parent, prctl = os.getpid(), _prctl()
    try:
        for k in range(workers):
            rfd, wfd = os.pipe()
            pid = os.fork()
            if pid == 0:                    # pragma: no cover - runs in the child
                _die_with(parent, prctl)
                os.close(rfd)
                _child(jobs[k::workers], root, wfd, previous)
            os.close(wfd)
            children.append((pid, rfd))
        results = fabric_wide()
        error: BaseException | None = None
        for pid, rfd in children:
            with os.fdopen(rfd, "rb") as fh:
                raw = fh.read()
            _, status = os.waitpid(pid, 0)
            try:
                if not raw:
                    raise WorkerError(f"render worker {pid} died ({_status(status)})")
                results += _collect(pickle.loads(raw), stats)
            except BaseException as exc:    # noqa: BLE001 - reap every worker first
                error = error or exc
        children = []
        if error is not None:
            raise error
        return results
    finally:
        for pid, rfd in children:           # the parent failed: stop and reap the workers
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                os.close(rfd)
            except OSError:
                pass
        if ours:
            gc.unfreeze()


# <linux/prctl.h>: deliver a signal to this process when its parent dies
PR_SET_PDEATHSIG = 1


def _prctl():
    """libc's prctl, looked up before forking (a child should do as little as it can); None off
    Linux or without a C library ctypes can load."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with(parent: int, prctl) -> None:
    """In a forked worker: be killed when the render that forked it dies. A render killed with
    SIGKILL cannot stop its workers, which would go on writing into its temporary tree and hold
    the tree's lock (leftovers.py) so no later render could remove it. prctl(2) PR_SET_PDEATHSIG
    sends SIGKILL when the forking *thread* exits (render forks from the thread that waits for the
    workers). The parent may have died before the prctl took effect: then this process has
    already been reparented, and getppid() tells."""
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.WEXITSTATUS(status)}" if os.WIFEXITED(status) else str(status)
