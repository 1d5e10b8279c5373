"""The first bytes that tell a compressed trace, or an archive, from a plain one. A light
module (nothing imported): `sources` reads the tables to open a trace."""
from __future__ import annotations

COMPRESSIONS = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
)
ARCHIVES = ((b"PK\x03\x04", "a zip archive"), (b"7z\xbc\xaf\x27\x1c", "a 7z archive"))
HEAD_BYTES = 8          # enough for every magic above
