"""The Parquet store: one directory per run, written atomically, no shared index file.

Layout under the data directory:
    tracekit-store.json                 {"schema_version": N}
    runs/run_id=<id>/run.parquet        one row: the run record (schema.RUNS)
    runs/run_id=<id>/<table>-NNNNN.parquet  the run's rows (schema.TABLES), one part per chunk
    .staging/<pid>-<random>/            a run being written; renamed into runs/ when complete
    .staging/<pid>-<random>.lock        flock'ed by its writer for the staging directory's life
    .locks/                             short-lived claims (a run's labels, one run per simulation)
    .sims/<xx>/<sha256(sim_id)>-<kind>  which run holds simulation sim_id's trace of that kind: an
                                        index, rebuilt from the run records if missing (sim_runs)

A run directory appears by one `rename`, so readers never see half a run, a failed ingest
leaves nothing, and concurrent ingests of different traces never touch the same file. Two
processes ingesting the same content race on the rename; the loser finds the run present.

A staging directory is stale when its writer is gone. Its `.lock` file holds the writer's
flock and names the writer's machine (hostname and boot id). Written by this machine (the
same kernel): stale when nobody holds the flock, which the kernel drops when its writer dies
however it dies (kill -9 included), and which, unlike a process id, means the same thing in
every PID namespace sharing the store. Written by another machine (a cluster worker on the
shared filesystem, where flock may be local to each client: NFS mounted with local_lock,
Lustre with localflock, BeeGFS by default): stale only when, besides, its lease has run out:
the writer touches its lock file every HEARTBEAT_S, and a file untouched for LEASE_S
(measured on the file server's clock, against a file just touched) belongs to a dead writer.

`claim` is the lock that must hold across machines (one run per simulation; a run's label
re-write, whose lost update would drop a label): a lock file made by link(2), which is atomic
on every shared filesystem that tracekit's rename needs, NFS included (open(2) recommends it
over O_EXCL there), with the same liveness rule.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Iterator

from tracekit.store.compacted import mark_changed
from tracekit.store.damage import Scan, check_run, scan_runs
from tracekit.core.errors import StoreWriteError, TracekitError, clip, clip_repr, shown
from tracekit.store.columns import SCHEMA_VERSION

STORE_FILE = "tracekit-store.json"
LOCKS_DIR = ".locks"
SIMS_DIR = ".sims"
SIMS_COMPLETE = "complete"     # in SIMS_DIR: every run with a sim_id label has its entry
LEASE_S = 120.0          # a lock file of another machine untouched this long: its writer is dead
HEARTBEAT_S = 15.0       # how often a writer touches the lock files it holds


def store_write_error(root: Path, e: OSError) -> StoreWriteError:
    """One line for an OSError met while writing into the store (full disk, read-only
    file system, no permission)."""
    what = {
        errno.ENOSPC: "no space left on the device",
        errno.EDQUOT: "disk quota exceeded",
        errno.EROFS: "the store is on a read-only file system",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
    }.get(e.errno or 0, e.strerror or str(e))
    return StoreWriteError(f"{shown(root)}: cannot write to the store: {what}")


def default_data_dir() -> Path:
    return Path(os.environ.get("TRACEKIT_DATA") or "tracekit-data")


class Store:
    def __init__(self, root: str | os.PathLike, create: bool = False):
        self.root = Path(root)
        self.runs_dir = self.root / "runs"
        self.staging_dir = self.root / ".staging"
        meta = self.root / STORE_FILE
        if meta.exists():
            self._check_version(meta)
        elif create:
            self._create()
        elif self.root.exists() and any(self.root.iterdir()):
            raise TracekitError(f"{self.root}: not a tracekit store (no {STORE_FILE}); use another --data directory")

    @property
    def exists(self) -> bool:
        return (self.root / STORE_FILE).exists()

    def _create(self) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise TracekitError(f"{self.root}: exists and is not a directory")
        if self.root.exists():
            # what a concurrent _create leaves before its STORE_FILE appears is not "not empty"
            foreign = not all(_part_of_new_store(p) for p in self.root.iterdir())
            if (self.root / STORE_FILE).exists():     # another process created the store meanwhile
                self._check_version(self.root / STORE_FILE)
                return
            if foreign:
                raise TracekitError(f"{self.root}: directory is not empty and not a tracekit store; choose another --data")
        try:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
            self.staging_dir.mkdir(exist_ok=True)
        except OSError as e:
            raise TracekitError(f"{self.root}: cannot create the store: {e.strerror or e}") from None
        tmp = self.root / f".{STORE_FILE}.{os.getpid()}.{uuid.uuid4().hex}"
        try:
            tmp.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "format": "tracekit"}) + "\n")
            os.replace(tmp, self.root / STORE_FILE)   # same content from every writer: a race is harmless
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise store_write_error(self.root, e) from None

    def _check_version(self, meta: Path) -> None:
        try:
            raw = json.loads(meta.read_text())["schema_version"]
        except (ValueError, KeyError, TypeError, OSError, RecursionError):
            raise TracekitError(f"{meta}: unreadable store metadata; is this a tracekit store?") from None
        # an integer, not 1e400 (JSON reads it as inf), 1.5, "1" or true
        if not isinstance(raw, int) or isinstance(raw, bool) or raw < 0:
            raise TracekitError(f"{meta}: schema_version must be a non-negative integer, not {clip_repr(raw)}; "
                                "is this a tracekit store?")
        version = raw
        if version > SCHEMA_VERSION:
            raise TracekitError(
                f"{self.root}: store has schema version {clip(str(version), 20)}, newer than this tracekit understands "
                f"({SCHEMA_VERSION}); upgrade tracekit to read it"
            )
        if version < SCHEMA_VERSION:  # no older layout exists yet; an upgrade step goes here
            raise TracekitError(f"{self.root}: store schema version {version} is older than {SCHEMA_VERSION} and cannot be upgraded")

    # -- runs ------------------------------------------------------------------------
    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / f"run_id={run_id}"

    def run_ids(self) -> list[str]:
        """The whole runs: what the views read (a damaged run is not a run; see tracekit.store.damage)."""
        return self.scan().run_ids

    def scan(self, deep: bool | None = None) -> Scan:
        """One walk of runs/: the whole runs' files by table, and the damaged runs (deep=None:
        the cheap check of each file's end; False: every footer parsed; True: every page read)."""
        return scan_runs(self.runs_dir, deep)

    def has_whole_run(self, run_id: str) -> bool:
        d = self.run_dir(run_id)
        return d.is_dir() and check_run(str(d), run_id)[0] is None

    def remove_run(self, run_id: str) -> None:
        """Remove a run directory atomically: one rename moves it out of runs/ (into a staging
        directory, which a crash leaves to the stale-staging cleanup), then it is deleted."""
        trash = self.new_staging(tag="rm")
        try:
            os.rename(self.run_dir(run_id), trash / f"run_id={run_id}")
        finally:
            self.discard(trash)
        # the same trace ingested again is a new record: not the compacted one
        self.mark_changed(run_id)

    def mark_changed(self, run_id: str) -> None:
        """Note that the run's record changed (relabelled, removed): readers then read it from
        its own files, not from a compacted generation (tracekit.store.compacted)."""
        mark_changed(self.root, run_id)

    def new_staging(self, tag: str = "", within: Path | None = None) -> Path:
        """A fresh directory under .staging/, with its lock held until `commit` or `discard`.
        Named after this process and the tag for people reading the directory; staleness
        is decided by the lock file alone (its flock, its owner, its lease: module docstring).
        `within`: a staging directory this process holds (a sweep's simulation's), made inside
        it instead, with no lock of its own: the holder's lock covers it, and a stale holder's
        directory goes with everything in it. Each file created costs CPU on ext4, a few per
        run: a sweep's runs save the lock file."""
        name = f"{os.getpid()}-{tag + '-' if tag else ''}{uuid.uuid4().hex[:12]}"
        if within is not None:
            d = within / name
            try:
                d.mkdir()
            except OSError as e:
                raise store_write_error(self.root, e) from None
            return d
        _start_heartbeat()      # first: a thread that cannot start leaves nothing made
        try:
            self.staging_dir.mkdir(parents=True, exist_ok=True)
            lock = self.staging_dir / f"{name}.lock"
            fd = _lock_new_file(lock)
            try:
                # the lock file just made gives the file server's "now" for the leases
                self._clean_stale_staging(now=os.fstat(fd).st_mtime, mine=lock.name)
                d = self.staging_dir / name
                d.mkdir()
            except BaseException:
                _release(lock, fd)
                raise
        except OSError as e:
            raise store_write_error(self.root, e) from None
        with _HELD_GUARD:
            _HELD[d] = (lock, fd)
        return d

    def commit(self, staging: Path, run_id: str) -> bool:
        """Move a complete run into place. False if that run is already present."""
        target = self.run_dir(run_id)
        try:
            if target.exists() and not self.has_whole_run(run_id):
                try:   # a damaged run of this content: replaced (what the views skip is not "in the store")
                    self.remove_run(run_id)
                except FileNotFoundError:   # another process removed or replaced it meanwhile
                    pass
            if target.exists():
                return False
            try:
                os.rename(staging, target)
            except OSError as e:
                if target.exists():
                    return False
                raise store_write_error(self.root, e) from None
            return True
        finally:
            self.discard(staging)

    def discard(self, staging: Path) -> None:
        """Remove a staging directory (if still there) and release its lock."""
        shutil.rmtree(staging, ignore_errors=True)
        with _HELD_GUARD:
            held = _HELD.pop(staging, None)
        if held is not None:
            _release(*held)

    def _clean_stale_staging(self, now: float | None = None, mine: str = "") -> None:
        """Remove the staging directories whose writer is gone (crashed, killed; see the
        module docstring). A directory without a lock file is from a crash between the two
        steps of the removal below, or from a tracekit before the locks. `now`: the file
        server's time (the mtime of a file just made); `mine`: our own lock file's name."""
        try:
            entries = list(self.staging_dir.iterdir())
        except OSError:
            return
        names = {p.name for p in entries}
        for p in entries:
            if p.name == mine:
                continue
            if p.name.endswith(".lock"):
                state, fd = _probe_lock(p)
                if state == "held":
                    continue                        # its writer is alive
                gone = False
                try:
                    gone = _owner_gone(p, state == "free", now)
                    if gone:
                        shutil.rmtree(p.with_name(p.name[: -len(".lock")]), ignore_errors=True)
                finally:
                    if gone and fd is not None:
                        _release(p, fd)
                    elif gone:
                        p.unlink(missing_ok=True)
                    elif fd is not None:
                        os.close(fd)                # alive (its lease runs): lock file kept
            elif p.is_dir() and f"{p.name}.lock" not in names and not p.with_name(f"{p.name}.lock").exists():
                shutil.rmtree(p, ignore_errors=True)

    # -- one run per (simulation, trace kind): the index ---------------------------------
    # .sims/ holds one small file per (sim_id, trace kind), naming the run that holds it. It
    # is written under the simulation's claim (ingest: check, commit, note), so a look-up is
    # one open(2) instead of a scan of every run record; an entry is a hint, checked against
    # the run's own record (a run removed or relabelled since is not counted). A store made
    # before the index gets it once, from one scan of the run records (_build_sim_index).
    def _sim_entry(self, sim_id: str, kind: str) -> Path:
        h = hashlib.sha256(sim_id.encode()).hexdigest()
        return self.root / SIMS_DIR / h[:2] / f"{h}-{kind}"

    def sim_runs(self, sim_id: str, kind: str) -> list[tuple[str, int]]:
        """(run_id, n_events) of the whole-record runs of trace kind `kind` labelled
        sim_id=`sim_id` (at most one, when every writer keeps the index: call it under the
        simulation's claim). A run whose record cannot be read is passed over."""
        if not (self.root / SIMS_DIR / SIMS_COMPLETE).exists():
            self._build_sim_index()
        try:
            rec = json.loads(self._sim_entry(sim_id, kind).read_text())
            run_id = str(rec["run_id"])
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError):
            return self._scan_sim_runs(sim_id, kind)     # an unreadable entry: the slow, sure way
        if rec.get("sim_id") != sim_id or "/" in run_id or run_id in ("", ".", ".."):
            return self._scan_sim_runs(sim_id, kind)
        got = _run_sim_record(self.run_dir(run_id) / "run.parquet")
        if got is not None and got[0] == kind and got[2] == sim_id:
            return [(run_id, got[1])]
        return []

    def note_sim_run(self, sim_id: str, kind: str, run_id: str) -> None:
        """Record that run `run_id` holds simulation `sim_id`'s trace of kind `kind` (under the
        simulation's claim, after its commit). Written by one rename."""
        f = self._sim_entry(sim_id, kind)
        tmp = f.with_name(f".{f.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
        try:
            f.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"sim_id": sim_id, "kind": kind, "run_id": run_id}) + "\n")
            os.replace(tmp, f)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise store_write_error(self.root, e) from None

    def _sim_labelled_runs(self) -> list[tuple[str, str, int, str]]:
        """(run_id, trace_kind, n_events, sim_id) of every run labelled with a sim_id: one
        DuckDB scan of the run records, or, if a damaged record spoils
        it, file by file, passing over the records that cannot be read."""
        ids = self.run_ids()
        if not ids:
            return []
        try:
            import duckdb

            pattern = str(self.runs_dir / "run_id=*" / "run.parquet")
            rows = duckdb.connect().execute(
                "SELECT regexp_extract(filename, 'run_id=([^/]+)/run.parquet$', 1), trace_kind, n_events, s FROM "
                "(SELECT filename, trace_kind, n_events, unnest(list_transform(list_filter(labels, lambda l: "
                "l.key = 'sim_id'), lambda l: l.value)) AS s FROM read_parquet(?, filename=true, union_by_name=true))",
                [pattern]).fetchall()
            return [(r, k, int(n), s) for r, k, n, s in rows]
        except Exception:
            pass
        out = []
        for rid in ids:
            got = _run_sim_record(self.run_dir(rid) / "run.parquet")
            if got is not None and got[2] is not None:
                out.append((rid, got[0], got[1], got[2]))
        return out

    def _scan_sim_runs(self, sim_id: str, kind: str) -> list[tuple[str, int]]:
        return [(r, n) for r, k, n, s in self._sim_labelled_runs() if k == kind and s == sim_id]

    def _build_sim_index(self) -> None:
        """Index every run with a sim_id label (a store from before the index, or whose
        .sims/ was removed), once, under a claim: no sim_id run is committed meanwhile by
        this code, which builds the index first (sim_runs) under the simulation's claim."""
        with self.claim("sims-index"):
            if (self.root / SIMS_DIR / SIMS_COMPLETE).exists():
                return
            for run_id, kind, _n, sim_id in sorted(self._sim_labelled_runs()):
                self.note_sim_run(sim_id, kind, run_id)
            done = self.root / SIMS_DIR / SIMS_COMPLETE
            try:
                done.parent.mkdir(parents=True, exist_ok=True)
                done.write_text("every run with a sim_id label has its entry here\n")
            except OSError as e:
                raise store_write_error(self.root, e) from None

    # -- short-lived locks ---------------------------------------------------------------
    @contextlib.contextmanager
    def claim(self, name: str, timeout_s: float = 600.0) -> Iterator[None]:
        """An exclusive lock on `.locks/<name>.claim` for the block, across processes and
        machines sharing the store. Taken by link(2) of a file of our own (atomic on NFS,
        where O_EXCL was not always; the link count tells a lost reply from a refusal), and
        flock'ed where flock works; a claim whose holder is gone (module docstring) is broken
        by renaming it away. `name` must be a plain file name. Re-entrant in one thread: a
        block inside another of the same claim takes nothing more (a sweep claims a simulation
        once for the ingest of its three traces, each of which claims it too)."""
        d = self.root / LOCKS_DIR
        path = d / f"{name}.claim"
        mine_here: set = _CLAIMED_HERE.__dict__.setdefault("paths", set())
        key = os.path.abspath(path)
        if key in mine_here:
            yield
            return
        _start_heartbeat()      # first: a thread that cannot start leaves nothing made
        token = uuid.uuid4().hex
        mine = d / f".{name}.{token}.tmp"
        try:
            d.mkdir(exist_ok=True)
            fd = os.open(mine, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise store_write_error(self.root, e) from None
        try:
            _flock(fd, fcntl.LOCK_EX)
            os.write(fd, _owner_record(token))
            deadline = time.monotonic() + timeout_s
            pause = 0.002
            while True:
                try:
                    os.link(mine, path)
                    break
                except FileExistsError:
                    pass
                if os.stat(mine).st_nlink == 2:     # NFS: the link was made, the reply lost
                    break
                os.utime(mine)                      # the file server's "now", for the lease
                _break_if_stale(path, now=os.stat(mine).st_mtime)
                if time.monotonic() > deadline:
                    raise TracekitError(f"{path}: still held after {timeout_s:.0f} s (by {_read_owner(path) or 'someone'}); "
                                          "if its holder is dead, remove the file")
                time.sleep(pause)
                pause = min(pause * 2, 0.25)
        except OSError as e:
            mine.unlink(missing_ok=True)
            os.close(fd)
            raise store_write_error(self.root, e) from None
        except BaseException:
            mine.unlink(missing_ok=True)
            os.close(fd)
            raise
        with _HELD_GUARD:
            _CLAIMS[mine] = fd
        mine_here.add(key)
        try:
            yield
        finally:
            mine_here.discard(key)
            with _HELD_GUARD:
                _CLAIMS.pop(mine, None)
            try:
                if _owner_token(path) == token:     # still ours (not broken by someone)
                    path.unlink(missing_ok=True)
                mine.unlink(missing_ok=True)
            except OSError:
                pass
            os.close(fd)


# staging directories this process holds: path -> (lock file, its descriptor)
_HELD: dict[Path, tuple[Path, int]] = {}
# claims this process holds: its own file (linked as the claim) -> its descriptor
_CLAIMS: dict[Path, int] = {}
_HELD_GUARD = threading.Lock()
# the claims (absolute paths) held by the current thread: Store.claim is re-entrant in a thread
_CLAIMED_HERE = threading.local()
_HEARTBEAT: dict[str, object] = {"pid": None, "thread": None}

# flock not offered by the file system (NFS without a lock daemon, Lustre without -o flock):
# then liveness is the lease alone
_NO_FLOCK = {errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL}


def _identity() -> tuple[str, str]:
    """(hostname, boot id): one kernel. The boot id tells apart two machines given one name
    (cluster nodes all called `localhost`) and one machine before and after a reboot."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = ""
    return socket.gethostname(), boot


_ME = _identity()


def _owner_record(token: str = "") -> bytes:
    return (json.dumps({"host": _ME[0], "boot": _ME[1], "pid": os.getpid(), "token": token}) + "\n").encode()


def _read_owner(path: Path) -> dict | None:
    try:
        with open(path, "rb") as f:
            rec = json.loads(f.read(4096) or b"null")
        return rec if isinstance(rec, dict) else None
    except (OSError, ValueError):
        return None


def _owner_token(path: Path) -> str | None:
    rec = _read_owner(path)
    return str(rec.get("token")) if rec else None


def _owner_gone(path: Path, flock_free: bool, now: float | None) -> bool:
    """Whether the writer of lock file `path` is dead, given that nobody here holds its flock
    (`flock_free`), or that flock does not work on this file system (False)."""
    rec = _read_owner(path)
    if flock_free and rec is not None and (rec.get("host"), rec.get("boot")) == _ME:
        return True               # this kernel's flock is authoritative for this kernel's processes
    # another machine, or an unreadable / not yet written record: the lease decides
    try:
        mtime = os.stat(path).st_mtime
    except FileNotFoundError:
        return False              # gone already: nothing to clean
    return (now if now is not None else time.time()) - mtime > LEASE_S


def _break_if_stale(path: Path, now: float) -> None:
    """Remove claim `path` if its holder is gone: renamed to a name of our own first, so that
    of several breakers one alone removes it; if what we took is not what we judged (its
    holder released it and another claimed it meanwhile), it is linked back."""
    state, fd = _probe_lock(path)
    if state == "held":
        return
    try:
        token = _owner_token(path)
        if not _owner_gone(path, state == "free", now):
            return
        tomb = path.with_name(f".{path.name}.{uuid.uuid4().hex}.broken")
        try:
            os.rename(path, tomb)
        except FileNotFoundError:
            return
        if _owner_token(tomb) != token:
            try:
                os.link(tomb, path)
            except FileExistsError:
                pass
        tomb.unlink(missing_ok=True)
    finally:
        if fd is not None:
            os.close(fd)


def _start_heartbeat() -> None:
    """One thread per process touches every lock file it holds every HEARTBEAT_S (the lease
    that machines whose flock does not reach us go by)."""
    with _HELD_GUARD:
        t = _HEARTBEAT["thread"]
        if _HEARTBEAT["pid"] == os.getpid() and isinstance(t, threading.Thread) and t.is_alive():
            return
        t = threading.Thread(target=_heartbeat, name="tracekit-lease", daemon=True)
        _HEARTBEAT.update(pid=os.getpid(), thread=t)
        t.start()


def _heartbeat() -> None:
    while True:
        time.sleep(HEARTBEAT_S)
        with _HELD_GUARD:
            paths = [lock for lock, _ in _HELD.values()] + list(_CLAIMS)
        for p in paths:
            try:
                os.utime(p)
            except OSError:
                pass


def _flock(fd: int, how: int) -> bool:
    """flock; False if the file system offers none (liveness then rests on the lease)."""
    try:
        fcntl.flock(fd, how)
        return True
    except OSError as e:
        if e.errno in _NO_FLOCK:
            return False
        raise


def _lock_new_file(path: Path) -> int:
    """Create `path`, hold an exclusive flock on it and write our identity in it. Retried if
    a cleaner removed the file between our open and our lock (then we would hold a lock on a
    deleted file)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        _flock(fd, fcntl.LOCK_EX)
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            try:
                os.write(fd, _owner_record())
            except BaseException:
                # a full disk refuses the record: a lock file left empty would be judged by
                # its lease alone, and kept for LEASE_S by every later ingest
                _release(path, fd)
                raise
            return fd
        os.close(fd)


def _probe_lock(path: Path) -> tuple[str, int | None]:
    """("free", descriptor holding its flock) if nobody holds `path`'s flock; ("held", None)
    if someone does (or the file is gone); ("nolock", None) if the file system has no flock."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return "held", None
    try:
        if not _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB):
            os.close(fd)
            return "nolock", None
    except OSError:
        os.close(fd)
        return "held", None
    try:
        if os.stat(path).st_ino != os.fstat(fd).st_ino:   # removed and re-made meanwhile
            os.close(fd)
            return "held", None
    except FileNotFoundError:
        os.close(fd)
        return "held", None
    return "free", fd


def _release(path: Path, fd: int) -> None:
    """Unlink a lock file we hold, then let go of it (in this order: whoever locks the file
    next checks that it is still the one on disk)."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass
    os.close(fd)


def _run_sim_record(f: Path) -> tuple[str, int, str | None] | None:
    """(trace_kind, n_events, sim_id label or None) of one run record; None if unreadable."""
    try:
        import pyarrow.parquet as pq

        rec = pq.read_table(f, columns=["trace_kind", "n_events", "labels"]).to_pylist()[0]
        sim = [d["value"] for d in rec["labels"] or [] if d["key"] == "sim_id"]
        return str(rec["trace_kind"]), int(rec["n_events"]), (sim[0] if sim else None)
    except Exception:
        return None


def _part_of_new_store(p: Path) -> bool:
    """An entry that Store._create makes (another process may be half-way through it)."""
    if p.name in (".staging", LOCKS_DIR, SIMS_DIR, STORE_FILE) or p.name.startswith(f".{STORE_FILE}."):
        return True
    return p.name == "runs" and p.is_dir() and not any(p.iterdir())
