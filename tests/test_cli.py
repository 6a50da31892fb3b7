"""The `fastfs` console command: --version, bad values as argparse errors, the demo's text."""

from __future__ import annotations

import pytest

import fastfs
from fastfs.cli import main


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"fastfs {fastfs.__version__}"


@pytest.mark.parametrize("argv, option", [
    (["demo", "--n-samples", "-5"], "--n-samples"),
    (["demo", "--n-samples", "1"], "--n-samples"),
    (["demo", "--n-samples", "ten"], "--n-samples"),
    (["demo", "--n-samples", "10000000000"], "--n-samples"),
    (["demo", "--seed", "-1"], "--seed"),
    (["demo", "--seed", "99999999999999999999999"], "--seed"),
    (["demo", "--seed", "1.5"], "--seed"),
    (["demo", "--n-jobs", "0"], "--n-jobs"),
    (["demo", "--n-jobs", "x"], "--n-jobs"),
])
def test_bad_values_are_one_line_errors(argv, option, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"fastfs demo: error: argument {option}: "), last


def test_a_value_the_library_refuses_is_an_argparse_error(capsys, monkeypatch):
    def refuse(*args, **kwargs):
        raise ValueError("n_jobs: too many threads\nsecond line")
    monkeypatch.setattr("fastfs.cli.gflip", refuse)
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--n-samples", "20"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == "fastfs demo: error: n_jobs: too many threads"


def test_demo_explains_what_it_shows(capsys):
    assert main(["demo", "--n-samples", "200", "--n-jobs", "1"]) == 0
    out = capsys.readouterr().out
    for text in ("xor of the signs of features 0, 1 and 2", "Only feature 0 is relevant",
                 "features 3-9 are noise", "score = e(F)", "zero_one", "nearest-neighbour",
                 "found"):
        assert text in out, text
    names = ("xor (Navot 3.7.1) ", "Ng 4.2, 30% noise ")
    rows = [line for line in out.splitlines() if line.startswith(names)]
    assert len(rows) == 6
    for row in rows:
        assert "all relevant" in row or "missed" in row
