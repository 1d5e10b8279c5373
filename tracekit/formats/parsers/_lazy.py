"""polars, imported on first use. The wired fast path (tracekit/formats/parsers/_wiredc.c) goes from
the trace to Arrow tables and Parquet without polars, and importing it is ~0.1 s of every
ingest's start-up (issue 16): the parser modules reach polars through this proxy, which
imports it when an attribute is first asked for (the polars parsers, the fallback). Use it
as `from ._lazy import polars as pl`: type checkers see polars itself."""
from __future__ import annotations

import importlib
import threading
import types
from typing import TYPE_CHECKING, Any


class LazyModule(types.ModuleType):
    """A stand-in for module `name` that imports it on the first attribute look-up (under a
    lock: two threads may ask at once), then serves its attributes directly."""

    def __init__(self, name: str):
        super().__init__(name)
        self.__dict__["_lock"] = threading.Lock()

    def __getattr__(self, attr: str) -> Any:
        with self.__dict__["_lock"]:
            mod = importlib.import_module(self.__name__)
            for k, v in mod.__dict__.items():
                self.__dict__.setdefault(k, v)
        return getattr(mod, attr)


if TYPE_CHECKING:
    import polars as polars     # noqa: PLC0414  (re-exported: what the proxy stands for)
else:
    polars = LazyModule("polars")
