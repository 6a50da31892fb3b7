#!/usr/bin/env bash
# The whole Python suite on an extension built by Clang with its OpenMP (libomp), as the macOS
# wheels are built. CI builds and runs only the C++ tests with Clang (the extension's build and
# this run took a quarter of its time); run this before a release or after changing kernels
# whose results could depend on the compiler (summation order, OpenMP reductions).
#
#   scripts/clang_suite.sh [CLANG_VERSION]      # default 14; needs clang-N, libomp-N-dev, and an
#                                               # environment with pip install ".[test]" pytest-xdist
#                                               # cmeel-eigen pybind11 (not an editable install)
set -euo pipefail
cd "$(dirname "$0")/.."
v="${1:-14}"
command -v "clang++-$v" >/dev/null || { echo "clang++-$v not found (apt-get install clang-$v libomp-$v-dev)"; exit 1; }
prefix="$(python -m cmeel cmake);$(python -m pybind11 --cmakedir)"
CC="clang-$v" CXX="clang++-$v" cmake -S . -B build/clang-suite -G Ninja -DFASTFS_WERROR=ON \
  -DPython_EXECUTABLE="$(command -v python)" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build build/clang-suite --target _core
ldd build/clang-suite/_core*.so | grep libomp >/dev/null ||
  { echo "the Clang extension is not linked to libomp: no OpenMP"; exit 1; }
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
cp -r python/fastfs "$tree/"
rm -f "$tree"/fastfs/_core*.so
cp build/clang-suite/_core*.so "$tree/fastfs/"
PYTHONPATH="$tree" python -c 'import fastfs, sys; sys.exit(not fastfs.__file__.startswith(sys.argv[1]))' \
  "$tree" || { echo "the run did not import the Clang build: an editable install of fastfs in this"
                echo "environment takes precedence over PYTHONPATH; use one where fastfs is installed"
                echo "by 'pip install .' (or not at all) with the test extra and pytest-xdist"; exit 1; }
PYTHONPATH="$tree" python -m pytest -q -p no:cacheprovider -n 2 --ignore=tests/test_install.py tests
