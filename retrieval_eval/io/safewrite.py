"""Writing a user's file so that nothing is ever lost or half-written.

Every file this package writes for a user (``score --out``, ``convert --out``, ``drift --fix``
and its ``.bak``, the demo's outputs, ``write_*`` of :mod:`retrieval_eval.io.writers`) goes
through :class:`LockedFile`. The rules, and why:

- **Temp file, fsync, rename.** The bytes go to a temporary file in the target's folder, are
  flushed to disk and then renamed over the target, so a crash, a full disk or ``kill -9`` at
  any moment leaves the old file or the new one, never half of either. The ``.bak`` is written
  the same way: opening it in place would leave a truncated backup and destroy the previous
  one.
- **No temp file outlives the process.** SIGTERM (what ``timeout``, CI cancellation and
  ``docker stop`` send) and SIGINT remove it before the process ends the way the signal asks.
  Only ``kill -9`` cannot be caught: the temp names carry the writer's pid
  (``.<name>.<pid>.<random>.tmp``), and the next write to that folder removes the ones whose
  process is gone. A temp file of a live process is never touched.
- **No lost update.** An existing target is opened and held under an advisory ``flock`` for
  the whole read-modify-write; a second writer is refused instead of waiting to overwrite a
  file it never read. Just before the rename the target must still be the bytes that were read
  (same inode, size, mtime and SHA-256); a file changed meanwhile (labels appended by a tool
  that takes no lock) is refused and nothing is written. The backup holds the bytes that were
  read, not whatever is on disk later. (An advisory lock binds only writers that take it; the
  final check narrows the window for the others to the rename itself.)
- **Links and special files.** A symbolic link is followed: its target is replaced and the
  link stays a link. A file with several hard links is refused (the rename would leave the
  other names holding the old bytes, silently splitting one file in two), and so is a FIFO, a
  device or a directory. The new file and the ``.bak`` keep the original's permission bits and
  owner: a 0600 file does not get a world-readable backup.

Errors are :class:`WriteRefused` (an ``OSError`` whose ``filename`` is the path the user gave),
so a caller reports every failure to write the same way.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import NoReturn

__all__ = ["LockedFile", "WriteRefused", "atomic_write_bytes", "atomic_write_text", "remove_stale_temps"]

#: SHA-256 of the bytes read, in blocks of this size when the target is read again to check it.
_BLOCK = 1 << 20


class WriteRefused(OSError):
    """A write that was not made because making it could lose data; nothing was written."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(errno.EPERM, reason, os.fspath(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class _Interrupted(BaseException):
    """SIGTERM or SIGINT arrived during a write (a BaseException, so no ``except Exception``
    swallows it before the temp files are removed)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


# ---------------------------------------------------------------------------------------------
# Temp files
# ---------------------------------------------------------------------------------------------


def _temp_pattern(name: str) -> re.Pattern[str]:
    return re.compile(r"\." + re.escape(name) + r"(?:\.bak)?\.(\d+)\.[0-9a-f]{12}\.tmp")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    except OverflowError:
        return False
    return True


def remove_stale_temps(path: str | os.PathLike[str]) -> list[str]:
    """Remove the temp files a killed writer of ``path`` left behind; returns their paths.

    Only names of this module's own pattern for this file (``.<name>.<pid>.<hex>.tmp`` and
    ``.<name>.bak.<pid>.<hex>.tmp``) whose pid is not a live process are removed: a temp file
    another process is still writing is never touched. (A pid reused by an unrelated live
    process keeps its file until that process ends: the safe side.)

    Parameters
    ----------
    path : str or os.PathLike[str]
        The file whose writers' temp files to look for (in its folder, links followed).

    Returns
    -------
    list of str
        The paths removed.
    """
    target = Path(os.path.realpath(os.fspath(path)))
    folder = target.parent
    pattern = _temp_pattern(target.name)
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if m is None or _alive(int(m.group(1))):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(entry.path)
        except OSError:
            pass
    return removed


def _new_temp(folder: str, name: str, temps: list[str]) -> int:
    """A new temp file in ``folder`` (mode 0600 until it is finished), registered in ``temps``
    before anything is written to it so an interruption can remove it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
        # Registered before it exists: a signal handler runs between any two bytecodes (and
        # blocking signals in this thread does not stop arrow's threads taking them), so
        # registering after creating would leak a file created just before the signal.
        temps.append(tmp)
        try:
            return os.open(tmp, flags, 0o600)
        except FileExistsError:  # another writer's name (48 random bits): not ours to remove
            temps.remove(tmp)
    raise FileExistsError(errno.EEXIST, "no free temporary name", folder)


def _write_temp(
    folder: str, name: str, data: bytes | memoryview, like: os.stat_result | None, temps: list[str], shown: str
) -> str:
    """Write ``data`` to a fresh temp file, fsync it, give it ``like``'s mode and owner."""
    fd = _new_temp(folder, name, temps)
    tmp = temps[-1]
    with open(fd, "wb", closefd=True) as fh:
        view = memoryview(data)
        while view:
            written = fh.write(view[: 1 << 24])
            view = view[written:]
        fh.flush()
        if like is not None:
            mode = stat.S_IMODE(like.st_mode)
            if (like.st_uid, like.st_gid) != (os.geteuid(), os.getegid()):
                try:
                    os.fchown(fd, like.st_uid, like.st_gid)
                except PermissionError:
                    try:  # the group alone, when the owner is this user
                        os.fchown(fd, -1, like.st_gid)
                    except PermissionError:
                        pass
                    after = os.fstat(fd)
                    if after.st_uid != like.st_uid:
                        raise WriteRefused(
                            shown,
                            f"cannot keep its owner (uid {like.st_uid}): replacing it would hand the file "
                            "to this user; run as its owner",
                        ) from None
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        os.fsync(fd)
    return tmp


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def _signals_remove(temps: list[str]) -> Iterator[None]:
    """For the duration of a write: SIGTERM and SIGINT remove ``temps``, then act as before.

    The previous handlers are restored afterwards and the signal is raised again, so the
    process ends (SIGTERM's default) or raises ``KeyboardInterrupt`` (SIGINT's) as it would have
    without the write. A signal that was ignored stays ignored. Outside the main thread Python
    cannot install handlers; the write then relies on the stale-temp cleanup.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> NoReturn:
        raise _Interrupted(signum)

    previous = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGINT):
            old = signal.getsignal(sig)
            if old is signal.SIG_IGN or old is None:
                continue
            previous[sig] = old
            signal.signal(sig, handler)
    except BaseException:
        for sig, old in previous.items():
            signal.signal(sig, old)
        raise
    caught = None
    try:
        yield
    except _Interrupted as err:
        caught = err.signum
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        if caught is not None:
            _remove(temps)
    if caught is not None:
        signal.raise_signal(caught)  # the previous handler: default SIGTERM ends the process
        raise InterruptedError(errno.EINTR, f"interrupted by signal {caught}; nothing was written")


def _same_bytes(path: str, data: bytes) -> bool:
    try:
        if os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as fh:
            return fh.read() == data
    except OSError:
        return False


def _place_backup(tmp: str, first: str, data: bytes) -> str:
    """Move the finished backup ``tmp`` to ``first`` (``<name>.bak``) when that is free or
    already holds ``data``, else to the first free ``<name>.bak.N``; returns the path used.

    A free name is taken with ``os.link``, which never replaces an existing file (a backup
    made meanwhile by another program is kept), then the temp name is removed.
    """
    if os.path.lexists(first) and _same_bytes(first, data):
        os.replace(tmp, first)
        return first
    candidates = [first] + [f"{first}.{n}" for n in range(1, 10_000)]
    for target in candidates:
        try:
            os.link(tmp, target)
        except FileExistsError:
            if _same_bytes(target, data):
                os.unlink(tmp)
                return target
            continue
        except OSError:  # a file system without hard links: check, then rename
            if os.path.lexists(target):
                continue
            os.replace(tmp, target)
            return target
        os.unlink(tmp)
        return target
    raise WriteRefused(first, "no free backup name (.bak to .bak.9999 all exist); remove old backups")


def _remove(temps: list[str]) -> None:
    while temps:
        tmp = temps.pop()
        try:
            os.unlink(tmp)
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------
# The locked file
# ---------------------------------------------------------------------------------------------


def _refuse_kind(shown: str, st: os.stat_result) -> None:
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise WriteRefused(shown, "is a directory, expected a file")
    if stat.S_ISFIFO(mode):
        raise WriteRefused(shown, "is a FIFO (named pipe); write to a regular file")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise WriteRefused(shown, "is a device; write to a regular file")
    if not stat.S_ISREG(mode):
        raise WriteRefused(shown, "is not a regular file")
    if st.st_nlink > 1:
        raise WriteRefused(
            shown,
            f"has {st.st_nlink} hard links; replacing it would leave the other names with the old "
            "bytes (copy it to a file of its own first)",
        )


class LockedFile:
    """A file held for a read-modify-write: locked, read once, replaced safely.

    ``with LockedFile(path, read=True) as f:`` resolves symbolic links, refuses what cannot be
    replaced safely (see the module docstring), takes an exclusive non-blocking ``flock`` on an
    existing file and, with ``read=True``, reads its bytes into ``f.data`` (``None`` when the
    file does not exist yet). ``f.replace(data, backup=False)`` writes ``data`` in its place
    while the lock is held; leaving the ``with`` block releases the lock.

    Raises :class:`WriteRefused` (another process holds the lock; the file is a FIFO, a device
    or hard-linked; it changed since it was read) and ``OSError`` for the rest.
    """

    def __init__(self, path: str | os.PathLike[str], read: bool = True) -> None:
        self.shown = os.fspath(path)
        self.path = os.path.realpath(self.shown)
        self.read = read
        self.data: bytes | None = None
        self.stat: os.stat_result | None = None
        self._digest: bytes | None = None
        self._fd: int | None = None
        self._backup: str | None = None

    def __enter__(self) -> LockedFile:
        try:
            import fcntl
        except ImportError:  # not POSIX: no advisory lock, the unchanged-check still runs
            fcntl = None  # type: ignore[assignment]

        if self.shown == "":
            raise WriteRefused(self.shown, "an empty path names no file")
        for _ in range(5):
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                self.stat = None
                return self
            _refuse_kind(self.shown, st)
            fd = os.open(
                self.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
            )
            try:
                fst = os.fstat(fd)
                _refuse_kind(self.shown, fst)
                try:
                    if fcntl is not None:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise WriteRefused(
                        self.shown, "another process is rewriting it (it holds the lock); try again when it is done"
                    ) from None
                try:
                    now = os.stat(self.path)
                except FileNotFoundError:
                    now = None
                if now is None or (now.st_dev, now.st_ino) != (fst.st_dev, fst.st_ino):
                    os.close(fd)  # replaced between open and lock: open the new one
                    continue
            except BaseException:
                with contextlib.suppress(OSError):
                    os.close(fd)
                raise
            self._fd = fd
            self.stat = fst
            if self.read:
                try:
                    with open(fd, "rb", closefd=False) as fh:
                        self.data = fh.read()
                except BaseException:
                    self.close()
                    raise
                self._digest = hashlib.sha256(self.data).digest()
            return self
        raise WriteRefused(self.shown, "it keeps being replaced by another process; try again")

    @property
    def backup_path(self) -> str:
        """Where ``replace(backup=True)`` kept the old bytes (before it runs: where it would
        keep them first): ``<name>.bak`` beside the file itself (beside a link's target, as the
        path the user gave it when that is no link), or ``<name>.bak.N`` when ``<name>.bak``
        already held other bytes (see :meth:`replace`)."""
        if self._backup is not None:
            return self._shown_beside(self._backup)
        return self._shown_beside(self.path + ".bak")

    def _shown_beside(self, real: str) -> str:
        if os.path.realpath(self.shown) != os.path.abspath(self.shown):
            return real
        return os.path.join(os.path.dirname(self.shown), os.path.basename(real))

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # releases the lock

    def _unchanged(self) -> bool:
        """True when the target is still the file that was locked, with the bytes read."""
        try:
            now = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        old = self.stat
        assert old is not None
        if (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) != (
            old.st_dev,
            old.st_ino,
            old.st_size,
            old.st_mtime_ns,
        ):
            return False
        if self._digest is None:
            return True
        h = hashlib.sha256()
        with open(self.path, "rb") as fh:
            while block := fh.read(_BLOCK):
                h.update(block)
        return h.digest() == self._digest

    def replace(self, data: bytes | memoryview, backup: bool = False) -> None:
        """Replace the file with ``data``; with ``backup``, keep the bytes read as ``<name>.bak``.

        Both files are written to temp files first, fsynced, checked against the file as it was
        read, and only then renamed into place (the backup first): at every instant each of
        the two names holds a complete file, its old bytes or its new ones. A backup never
        replaces an older backup that holds other bytes: when ``<name>.bak`` exists and
        differs, the bytes go to the first free ``<name>.bak.1``, ``<name>.bak.2``, ... (a
        second ``drift --fix --backup`` would otherwise lose the original file).
        """
        if backup and self.stat is not None and self.data is None:
            raise ValueError("a backup needs the file opened with read=True")
        folder, name = os.path.split(self.path)
        folder = folder or "."
        remove_stale_temps(self.path)
        temps: list[str] = []
        with _signals_remove(temps):
            try:
                new = _write_temp(folder, name, data, self.stat, temps, self.shown)
                bak = None
                if backup and self.stat is not None:
                    bak = _write_temp(folder, name + ".bak", self.data or b"", self.stat, temps, self.shown)
                if self.stat is not None and not self._unchanged():
                    raise WriteRefused(
                        self.shown,
                        "changed on disk while it was being rewritten (another program wrote to it); "
                        "nothing was written, run the command again",
                    )
                if bak is not None:
                    self._backup = _place_backup(bak, os.path.join(folder, name + ".bak"), self.data or b"")
                    temps.remove(bak)
                os.replace(new, self.path)
                temps.remove(new)
                _fsync_dir(folder)
            except BaseException:
                _remove(temps)
                raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes | memoryview, backup: bool = False) -> None:
    """Write ``data`` to ``path`` so that it is never half-written (see the module docstring).

    Parameters
    ----------
    path : str or os.PathLike[str]
        The file to create or replace; a symbolic link is followed.
    data : bytes
        The new content.
    backup : bool, default False
        Keep the previous content as ``<name>.bak`` (written as safely as the file).

    Returns
    -------
    None
        The file holds ``data`` (and the ``.bak`` the old bytes) when this returns.

    Raises
    ------
    WriteRefused
        The write could lose data (another writer holds the lock, the file is hard-linked, a
        FIFO or a device, or it changed while being rewritten); nothing was written.
    OSError
        The folder is missing or read-only, the disk is full...; nothing was written.
    """
    with LockedFile(path, read=backup) as f:
        f.replace(data, backup=backup)


def atomic_write_text(path: str | os.PathLike[str], text: str, backup: bool = False) -> None:
    """Write ``text`` (UTF-8, newlines untouched) to ``path`` atomically.

    A crash, a signal or a full disk mid-write leaves the original file intact, never half a
    file; ``backup=True`` keeps the previous file beside as ``<name>.bak``, written the same
    way. A symbolic link is followed; a hard-linked file, a FIFO or a device is refused. The new
    file keeps the old one's permission bits and owner. See :mod:`retrieval_eval.safewrite`.

    Parameters
    ----------
    path : str or os.PathLike[str]
        The file to create or replace.
    text : str
        The new content, encoded as UTF-8.
    backup : bool, default False
        Keep the previous content as ``<name>.bak``.

    Returns
    -------
    None

    Raises
    ------
    WriteRefused, OSError
        As :func:`atomic_write_bytes`; nothing was written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> atomic_write_text(folder / "labels.jsonl", "one\\n")
    >>> atomic_write_text(folder / "labels.jsonl", "two\\n", backup=True)
    >>> (folder / "labels.jsonl.bak").read_text()
    'one\\n'
    """
    atomic_write_bytes(path, text.encode("utf-8"), backup=backup)
