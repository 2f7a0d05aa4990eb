"""Generate the Python gRPC code for every .proto under protos/ into kapi_proto/.

protoc names generated modules after the proto paths (``kapi.common.v1``,
``etcdserverpb``); this script compiles into a scratch directory and moves the
result under the single package ``kapi_proto`` (``kapi_proto.kapi.common.v1``,
``kapi_proto.etcd``), rewriting the generated imports to match.

Usage: python scripts/genproto.py [--check]
  --check  regenerate into a scratch directory and exit 1 if kapi_proto/ differs.
"""

from __future__ import annotations

import filecmp
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"
PACKAGE = "kapi_proto"
_IMPORT = re.compile(r"^(from|import) (kapi|etcd)(\.| )", re.MULTILINE)


def generate(out: Path) -> None:
    """Compile protos/ into ``out/kapi_proto``; raises CalledProcessError on protoc errors."""
    files = sorted(str(p.relative_to(PROTOS)) for p in PROTOS.rglob("*.proto"))
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTOS}",
             f"--python_out={scratch}", f"--pyi_out={scratch}", f"--grpc_python_out={scratch}", *files],
            check=True,
        )
        target = out / PACKAGE
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(scratch, target)
    for path in sorted(target.rglob("*")):
        if path.is_dir():
            (path / "__init__.py").touch()
        elif path.suffix in (".py", ".pyi"):
            text = _IMPORT.sub(lambda m: f"{m.group(1)} {PACKAGE}.{m.group(2)}{m.group(3)}", path.read_text())
            path.write_text(text)
    (target / "__init__.py").write_text('"""Generated gRPC code for protos/ (scripts/genproto.py). Do not edit."""\n')


def _same(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b, ignore=["__pycache__"])
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return False
    return all(_same(a / d, b / d) for d in cmp.common_dirs)


def main() -> int:
    if "--check" in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            generate(Path(tmp))
            if not _same(Path(tmp) / PACKAGE, ROOT / PACKAGE):
                print("kapi_proto/ is out of date: run `make proto`", file=sys.stderr)
                return 1
        print("kapi_proto/ is up to date")
        return 0
    generate(ROOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
