"""Build hook: compile the parsers' C fast paths (tracekit/formats/parsers/_wiredc.c for wired traces
and normalize_ws, tracekit/formats/parsers/_wirelessc.c for wireless traces) with the machine's C
compiler, next to their sources, so that editable installs (scripts/setup.sh) and wheels both
have them. Without a compiler or Python's headers (Debian: gcc, python3-dev) the build goes on
without them and tracekit uses its pure-Python parsers (same results, slower)."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCES = (Path("tracekit/formats/parsers/_wiredc.c"), Path("tracekit/formats/parsers/_wirelessc.c"))


def compile_extension(root: Path, source: Path) -> Path | None:
    """Compile `source` into tracekit/formats/parsers/<its name><EXT_SUFFIX>; its path, or None on failure."""
    src = root / source
    out = src.with_name(src.stem + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    include = sysconfig.get_paths()["include"]
    cmd = [*cc, "-O2", "-Wall", "-shared", "-fPIC", f"-I{include}", str(src), "-o", str(out)]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        print(f"tracekit: the C fast path {src.stem} was not built ({' '.join(cmd[:1])}: {detail.strip()[:500]}); "
              "using the pure-Python parser (install gcc and python3-dev, then reinstall)", file=sys.stderr)
        out.unlink(missing_ok=True)
        return None
    return out


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        for source in SOURCES:
            out = compile_extension(Path(self.root), source)
            if out is None:
                continue
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
            if version != "editable":            # editable installs import it from the source tree
                build_data["force_include"][str(out)] = str(out.relative_to(self.root))
