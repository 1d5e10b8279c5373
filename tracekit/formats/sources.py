"""Reading a trace file as a stream of complete lines, whatever its compression.

`TraceSource` detects the compression from the magic bytes (not the file name), yields
chunks that end on a line boundary with the 1-based number of their first line, hashes
the decompressed content as it goes (the run's identity), and keeps a last line that has
no newline aside: a simulation killed mid-write leaves one, and it is not to be trusted.
Memory stays at about one chunk whatever the file size.
"""
from __future__ import annotations

import bz2
import errno
import gzip
import hashlib
import io
import lzma
import os
import select
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Protocol

from tracekit.core.errors import TracekitError, UnsupportedTraceError, shown
from tracekit.formats.magic import ARCHIVES, COMPRESSIONS, HEAD_BYTES
from tracekit.formats.parsers import load_fast

_fast = load_fast()
# data.count(b"\n") in C, 16 bytes a step and without the GIL
_count_lines = _fast.count_lines if _fast is not None else (lambda data: data.count(b"\n"))

CHUNK_BYTES = 8 * 1024 * 1024
PEEK_BYTES = 64 * 1024


@dataclass
class Chunk:
    data: bytes           # complete lines, each ending in b"\n"
    first_line_no: int    # 1-based number of the first line in `data`
    n_lines: int


class _Stream(Protocol):
    """What TraceSource reads the decompressed content through: a buffered file or a
    decompressor (read1 returns what is at hand without waiting for n bytes)."""

    def read(self, n: int, /) -> bytes: ...
    def read1(self, n: int, /) -> bytes: ...
    def close(self) -> None: ...


class _ZstdFrames:
    """Concatenated zstd frames, decoded frame by frame so that a file cut inside a frame
    raises EOFError as gzip, bz2 and xz do (zstandard's stream_reader ends silently there,
    and a cut on a line boundary would go unnoticed)."""

    def __init__(self, raw: BinaryIO):
        import zstandard

        self._dctx = zstandard.ZstdDecompressor()
        self._frame: Any = None       # the decompressor of the frame being read; None between frames
        self._raw = raw
        self._buf = b""

    def read1(self, n: int) -> bytes:
        while not self._buf:
            data = self._raw.read(1 << 20)
            if not data:
                if self._frame is not None:
                    raise EOFError("zstd stream ends inside a frame")
                return b""
            self._feed(data)
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    read = read1

    def _feed(self, data: bytes) -> None:
        out = []
        while data:
            if self._frame is None:
                self._frame = self._dctx.decompressobj()
            out.append(self._frame.decompress(data))
            if self._frame.eof:
                data, self._frame = self._frame.unused_data, None
            else:
                data = b""
        self._buf += b"".join(out)

    def close(self) -> None:
        pass                          # the raw file is closed by TraceSource


# how long a named pipe is waited for its writer (`mkfifo f; tracekit ingest f` with the writer
# started next), unless TRACEKIT_PIPE_WAIT_S says otherwise; the wait ends as soon as one opens it
PIPE_WAIT_S = 60.0
_NOT_FILES = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _open_input(p: Path) -> io.BufferedReader:
    """`p` open for reading: a regular file, or a pipe read as a stream. The open itself never
    waits (O_NONBLOCK): a named pipe that nobody opens for writing within the pipe wait is
    refused in one line instead of blocking for ever; devices and sockets are refused at once
    (a terminal, /dev/zero: nothing that ends as a trace file does)."""
    try:
        st = os.stat(p)
    except OSError as e:
        raise TracekitError(f"{shown(p)}: cannot open: {e.strerror or e}") from None
    for test, what in _NOT_FILES:
        if test(st.st_mode):
            raise TracekitError(f"{shown(p)}: is {what}, not a trace file (a regular file or a pipe)")
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except PermissionError:
        raise TracekitError(f"{shown(p)}: permission denied (cannot read the file)") from None
    except OSError as e:
        raise TracekitError(f"{shown(p)}: cannot open: {e.strerror or e}") from None
    try:
        first = _wait_for_writer(fd, p) if stat.S_ISFIFO(os.fstat(fd).st_mode) and not _anonymous_pipe(fd) else b""
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    if first:
        return io.BufferedReader(_Prefixed(fd, first))
    return open(fd, "rb")


def _anonymous_pipe(fd: int) -> bool:
    """Whether `fd` is a pipe without a name (`<(zcat x.gz)`, /dev/stdin of `zcat x.gz |`):
    its writer was there when it was made, so that no writer now means its end."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
    except OSError:
        return False


def _wait_for_writer(fd: int, p: Path) -> bytes:
    """Wait until a writer has opened the named pipe open as `fd` (non-blocking); returns
    what was read meanwhile. A read returns EAGAIN once a writer holds the pipe, data once it
    wrote, and nothing while nobody holds it."""
    try:
        wait_s = float(os.environ.get("TRACEKIT_PIPE_WAIT_S") or PIPE_WAIT_S)
    except ValueError:
        wait_s = PIPE_WAIT_S
    deadline = time.monotonic() + wait_s
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return b""                  # a writer holds it and has written nothing yet
        if data:
            return data
        left = deadline - time.monotonic()
        if left <= 0:
            raise TracekitError(f"{shown(p)}: a named pipe that nobody opened for writing within {wait_s:g} s "
                                "(start its writer first, or set TRACEKIT_PIPE_WAIT_S)")
        # woken by data or by a writer's close, or after a tenth of a second to look again for
        # a writer that has opened the pipe without writing yet (poll does not tell that)
        if any(ev & select.POLLHUP for _, ev in poller.poll(min(left, 0.1) * 1000)):
            return os.read(fd, 1 << 16)     # a writer came and went: what it wrote, or the end


class _Prefixed(io.RawIOBase):
    """A pipe's descriptor whose first bytes were already read: those, then the rest."""

    def __init__(self, fd: int, first: bytes):
        self._fd, self._first = fd, first

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        if self._first:
            n = min(len(b), len(self._first))
            b[:n] = self._first[:n]
            self._first = self._first[n:]
            return n
        return os.readv(self._fd, [b])

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


@dataclass
class TraceSource:
    """One input file. Iterate `chunks()` once; afterwards `sha256`, `size_bytes`,
    `n_lines` and `tail` (an unterminated last line, or b"") describe the whole content."""

    path: Path
    compression: str = "none"
    sha256: str = ""
    size_bytes: int = 0
    n_lines: int = 0
    tail: bytes = b""
    truncated_stream: bool = False     # the compressed stream ended early
    _raw: BinaryIO | None = field(default=None, repr=False)
    _stream: _Stream | None = field(default=None, repr=False)
    _peeked: bytes = field(default=b"", repr=False)

    @classmethod
    def open(cls, path: str | os.PathLike) -> "TraceSource":
        p = Path(path)
        if not p.exists():
            if p.is_symlink():
                try:
                    os.stat(p)
                except OSError as e:
                    if e.errno == errno.ELOOP:
                        raise TracekitError(f"{shown(p)}: a symbolic link loop (too many levels of symbolic links)") from None
                raise TracekitError(f"{shown(p)}: a symbolic link to a file that does not exist")
            raise TracekitError(f"{shown(p)}: no such file")
        if p.is_dir():
            raise TracekitError(f"{shown(p)}: is a directory")
        raw = _open_input(p)
        if raw.seekable():
            head = raw.read(HEAD_BYTES)
            raw.seek(0)
        else:   # a pipe (`tracekit ingest <(zcat x.gz)`, a FIFO): look without consuming
            head = raw.peek(HEAD_BYTES)[:HEAD_BYTES]
        src = cls(path=p, _raw=raw)
        for magic, what in ARCHIVES:
            if head.startswith(magic):
                raw.close()
                raise UnsupportedTraceError(f"{shown(p)}: is {what}; extract the trace first")
        for magic, name in COMPRESSIONS:
            if head.startswith(magic):
                src.compression = name
                break
        src._stream = src._decompressor(raw)
        return src

    def _decompressor(self, raw: BinaryIO) -> _Stream:
        c = self.compression
        if c == "gzip":
            return gzip.GzipFile(fileobj=raw, mode="rb")
        if c == "bz2":
            return bz2.BZ2File(raw, mode="rb")
        if c == "xz":
            return lzma.LZMAFile(raw, mode="rb")
        if c == "zstd":
            return _ZstdFrames(raw)
        return raw  # type: ignore[return-value]   # a buffered file: it has read1 too

    @property
    def raw_size(self) -> int:
        """Size of the file on disk (compressed), for progress bars."""
        return self.path.stat().st_size

    def raw_position(self) -> int:
        """How far into the file on disk the reader is."""
        try:
            return self._raw.tell() if self._raw else 0
        except (OSError, ValueError):
            return 0

    def _read(self, n: int) -> bytes:
        """Up to n decompressed bytes; fewer only at the end of the content. A compressed
        stream is read piece by piece (read1), because one big read() of a cut-off stream
        raises EOFError and drops everything it had decompressed before the cut."""
        if self.compression == "none":
            return self._read_piece(n, whole=True)
        parts, got = [], 0
        while got < n and not self.truncated_stream:
            piece = self._read_piece(n - got)
            if not piece:
                break
            parts.append(piece)
            got += len(piece)
        return b"".join(parts)

    def _read_piece(self, n: int, whole: bool = False) -> bytes:
        assert self._stream is not None
        try:
            return self._stream.read(n) if whole else self._stream.read1(n)
        except EOFError:
            # gzip/bz2/xz stream cut off: like a truncated plain trace, keep what we have.
            self.truncated_stream = True
            return b""
        except (OSError, lzma.LZMAError, ValueError) as e:
            raise TracekitError(f"{shown(self.path)}: corrupt {self.compression} data: {e}") from None
        except Exception as e:  # zstandard.ZstdError and friends
            if type(e).__name__ == "ZstdError":
                if "incomplete" in str(e) or "premature" in str(e):
                    self.truncated_stream = True
                    return b""
                raise TracekitError(f"{shown(self.path)}: corrupt zstd data: {e}") from None
            raise

    def peek(self, n: int = PEEK_BYTES) -> bytes:
        """The first `n` decompressed bytes, without consuming them."""
        while len(self._peeked) < n:
            more = self._read(n - len(self._peeked))
            if not more:
                break
            self._peeked += more
        return self._peeked[:n]

    def chunks(self, chunk_bytes: int = CHUNK_BYTES) -> Iterator[Chunk]:
        h = hashlib.sha256()
        carry = b""
        line_no = 1
        first = True
        while True:
            if first and self._peeked:
                # what peek read, and the rest of a whole chunk from a file (not a pipe: its
                # first lines go on at once): a file of one chunk is read as one (a sweep's
                # short trace: one parse and one part, not two)
                more = len(self._peeked) < chunk_bytes and self._raw is not None and self._raw.seekable()
                rest = self._read(chunk_bytes - len(self._peeked)) if more else b""
                block, first = (b"".join((self._peeked, rest)) if rest else self._peeked), False
                self._peeked = b""
            else:
                block = self._read(chunk_bytes)
            if not block:
                break
            h.update(block)
            self.size_bytes += len(block)
            cut = block.rfind(b"\n")
            if cut < 0:
                carry = carry + block if carry else block
                if len(carry) > 16 * chunk_bytes:
                    raise TracekitError(f"{shown(self.path)}:{line_no}: line longer than {len(carry)} bytes; not a text trace")
                continue
            # one copy of the chunk (carry + block, then a slice, made two fresh chunk-sized
            # objects, which cost more than the chunk's sha256)
            data, carry = b"".join((carry, memoryview(block)[: cut + 1])), block[cut + 1 :]
            n = _count_lines(data)
            yield Chunk(data=data, first_line_no=line_no, n_lines=n)
            line_no += n
            self.n_lines += n
        self.tail = carry
        self.sha256 = h.hexdigest()
        self.close()

    def close(self) -> None:
        for f in (self._stream, self._raw):
            try:
                if f is not None:
                    f.close()
            except Exception:
                pass
