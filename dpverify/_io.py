"""Result files that are never half-written and never silently overwritten.

- :func:`check_output_dir` validates an output directory *before* any work starts: it must be a
  directory (or creatable as one) that this process can write, and it must not already hold the files
  about to be written unless the caller passes ``force`` (the command line's ``--force``).
- :func:`atomic_write_text` / :func:`atomic_write_bytes` write to a temporary
  file in the same directory and rename it over the target (``os.replace``, atomic on POSIX), so a
  reader sees the old file or the new one, never a mix.
- :class:`FileSet` writes several files of one result all-or-nothing: each goes to a temporary file
  first, and only when every one has been written are they renamed into place.
- Every file gets the permissions an ordinary ``open`` would give under the process's umask (the
  temporary file's private 0600 does not survive the rename).
- :func:`output_lock` keeps two commands from writing one output directory at once (an exclusive
  ``flock`` on the directory itself: the second is refused with a one-line error, never left waiting), and
  :func:`remove_stale` removes, under ``--force``, the files of a previous result that the new one did
  not rewrite (a figure the new run has no data for, say).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from dpverify.errors import InvalidParameterError

#: The largest input file read whole (a ledger of a million blocks is ~300 MB of JSON).
_MAX_INPUT_BYTES = 1 << 30

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"))


def read_input_text(option: str, path: str | os.PathLike[str], what: str = "file") -> str:
    """The UTF-8 text of a regular input file, or an InvalidParameterError naming ``option``: a FIFO, socket,
    device or directory is refused before it is opened (reading one would block or never end), and so is
    a file above :data:`_MAX_INPUT_BYTES`."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InvalidParameterError(option, f"must be a readable {what} ({exc.strerror})", str(path)) from None
    for test, kind in _KINDS:
        if test(info.st_mode):
            raise InvalidParameterError(option, f"must be a regular {what}, not {kind}", str(path))
    if info.st_size > _MAX_INPUT_BYTES:
        raise InvalidParameterError(option, f"must be a {what} of at most {_MAX_INPUT_BYTES >> 20} MiB "
                                    f"(it has {info.st_size >> 20} MiB)", str(path))
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise InvalidParameterError(option, f"must be a readable {what} ({exc.strerror})", str(path)) from None
    except UnicodeDecodeError:
        raise InvalidParameterError(option, f"must be a UTF-8 text {what}", str(path)) from None


def check_output_dir(option: str, path: str | os.PathLike[str], files: Iterable[str] = (), force: bool = False) -> Path:
    """The output directory ``path``, created if missing, checked writable and free of ``files``.

    Raises InvalidParameterError naming ``option`` when ``path`` is empty, is an existing file, cannot be
    created or written, or already holds one of ``files`` and ``force`` is false.
    """
    text = os.fspath(path)
    if not text.strip():
        raise InvalidParameterError(option, "must be a directory path", text)
    directory = Path(text)
    if directory.exists() and not directory.is_dir():
        raise InvalidParameterError(option, "must be a directory, not an existing file", text)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidParameterError(option, f"must be a directory that can be created ({exc.strerror})", text) from None
    try:
        probe = tempfile.NamedTemporaryFile(dir=directory, prefix=".dpverify-probe-", delete=True)
        probe.close()
    except OSError as exc:
        raise InvalidParameterError(option, f"must be a writable directory ({exc.strerror})", text) from None
    existing = sorted(name for name in files if (directory / name).exists())
    if existing and not force:
        raise InvalidParameterError(
            option, f"already holds results ({', '.join(existing)}); pass --force to replace them", text
        )
    return directory


def check_output_file(option: str, path: str | os.PathLike[str], force: bool = False) -> Path:
    """An output file path whose directory exists and is writable (checked before the work starts)."""
    text = os.fspath(path)
    if not text.strip():
        raise InvalidParameterError(option, "must be a file path", text)
    target = Path(text)
    if target.is_dir():
        raise InvalidParameterError(option, "must be a file path, not a directory", text)
    if target.exists() and not force:
        raise InvalidParameterError(option, "already exists; pass --force to replace it", text)
    parent = target.parent
    if not parent.is_dir():
        raise InvalidParameterError(option, "must be in an existing directory", text)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InvalidParameterError(option, "must be in a writable directory", text)
    return target


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _publish_mode(path: str | os.PathLike[str]) -> None:
    """The permissions ``open`` would have given the file: 0666 less the umask (mkstemp makes it 0600)."""
    os.chmod(path, 0o666 & ~_umask())


@contextlib.contextmanager
def output_lock(option: str, directory: str | os.PathLike[str]) -> Iterator[None]:
    """Hold ``directory`` for this command: a second command writing it is refused at once, naming ``option``.

    An exclusive, non-blocking ``flock`` on the directory itself (no file is left behind; the kernel drops the
    lock with the process, however it ends). Where ``flock`` is not available, nothing is locked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise InvalidParameterError(option, "is being written by another dpverify command; wait for it or "
                                                "choose another directory", os.fspath(directory)) from None
        yield
    finally:
        os.close(fd)


def remove_stale(directory: str | os.PathLike[str], before: Iterable[str], written: Iterable[str]) -> list[str]:
    """Remove the files named in ``before`` (a previous result's, found before the new one was written) that
    ``written`` (the new result's) does not include; returns their names."""
    keep = set(written)
    removed = []
    for name in sorted(set(before) - keep):
        with contextlib.suppress(FileNotFoundError):
            (Path(directory) / name).unlink()
            removed.append(name)
    return removed


@contextlib.contextmanager
def _atomic_writer(path: str | os.PathLike[str], mode: str = "w", **open_args: Any) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success it replaces ``path``, on error it is removed."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **open_args) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        _publish_mode(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with _atomic_writer(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with _atomic_writer(path, "wb") as handle:
        handle.write(data)


class FileSet:
    """Several files of one result, written all-or-nothing.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with FileSet(d) as files:
    ...     files.write_text("a.json", "{}")
    ...     files.write_with("b.txt", lambda p: p.write_text("b"))
    >>> sorted(p.name for p in d.iterdir())
    ['a.json', 'b.txt']

    Each file is first written under a temporary name in the same directory; leaving the ``with``
    block normally renames them all into place, leaving it with an exception deletes them, so the
    directory keeps its previous files.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._pending: list[tuple[Path, Path]] = []

    def _temporary(self, name: str) -> tuple[Path, Path]:
        target = self.directory / name
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{name}.", suffix=".tmp" + target.suffix)
        os.close(fd)
        pair = (Path(tmp), target)
        self._pending.append(pair)
        return pair

    def write_text(self, name: str, text: str) -> Path:
        tmp, target = self._temporary(name)
        tmp.write_text(text, encoding="utf-8")
        return target

    def write_with(self, name: str, writer: Callable[[Path], object]) -> Path:
        """Call ``writer(temporary_path)`` to produce the file (e.g. a plotting library's savefig)."""
        tmp, target = self._temporary(name)
        writer(tmp)
        return target

    def __enter__(self) -> FileSet:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            for tmp, target in self._pending:
                _publish_mode(tmp)
                os.replace(tmp, target)
        else:
            for tmp, _ in self._pending:
                with contextlib.suppress(OSError):
                    tmp.unlink()
        self._pending.clear()
