#!/usr/bin/env bash
# The Colab path, tested: build the wheel, install it into a fresh virtual environment (reusing the torch,
# numpy, matplotlib and Jupyter packages of the development environment, never the source tree), then from
# a folder outside the checkout run the CLI and execute one chapter against the installed package.
# Usage: tools/wheel_check.sh [VENV]   (VENV defaults to .venv; called by `make test`)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dev_venv=$(cd "${1:-$root/.venv}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ampere-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$dev_venv/bin/python" -m pip wheel -q --no-deps -w "$work/dist" "$root" 2>&1 | grep -v "^$" || true
wheel=$(ls "$work"/dist/ampere_book-*.whl)
"$dev_venv/bin/python" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
data = [n for n in names if n.startswith("ampere/data/") and n.endswith(".json")]
assert any(n.startswith("ampere/data/published/") for n in data) or not list(__import__("pathlib").Path("ampere/data/published").glob("*.json")), "the wheel carries no published records"
assert "ampere/data/tables/sources.json" in data, "the wheel carries no tables"
print(f"wheel: {sys.argv[1].rsplit('/', 1)[-1]} with {len(data)} data files")
PY

python3 -m venv "$work/venv"
# The development environment's packages, as a plain path: its .pth files (the editable install of
# ampere among them) are not processed, so `import ampere` can only find the wheel.
site=$("$dev_venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
new_site=$("$work/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "$site" > "$new_site/zz-dev-packages.pth"
"$work/venv/bin/python" -m pip install -q --no-deps --no-index "$wheel"

cd "$work"
py="$work/venv/bin/python"
"$py" - <<'PY'
import ampere, pathlib
where = pathlib.Path(ampere.__file__).resolve()
assert "site-packages" in where.parts, f"ampere imported from {where}, not from the wheel"
from ampere import results
pub = results.records(kind="published")
print(f"installed ampere {ampere.__version__}: {len(pub)} published records, "
      f"{len({r.gpu for r in pub})} GPUs, {len({r.benchmark for r in pub})} benchmarks")
PY
export AMPERE_DEVICE=cpu OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONHASHSEED=0
"$py" -m ampere info > /dev/null
"$py" -m ampere validate > validate.txt || { tail -20 validate.txt; exit 1; }
"$py" -m ampere report --out report-out --quick > report.txt || { tail -20 report.txt; exit 1; }
test -s report-out/report.json
# one chapter executed against the installed package (nbclient, the chapter's own stored outputs ignored)
"$py" - "$root/book/architecture.ipynb" <<'PY'
import sys, time, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
t = time.perf_counter()
NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": "."}}).execute()
print(f"book/architecture.ipynb executed against the wheel in {time.perf_counter() - t:.0f} s")
PY
echo "wheel check passed"
