"""Re-rendering into the same directory: files that did not change keep their inode.

`fabricgen render` fills a temporary sibling and swaps it in, then deletes the previous tree.
On ext4 without a journal every new inode costs more after a large delete (the allocator
skips recently freed inodes one by one, `recently_deleted()` in fs/ext4/ialloc.c), and deleting
the previous tree frees one inode per file: a GitOps loop that re-renders a 98k-GPU fabric would
pay both on every run. A file whose bytes did not change is instead hard-linked from the previous
tree, so it takes no new inode and deleting the old tree frees none.

Linked only when the previous copy is certainly the bytes we would write: the previous
manifest lists the same sha256 for that path, the file is a regular file of ours (owner, mode,
size) that nobody changed after the manifest was written (mtime), and every directory on the
way is a real directory, not a link. Anything else is written anew.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from generator.render.output import FILE_MODE, MANIFEST, SCRIPT_MODE, read_manifest


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@dataclass
class PreviousRender:
    root: str
    files: dict[str, str]               # relative path -> sha256, from its manifest.json
    written_ns: int                     # when its manifest was written: the render's last file
    uid: int
    plain_mode: int                     # what a new file gets (FILE_MODE & ~umask); scripts get SCRIPT_MODE
    _dirs: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def of(cls, directory: str | Path) -> PreviousRender | None:
        """The render in DIRECTORY, when it is one fabricgen wrote (read_manifest's rules)."""
        manifest = read_manifest(Path(directory))
        if manifest is None:
            return None
        try:
            written = os.lstat(Path(directory) / MANIFEST).st_mtime_ns
        except OSError:
            return None
        return cls(root=str(directory), files=manifest["files"], written_ns=written, uid=os.geteuid(),
                   plain_mode=FILE_MODE & ~_umask())

    def _real_dir(self, rel_dir: str) -> bool:
        """Every component of REL_DIR below the root is a directory, not a symlink to one."""
        known = self._dirs.get(rel_dir)
        if known is None:
            parent, _, _ = rel_dir.rpartition("/")
            try:
                known = (not parent or self._real_dir(parent)) and \
                    stat.S_ISDIR(os.lstat(f"{self.root}/{rel_dir}").st_mode)
            except OSError:
                known = False
            self._dirs[rel_dir] = known
        return known

    def source(self, rel: str, digest: str, size: int, script: bool) -> str | None:
        """The previous tree's copy of REL to hard-link, or None to write the file anew."""
        if self.files.get(rel) != digest:
            return None
        parent = rel.rpartition("/")[0]
        if parent and not self._real_dir(parent):
            return None
        path = f"{self.root}/{rel}"
        try:
            st = os.lstat(path)
        except OSError:
            return None
        mode = SCRIPT_MODE if script else self.plain_mode
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != self.uid or stat.S_IMODE(st.st_mode) != mode
                or st.st_size != size or st.st_mtime_ns > self.written_ns):
            return None
        return path


__all__ = ["PreviousRender"]
