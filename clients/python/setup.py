"""Build step: generate the gRPC code from ../../proto, then let setuptools
(configured in pyproject.toml) package it.

Generation runs here, at the top, rather than in a build_py hook because
setuptools looks for packages (and checks that they exist) while reading the
configuration, before any command runs: the generated subpackage has to be
on disk by then. It is cheap, so running it for each build hook is fine.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from setuptools import setup

HERE = Path(__file__).resolve().parent


def _load_generator() -> ModuleType:
    # Loaded by path: importing the package itself would need the code that
    # is about to be generated.
    path = HERE / "src" / "carcassonne_client" / "generate.py"
    spec = importlib.util.spec_from_file_location("_carcassonne_client_generate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generate() -> None:
    generator = _load_generator()
    proto_dir = Path(os.environ.get("CARCASSONNE_PROTO_DIR", HERE.parent.parent / "proto"))
    if proto_dir.is_dir():
        generator.generate(proto_dir)
    elif any(generator.GENERATED_DIR.rglob("*_pb2.py")):
        # Building from an sdist, which carries the generated code but not
        # the protos next to it.
        pass
    else:
        sys.exit(
            f"error: no protos at {proto_dir}: build from the repository checkout "
            "or set CARCASSONNE_PROTO_DIR"
        )


_generate()
setup()
