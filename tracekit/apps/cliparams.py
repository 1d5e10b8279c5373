"""Option values without pydantic: a start-up trick kept (issue 40; the others are in
tracekit.core.startup), since without it every command that takes a value imports pydantic,
10 % or more of the command (benchmarks/RESULTS.md, "Start-up tricks"); --help is the same.

typer (0.2x) coerces every option and argument value that is not a bool flag through a
pydantic TypeAdapter. install() (called by tracekit.apps.cli) puts a plain
coercion in front of typer's for the values tracekit's options take, returning what typer's
own would: a str as it is; an int or float written plainly in digits (JSON's number syntax);
an Enum's value spelled exactly (case-sensitive options only); a Path (then checked by typer's
own path checks: exists, file_okay, ...); a list of strings (a repeatable option or a
variadic argument of List[str]) as a list. Any other value (a typo, `inf`, another list, a
parser= option, a min/max range) goes to typer's coercion, so every error message is still
typer's and pydantic is imported only then. tests/test_startup.py checks, value by value, that
both give the same result.

This reaches into typer's internals (typer.core._TyperParameter.get_runtime_param and
typer._coercion): if those are not there (another typer), install() does nothing.
"""
from __future__ import annotations

import enum
import re
import types
import typing
from pathlib import Path
from typing import Any

_INT = re.compile(r"-?(0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?\Z")
_UNDECIDED = object()
_installed = False


def _unwrap_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def plain_value(annotation: Any, info: Any, value: Any, param: Any = None, ctx: Any = None) -> Any:
    """`value` coerced to `annotation` as typer's pydantic coercion would, or _UNDECIDED when
    that coercion must decide (an unusual value or type, or any error)."""
    if getattr(info, "parser", None) is not None:
        return _UNDECIDED
    annotation = _unwrap_optional(annotation)
    if typing.get_origin(annotation) is list and typing.get_args(annotation) == (str,):
        # a list of strings (tracekit ingest's paths, every --label, explain-awk's gawk
        # arguments): as typer gives it
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return list(value)
        return _UNDECIDED
    if not isinstance(value, str):
        return _UNDECIDED
    ranged = getattr(info, "min", None) is not None or getattr(info, "max", None) is not None
    if annotation is str:
        return value
    if annotation is int and not ranged and _INT.match(value):
        return int(value)
    if annotation is float and not ranged and _FLOAT.match(value):
        return float(value)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum) and getattr(info, "case_sensitive", False):
        for member in annotation:
            if isinstance(member.value, str) and member.value == value:
                return member
        return _UNDECIDED
    if annotation is Path and getattr(info, "path_type", None) is None and "\x00" not in value:
        from typer._param_types import coerce_cli_path   # typer's checks: exists, file_okay, ...

        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    return _UNDECIDED


def install() -> None:
    """Put plain_value in front of typer's coercion of every parameter (once)."""
    global _installed
    if _installed:
        return
    try:
        from dataclasses import dataclass

        from typer import _coercion, core

        Base = _coercion.RuntimeParam
        build = _coercion.build_runtime_param
        original = core._TyperParameter.get_runtime_param
    except (ImportError, AttributeError):
        return

    @dataclass(frozen=True)
    class PlainRuntimeParam(Base):       # type: ignore[valid-type, misc]
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            got = plain_value(self.annotation, self.parameter_info, value, param, ctx)
            if got is not _UNDECIDED:
                return got
            return build(param.type_descriptor)._coerce_value(value, param=param, ctx=ctx)

    def get_runtime_param(self):
        if self._runtime_param is None and self.type_descriptor.file_annotation is None:
            d = self.type_descriptor
            self._runtime_param = PlainRuntimeParam(parameter_info=d.parameter_info, annotation=d.annotation)
        return original(self)

    core._TyperParameter.get_runtime_param = get_runtime_param   # type: ignore[method-assign]
    _installed = True
