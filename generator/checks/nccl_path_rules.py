"""FG320-FG321: NCCL settings whose value is a file or a plugin library.

NCCL reads these in every rank of every job, as the job's user (often root in
containers): a relative path resolves against whatever directory the job starts in, a
debug file is created and overwritten (NCCL environment variable docs, NCCL_DEBUG_FILE:
"will cause NCCL to create and overwrite any previous files of that name"), and a plugin
path is dlopen()ed, i.e. run. Each rule is one function; its docstring is what
`fabricgen validate --explain CODE` prints.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from generator.checks.registry import ERROR, WARNING, CheckContext, rule
from generator.plan.nccl import setting_text

# Files NCCL writes (creates and truncates).
WRITTEN_FILES = ("NCCL_DEBUG_FILE", "NCCL_TOPO_DUMP_FILE", "NCCL_GRAPH_DUMP_FILE")
# Files NCCL reads.
READ_FILES = ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE", "NCCL_CONF_FILE")
# Shared libraries NCCL dlopen()s: a bare name is looked up as libnccl-<kind>-<name>.so (or the
# library name itself) on the loader's path, which is fine; a value with a '/' is a file path.
LIBRARIES = ("NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN", "NCCL_ENV_PLUGIN",
             "NCCL_GIN_PLUGIN", "NCCL_RMA_PLUGIN", "NCCL_IBVERBS_LIB")
PATH_KEYS = WRITTEN_FILES + READ_FILES + LIBRARIES

# System directories: a file NCCL writes there destroys what was there (/etc/passwd).
SYSTEM_DIRS = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/dev", "/proc",
               "/sys", "/root", "/var/lib", "/var/spool", "/var/cache", "/var/run", "/run")
# Where such paths usually point; anything else is allowed but reported, so a reviewer looks twice.
USUAL_DIRS = {
    "written": ("/tmp", "/var/tmp", "/var/log", "/dev/shm", "/scratch", "/home", "/data", "/workspace"),
    "read": ("/etc", "/usr/share", "/usr/local/share", "/opt", "/var/run/nvidia-topologyd", "/run/nvidia-topologyd",
             "/home", "/scratch", "/workspace"),
    "library": ("/usr/lib", "/usr/lib64", "/usr/local/lib", "/usr/local/lib64", "/opt", "/usr/local/nccl"),
}


def _kind(key: str) -> str:
    return "written" if key in WRITTEN_FILES else "read" if key in READ_FILES else "library"


def _under(path: str, dirs: tuple[str, ...]) -> bool:
    return any(path == d or path.startswith(d + "/") for d in dirs)


def _paths(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """(key, one path) for every path-valued setting; plugin keys may list names with commas."""
    for key, raw in ctx.intent.nccl.settings.items():
        if key not in PATH_KEYS or isinstance(raw, bool):
            continue
        text = setting_text(raw)
        for part in (text.split(",") if key in LIBRARIES else [text]):
            if key in LIBRARIES and "/" not in part:
                continue            # a plugin or library name, resolved by the dynamic loader
            yield key, part


@rule("FG320", ERROR, "NCCL file or plugin path that is relative, climbs with .., or overwrites a system file",
      stage="intent")
def nccl_path_unsafe(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """A path-valued NCCL setting (NCCL_DEBUG_FILE, NCCL_TOPO_FILE, NCCL_GRAPH_FILE,
    NCCL_*_DUMP_FILE, NCCL_CONF_FILE, or a plugin such as NCCL_NET_PLUGIN given as a
    path) that NCCL would resolve differently on every job or that does damage.

    - Relative paths resolve against each job's working directory: the same nccl.conf
      then reads a different topology, or loads a different plugin, per job.
      `NCCL_NET_PLUGIN=../../tmp/evil` makes every rank dlopen() whatever a user put there.
    - `..` components hide where a path really points.
    - NCCL creates and overwrites its debug and dump files. In a system directory
      (/etc, /usr, /bin, /lib, /boot, /dev, /proc, /sys, /root, /var/lib, /run, ...)
      a job running as root, as containers often do, truncates the file:
      NCCL_DEBUG_FILE=/etc/passwd destroys the user database of every GPU server on the
      first INFO log line. This is an error, not a warning, because the damage happens
      before anyone reads a warning, on every host at once.

    Write an absolute path (debug output under /tmp or /var/log, e.g.
    /var/log/nccl/%h.%p.log), or a bare plugin name (aws-ofi) that the loader finds."""
    for key, path in _paths(ctx):
        where = f"nccl.settings.{key}"
        if not path.startswith("/"):
            yield where, (f"{key}={path!r} is relative: each job would resolve it in its own working directory; "
                          "write an absolute path" + ("" if key not in LIBRARIES else " or a bare plugin name"))
        elif ".." in path.split("/"):
            yield where, f"{key}={path!r} climbs with '..': write the path it means, e.g. {posixpath.normpath(path)}"
        elif key in WRITTEN_FILES and _under(posixpath.normpath(path), SYSTEM_DIRS):
            yield where, (f"{key}={path!r} is in a system directory and NCCL creates and overwrites it (as root "
                          "it destroys the file): write it under /tmp or /var/log, e.g. /var/log/nccl/%h.%p.log")


@rule("FG321", WARNING, "NCCL file or plugin path outside the usual places", stage="intent")
def nccl_path_unusual(ctx: CheckContext) -> Iterator[tuple[str, str]]:
    """An absolute path-valued NCCL setting that points outside where such files usually
    live: debug and dump files under /tmp, /var/tmp, /var/log, /dev/shm or a home or
    scratch area; topology and graph files under /etc, /usr/share, /opt or
    /var/run/nvidia-topologyd; plugin libraries under /usr/lib, /usr/local/lib or /opt.
    Not wrong in itself, but every rank of every job opens it (and loads a plugin as
    code): a reviewer should see where. FG320 reports the dangerous cases."""
    for key, path in _paths(ctx):
        if not path.startswith("/") or ".." in path.split("/"):
            continue                # FG320
        norm = posixpath.normpath(path)
        if key in WRITTEN_FILES and _under(norm, SYSTEM_DIRS):
            continue                # FG320
        usual = USUAL_DIRS[_kind(key)]
        if not _under(norm, usual):
            yield f"nccl.settings.{key}", (f"{key}={path!r} is outside the usual places for it ({', '.join(usual[:3])}, "
                                           "...): check that every GPU server has it and that only root can change it")
