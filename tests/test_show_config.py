"""fastfs.__version__, fastfs.show_config() and `fastfs info` (issue 8)."""

from __future__ import annotations

import io
import re

import pytest

import fastfs
from fastfs import _core
from fastfs.cli import main

FIELDS = ("compiler:", "eigen:", "openmp:", "simd (compiled for):", "cpu avx2:",
          "kernel dispatch:", "threads:")


def _shown() -> str:
    buf = io.StringIO()
    fastfs.show_config(file=buf)
    return buf.getvalue()


def test_version_is_the_package_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", fastfs.__version__)
    assert fastfs.__version__ == _core.__version__


def test_show_config_prints_every_field():
    text = _shown()
    assert text.startswith(f"fastfs {fastfs.__version__}\n")
    for field in FIELDS:
        assert field in text, field
    cfg = fastfs._show_config.build_config()
    assert f"eigen: {cfg['eigen']}" in text
    assert re.search(r"eigen: 3\.\d+\.\d+", text)
    assert f"openmp: {'on' if fastfs.has_openmp() else 'off'}" in text
    assert f"threads: {_core.default_threads()} (cores: {_core.available_cores()})" in text


def test_show_config_defaults_to_stdout(capsys):
    fastfs.show_config()
    assert capsys.readouterr().out == _shown()


def test_runtime_dispatch_matches_the_cpu():
    cfg = fastfs._show_config.build_config()
    assert isinstance(cfg["cpu_avx2"], bool)
    if cfg["arch"] == "x86_64" and "target_clones" in cfg["simd_dispatch"]:
        want = "avx2" if cfg["cpu_avx2"] else "default"
        assert cfg["simd_dispatch"].startswith(want + " ")
    if cfg["arch"] != "x86_64":
        assert not cfg["cpu_avx2"]


def test_cpu_avx2_agrees_with_proc_cpuinfo():
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            flags = next((line for line in fh if line.startswith("flags")), None)
    except OSError:
        flags = None
    if flags is None or fastfs._show_config.build_config()["arch"] != "x86_64":
        pytest.skip("no /proc/cpuinfo flags to compare with (not Linux x86-64)")
    assert _core.cpu_supports_avx2() == (" avx2" in flags)


def test_cli_info_is_show_config(capsys):
    assert main(["info"]) == 0
    assert capsys.readouterr().out == _shown()
