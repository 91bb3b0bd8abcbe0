"""Generates the Python code of the carcassonne.v1 protos into this package.

setup.py runs this on every build and install, so the generated code is never
committed and always matches the protos it was built from. In an editable
install, after editing a .proto, rerun it by hand (needs the `dev` extra):

    python -m carcassonne_client.generate

This module must not import anything of the package: setup.py loads it by
path, before the package (and grpc_tools' output) exists.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# The generated modules live in a private subpackage so that they never claim
# the top-level name of the proto package ("carcassonne").
GENERATED_DIR = PACKAGE_DIR / "_gen"
GENERATED_PACKAGE = "carcassonne_client._gen"
# src/carcassonne_client -> src -> clients/python -> clients -> the repository.
DEFAULT_PROTO_DIR = PACKAGE_DIR.parents[3] / "proto"


class GenerateError(RuntimeError):
    """The protos could not be found or compiled."""


def generate(proto_dir: Path, out_dir: Path = GENERATED_DIR) -> list[Path]:
    """Compiles every .proto under `proto_dir` into `out_dir`, replacing
    whatever was there, and returns the files written."""
    # Imported here: grpc_tools is needed to build, not to use the client.
    import grpc_tools
    from grpc_tools import protoc

    proto_dir = proto_dir.resolve()
    protos = sorted(proto_dir.rglob("*.proto"))
    if not protos:
        raise GenerateError(f"no .proto files under {proto_dir}")
    # Start from scratch so that a deleted or renamed proto leaves no module.
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    well_known = Path(grpc_tools.__file__).parent / "_proto"
    args = [
        "grpc_tools.protoc",
        f"--proto_path={proto_dir}",
        f"--proto_path={well_known}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *(str(p) for p in protos),
    ]
    if protoc.main(args) != 0:
        raise GenerateError(f"protoc failed on the protos under {proto_dir}")

    roots = sorted({p.relative_to(proto_dir).parts[0] for p in protos})
    _rebase_imports(out_dir, roots)
    _make_packages(out_dir)
    return sorted(p for p in out_dir.rglob("*") if p.is_file())


def _rebase_imports(out_dir: Path, roots: list[str]) -> None:
    """protoc writes imports rooted at the proto package
    ("from carcassonne.v1 import types_pb2"); point them into our package."""
    pattern = re.compile(rf"^from ({'|'.join(map(re.escape, roots))})([. ])", re.MULTILINE)
    for path in out_dir.rglob("*.py*"):
        text = path.read_text(encoding="utf-8")
        rebased = pattern.sub(rf"from {GENERATED_PACKAGE}.\1\2", text)
        if rebased != text:
            path.write_text(rebased, encoding="utf-8")


def _make_packages(out_dir: Path) -> None:
    """Regular packages (not namespace ones), so setuptools' package finder
    picks them up."""
    for directory in [out_dir, *(d for d in out_dir.rglob("*") if d.is_dir())]:
        (directory / "__init__.py").touch()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m carcassonne_client.generate",
        description="Generate the gRPC code of the carcassonne protos into this package.",
    )
    parser.add_argument(
        "--proto-dir",
        type=Path,
        default=DEFAULT_PROTO_DIR,
        help="the directory the protos' import paths start from (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    try:
        written = generate(args.proto_dir)
    except GenerateError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"generated {len(written)} files into {GENERATED_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
