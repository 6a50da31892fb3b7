"""``fastfs.show_config()``: what this installed copy of fastfs was built with and will run on."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import fastfs._core as _core


def build_config() -> dict[str, Any]:
    """The build and runtime configuration as a dict (the fields ``show_config`` prints).

    Keys: ``version``, ``compiler``, ``eigen``, ``openmp`` (bool), ``simd`` (the instruction
    sets Eigen was compiled for, i.e. the wheel's baseline), ``arch``, ``cpu_avx2`` (bool),
    ``simd_dispatch`` (which target_clones variant of the pair kernels runs on this CPU; a
    Clang build has no clones of them and says whether its own AVX2 kernels run),
    ``threads`` (default thread count) and ``cores`` (cores available to this process).
    """
    info = dict(_core.build_info)
    return {
        "version": _core.__version__,
        "compiler": info.get("compiler", "unknown"),
        "eigen": info.get("eigen", "unknown"),
        "openmp": bool(_core.has_openmp()),
        "simd": info.get("simd", "unknown"),
        "arch": info.get("arch", "unknown"),
        "cpu_avx2": bool(_core.cpu_supports_avx2()),
        "simd_dispatch": _core.simd_dispatch(),
        "threads": int(_core.default_threads()),
        "cores": int(_core.available_cores()),
    }


def show_config(file: TextIO | None = None) -> None:
    """Print the build configuration: version, compiler, Eigen version, OpenMP on/off, SIMD
    level compiled for, the runtime kernel dispatch (AVX2 or baseline) and available threads."""
    cfg = build_config()
    out = sys.stdout if file is None else file
    lines = [
        f"fastfs {cfg['version']}",
        f"  compiler: {cfg['compiler']}",
        f"  eigen: {cfg['eigen']}",
        f"  openmp: {'on' if cfg['openmp'] else 'off'}",
        f"  simd (compiled for): {cfg['simd']} [{cfg['arch']}]",
        f"  cpu avx2: {'yes' if cfg['cpu_avx2'] else 'no'}",
        f"  kernel dispatch: {cfg['simd_dispatch']}",
        f"  threads: {cfg['threads']} (cores: {cfg['cores']})",
    ]
    print("\n".join(lines), file=out)
