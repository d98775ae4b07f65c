#!/usr/bin/env bash
# The Colab path, tested: build the wheel, install it into a fresh virtual environment (reusing the torch,
# numpy, matplotlib and Jupyter packages of the development environment, never the source tree), then from
# a folder outside the checkout run the CLI and every chapter, alone as on Colab, under nbval against the
# installed package (stored outputs compared: a chapter that prints nothing fails), and check that the
# wheel's dependencies bring every module the chapters imported (tools/wheel_deps.py).
# Usage: tools/wheel_check.sh [VENV] [CHAPTER.ipynb ...]   (VENV defaults to .venv; the chapters to all of
# book/*.ipynb; WHEEL_CHECK_JOBS kernels at a time, default 2; called by `make test`)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dev_venv=$(cd "${1:-$root/.venv}" && pwd)
shift || true
chapters=()
for nb in "$@"; do chapters+=("$(realpath "$nb")"); done
[ ${#chapters[@]} -gt 0 ] || chapters=("$root"/book/*.ipynb)
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
"$py" -m ampere validate > validate.txt 2>&1 || { grep -v "^ *ok " validate.txt | tail -25; exit 1; }
"$py" -m ampere report --out report-out --quick > report.txt || { tail -20 report.txt; exit 1; }
test -s report-out/report.json
# every chapter alone in a folder outside the checkout, as Colab opens it, under nbval (stored outputs
# compared), in kernels that record what each chapter imports
mkdir chapters modules ipython
cp "${chapters[@]}" "$root/nbval_sanitize.cfg" chapters/
"$py" -c "import sys; sys.path.insert(0, '$root/tools'); import wheel_deps; print(wheel_deps.STARTUP_CODE)" \
  > startup.py
mkdir -p ipython/profile_default/startup && mv startup.py ipython/profile_default/startup/00-ampere-modules.py
start=$(date +%s)
(cd chapters && IPYTHONDIR="$work/ipython" AMPERE_MODULES_OUT="$work/modules" \
  "$py" -m pytest -q -p no:cacheprovider --rootdir . -n "${WHEEL_CHECK_JOBS:-2}" --dist loadfile \
    --nbval --nbval-current-env --nbval-sanitize-with=nbval_sanitize.cfg --nbval-cell-timeout=300 \
    ./*.ipynb > "$work/nbval.txt" 2>&1) && nbval_rc=0 || { nbval_rc=$?; tail -80 "$work/nbval.txt"; }
tail -1 "$work/nbval.txt"
echo "${#chapters[@]} chapter(s) run from the wheel under nbval in $(( $(date +%s) - start )) s"
"$py" "$root/tools/wheel_deps.py" modules && deps_rc=0 || deps_rc=$?
[ "$nbval_rc" = 0 ] && [ "$deps_rc" = 0 ] || { echo "wheel check failed"; exit 1; }
echo "wheel check passed"
