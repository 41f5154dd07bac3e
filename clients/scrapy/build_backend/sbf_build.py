# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""A PEP 517 build backend in the standard library alone.

sbf_scrapy is pure Python with no build step, and its users install it
where no package index may be reachable (`pip install --no-index
./clients/scrapy`).  A backend named in `requires` would have to come from
an index, so this one lives in the tree (`backend-path` in pyproject.toml)
and does the little a pure-Python wheel needs: copy the packages listed
under [tool.sbf-build], and write the metadata (core metadata 2.1), WHEEL
and RECORD files of the wheel format (PEP 427).  It also builds an sdist
and an editable wheel (PEP 660: a .pth file naming this directory).

Archive members get a fixed time stamp and mode, so that a build is
byte-for-byte the same from the same tree.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import tarfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the earliest time a zip file can hold (1980-01-01)
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
TAG = "py3-none-any"


def _project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _names() -> tuple[str, str, str]:
    """The distribution's name, its normalised file name form and version."""
    project = _project()["project"]
    name = project["name"]
    # PEP 427 / PEP 503: runs of -_. become one underscore in file names
    return name, re.sub(r"[-_.]+", "_", name).lower(), project["version"]


def _metadata() -> str:
    project = _project()["project"]
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
    ]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "license" in project and "text" in project["license"]:
        lines.append(f"License: {project['license']['text']}")
    for author in project.get("authors", []):
        lines.append(f"Author: {author['name']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    for requirement in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {requirement}")
    return "\n".join(lines) + "\n"


def _wheel_file() -> str:
    return f"Wheel-Version: 1.0\nGenerator: sbf_build\nRoot-Is-Purelib: true\nTag: {TAG}\n"


def _package_files() -> list[tuple[str, bytes]]:
    """(path in the wheel, contents) of every file of the listed packages."""
    files = []
    for package in _project()["tool"]["sbf-build"]["packages"]:
        for path in sorted((ROOT / package).rglob("*")):
            if path.is_dir() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            files.append((path.relative_to(ROOT).as_posix(), path.read_bytes()))
    return files


def _dist_info_files() -> list[tuple[str, bytes]]:
    return [
        ("METADATA", _metadata().encode()),
        ("WHEEL", _wheel_file().encode()),
    ]


def _write_wheel(wheel_directory: str, files: list[tuple[str, bytes]]) -> str:
    """Writes the files, the dist-info files and RECORD into a wheel."""
    _, dist, version = _names()
    dist_info = f"{dist}-{version}.dist-info"
    files = files + [(f"{dist_info}/{name}", data) for name, data in _dist_info_files()]
    record = []
    for path, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))

    wheel_name = f"{dist}-{version}-{TAG}.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel_name, "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files:
            info = zipfile.ZipInfo(path, ZIP_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return wheel_name


# PEP 517 hooks

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _, dist, version = _names()
    dist_info = Path(metadata_directory) / f"{dist}-{version}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    for name, data in _dist_info_files():
        (dist_info / name).write_bytes(data)
    return dist_info.name


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _, dist, _ = _names()
    return _write_wheel(wheel_directory, [(f"{dist}.pth", f"{ROOT}\n".encode())])


def build_sdist(sdist_directory, config_settings=None):
    _, dist, version = _names()
    base = f"{dist}-{version}"
    members = [("PKG-INFO", _metadata().encode())]
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT)
        if path.is_dir() or "__pycache__" in relative.parts or path.suffix == ".pyc":
            continue
        if relative.parts[0] in ("build", "dist") or relative.parts[0].endswith(".egg-info"):
            continue
        members.append((relative.as_posix(), path.read_bytes()))
    name = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as sdist:
        for path, data in members:
            info = tarfile.TarInfo(f"{base}/{path}")
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 0
            sdist.addfile(info, io.BytesIO(data))
    return name
