"""A big plain trace's sha256 (its run's identity) computed ahead, by a child process, from
the first moment of `tracekit ingest`.

The command spends its first ~0.15 s importing typer, pyarrow and the parsers on one core,
with the other idle; once the trace's chunks flow, both cores are busy reading, parsing and
writing, and hashing the trace as it is read costs ~0.2 s of that CPU (400 MB at ~2 GB/s).
Hashed from its file ahead, a good part of that CPU lands in the idle start-up instead; the
trace is read twice, the second time from the page cache. A child process, not a thread: a
thread, even one holding the GIL only between pieces of the file, slowed the imports beside
it by more than it saved (benchmarks/README.md, "The new-format wireless ingest").

The `tracekit` command starts it first of all (tracekit.__main__), before any import of the
command line, by forking (`start(fork=True)`): the process has one thread then, and the
child hashes at once, with no interpreter to start. Started later (`tracekit ingest` run
in-process, by a test or a benchmark driver; threads may exist by then, which a fork must
not copy), it is a new interpreter (posix_spawn). Either child reads the file mapped, not
copied out of the page cache: a file cut shorter under the mapping ends the child
(SIGBUS), and then the trace is hashed as it was read, below.

The digest stands for the content ingest parsed only if the file is as it was: the same size
and modification time when its reading ends, every byte read. Otherwise (a trace still being
written grows while it is read) `TraceSource` hashes the bytes it read again, from the file:
exact for a file that only grew. Only plain files: a compressed trace's identity is its
decompressed content, hashed as it is decompressed. A light module (nothing heavy
imported): it runs before the command's imports."""
from __future__ import annotations

import atexit
import hashlib
import os
import signal
import stat
import sys
import threading

from tracekit.formats.magic import HEAD_BYTES, is_plain

MIN_BYTES = 16 << 20    # a smaller trace's hash takes a few ms wherever it runs
PIECE_BYTES = 16 << 20  # read and hashed at a time

# the spawned child: this module's sha256_mapped over the first SIZE bytes of the file open as
# FD, its hex digest written out (nothing if it failed); -I -S start it without
# site-packages, so it is told where this tracekit is
_CHILD = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
from tracekit.formats.hashahead import sha256_mapped
os.write(1, sha256_mapped(int(sys.argv[2]), int(sys.argv[3])).encode())
"""
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_pending: dict[tuple[int, int], "Digest"] = {}
_lock = threading.Lock()
_stopping: list = []        # _stop_untaken, once registered with atexit
try:
    _MAX_FD = max(os.sysconf("SC_OPEN_MAX"), 256)
except (OSError, ValueError):
    _MAX_FD = 1 << 16


class Digest:
    """The sha256 of a file's first `size` bytes (its size when stat'ed), computed by a child
    process that reads the file through `fd`: forked (`fork`: only where the process has
    one thread) or a new interpreter."""

    def __init__(self, fd: int, st: os.stat_result, fork: bool = False):
        self.fd = fd
        self.size = st.st_size
        self.mtime_ns = st.st_mtime_ns
        self.result: str | None = None      # the child's hex digest of the first `size` bytes
        self.pid: int | None = None
        r, w = os.pipe()
        if fork:
            try:
                pid = os.fork()
            except BaseException:
                os.close(r)
                os.close(w)
                raise
            if pid == 0:
                _forked_child(fd, self.size, w)     # never returns
            os.close(w)
            self.pid = pid
            self.out = r
            return
        os.set_inheritable(fd, True)        # for the child only: nothing else runs yet
        try:
            # its own process group: a Ctrl-C meant for tracekit does not print the child's
            # KeyboardInterrupt (tracekit kills it as it stops); its stderr goes nowhere
            self.pid = os.posix_spawn(
                sys.executable, [sys.executable, "-I", "-S", "-c", _CHILD, _PACKAGE_PARENT, str(fd), str(self.size)], os.environ,
                file_actions=[(os.POSIX_SPAWN_DUP2, w, 1), (os.POSIX_SPAWN_CLOSE, r),
                              (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)],
                setpgroup=0,
            )
        except BaseException:
            os.close(r)
            raise
        finally:
            os.close(w)
            os.set_inheritable(fd, False)
        self.out = r

    def _wait(self) -> None:
        if self.pid is None:
            return
        data = b""
        while piece := os.read(self.out, 256):
            data += piece
        os.close(self.out)
        os.waitpid(self.pid, 0)
        self.pid = None
        self.result = data.decode() or None     # nothing: killed, or it failed

    def sha256_of(self, fd: int, n_bytes: int) -> str | None:
        """The hex digest of the first n_bytes, the whole content the reader read through
        `fd` (a descriptor of the same file), if the file is as it was when hashed ahead;
        None if it is not (the caller hashes what it read another way)."""
        self._wait()
        try:
            st = os.fstat(fd)
        except OSError:
            return None
        if self.result is None or not (self.size == n_bytes == st.st_size and st.st_mtime_ns == self.mtime_ns):
            return None
        return self.result

    def close(self) -> None:
        """Stop the child if it still hashes (the file's ingest ended early) and let go of
        the file."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
            self._wait()
        os.close(self.fd)


def _forked_child(fd: int, n_bytes: int, out: int) -> None:
    """A forked child's whole life: the digest written to `out`, then the process ends at
    once (no atexit functions, no buffers flushed: they are the parent's); nothing written
    if it fails. It holds nothing of the parent's but the trace and `out`: its standard
    streams are /dev/null (a caller reading the command's output to its end does not wait
    for the child) and every other descriptor is closed; its own process group, so that a
    Ctrl-C meant for tracekit does not reach it (tracekit stops it as it ends)."""
    code = 1
    try:
        os.setpgid(0, 0)
        null = os.open(os.devnull, os.O_RDWR)
        for std in (0, 1, 2):
            os.dup2(null, std)
        low = 3
        for keep in sorted((fd, out)):
            os.closerange(low, keep)
            low = keep + 1
        os.closerange(low, _MAX_FD)
        os.write(out, sha256_mapped(fd, n_bytes).encode())
        code = 0
    finally:
        os._exit(code)


def _stop_untaken() -> None:
    """At the process's end: the children of digests nobody took (the command failed or
    stopped before it read the trace) stopped, not left hashing."""
    with _lock:
        untaken = list(_pending.values())
        _pending.clear()
    for d in untaken:
        try:
            d.close()
        except OSError:
            pass


def start(path: str | os.PathLike, fork: bool = False) -> None:
    """Hash `path` ahead if it is a plain regular file of at least MIN_BYTES; else nothing.
    `fork`: by a forked child, where the process has one thread (the `tracekit` command's
    first step; with other threads, a new interpreter all the same); else by a new
    interpreter. Never raises: whatever goes
    wrong here, the trace is hashed as it is read. Looks before it opens: opening a named
    pipe would take its writer's data from the ingest."""
    try:
        st = os.stat(path)
    except (OSError, TypeError, ValueError):
        return
    key = (st.st_dev, st.st_ino)
    if not stat.S_ISREG(st.st_mode) or st.st_size < MIN_BYTES or key in _pending:
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)     # O_NONBLOCK: never wait on a pipe
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != key or not is_plain(os.pread(fd, HEAD_BYTES, 0)):
            os.close(fd)
            return
        # a fork copies one thread: another one holding a lock the child then needs (the C
        # library's, OpenSSL's) would leave the child waiting for ever, and ingest with it
        d = Digest(fd, st, fork and threading.active_count() == 1)
    except Exception:       # no os.posix_spawn here (AttributeError), no interpreter to start...
        os.close(fd)
        return
    with _lock:
        if not _stopping:
            _stopping.append(atexit.register(_stop_untaken))
        _pending[key] = d


def take(fd: int) -> Digest | None:
    """The digest started for the file open as `fd` (the same device and inode), handed
    over once: the caller closes it."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    with _lock:
        return _pending.pop((st.st_dev, st.st_ino), None)


def sha256_of_prefix(fd: int, n_bytes: int) -> str:
    """The hex digest of a file's first n_bytes, read through fd (positioned reads: fd's
    offset is left alone). OSError if the file is now shorter."""
    return _hash_read(hashlib.sha256(), fd, 0, n_bytes)


def _hash_read(h, fd: int, done: int, n_bytes: int) -> str:
    """h updated with the file's bytes [done, n_bytes) read through fd; its hex digest."""
    buf = bytearray(PIECE_BYTES)
    view = memoryview(buf)
    while done < n_bytes:
        n = os.preadv(fd, [view[: min(PIECE_BYTES, n_bytes - done)]], done)
        if not n:
            raise OSError(f"the file is shorter than the {n_bytes} bytes read from it")
        h.update(view[:n])
        done += n
    return h.hexdigest()


def sha256_mapped(fd: int, n_bytes: int) -> str:
    """sha256_of_prefix, with the file mapped a piece at a time instead of copied out of the
    page cache (~0.02 s less CPU on a 400 MB trace). For the children only: a file cut
    shorter under a mapping ends the process that reads it (SIGBUS). Where a piece cannot be
    mapped, the rest is read as sha256_of_prefix reads it."""
    import mmap

    h = hashlib.sha256()
    done = 0
    while done < n_bytes:
        n = min(PIECE_BYTES, n_bytes - done)
        try:
            piece = mmap.mmap(fd, n, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0), prot=mmap.PROT_READ,
                              offset=done)
        except (OSError, ValueError):
            return _hash_read(h, fd, done, n_bytes)
        with piece:
            h.update(piece)
        done += n
    return h.hexdigest()
