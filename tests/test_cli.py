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


# ------------------------------------------------------------------------------------------
# fastfs select: files written by the tests, end to end


@pytest.fixture
def table(tmp_path):
    import numpy as np
    import pandas as pd

    gen = np.random.default_rng(0)
    X = gen.standard_normal((150, 6))
    y = np.where(X[:, 0] + X[:, 2] > 0, "yes", "no")
    df = pd.DataFrame(X, columns=[f"g{i}" for i in range(6)])
    df["outcome"] = y
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path, df


def _select(argv, capsys):
    code = main(["select", *map(str, argv)])
    return code, capsys.readouterr().out


def test_select_prints_writes_and_agrees_with_the_function(table, tmp_path, capsys):
    import json

    import numpy as np
    import pandas as pd

    path, df = table
    report, reduced, png = tmp_path / "r.json", tmp_path / "reduced.csv", tmp_path / "w.png"
    code, out = _select([path, "--target", "outcome", "--method", "relieff", "--k", "2",
                         "--out", report, "--plot", png, "--quiet"], capsys)
    assert code == 0
    # The same as calling the function on the same columns: its two best features.
    features = df.drop(columns=["outcome"])
    w = fastfs.relieff(features, df["outcome"]).weights
    best = [features.columns[j] for j in np.argsort(-w, kind="stable")[:2]]
    assert out.splitlines()[0].startswith("relieff: 2 of 6 features selected in")
    assert [line.split()[1] for line in out.splitlines()[1:3]] == best
    data = json.loads(report.read_text())
    assert data["selected"] == best and data["n_features"] == 6
    np.testing.assert_allclose([data["scores"][c] for c in features.columns], w, rtol=1e-12)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The reduced data: the selected columns, then the target, values unchanged.
    code, _ = _select([path, "--target", "outcome", "--method", "anova_f", "--k", "2",
                       "--out", reduced], capsys)
    assert code == 0
    kept = pd.read_csv(reduced)
    scores = fastfs.filters.anova_f(features, df["outcome"]).scores
    top = [features.columns[j] for j in np.argsort(-scores, kind="stable")[:2]]
    assert list(kept.columns) == top + ["outcome"]
    pd.testing.assert_frame_equal(kept, df[top + ["outcome"]])


@pytest.mark.parametrize("argv, message", [
    (["--target", "nope", "--method", "relieff"], "--target: no column 'nope'"),
    (["--target", "outcome", "--method", "gflip", "--k", "2"],
     "--k: gflip chooses its own number of features"),
    (["--target", "outcome", "--method", "relieff", "--k", "0"], "--k: must be >= 1"),
    (["--target", "outcome", "--method", "rgs"], "--target: rgs needs a numeric target"),
    (["--target", "outcome", "--method", "relieff", "--k", "9"],
     "--k: must be at most the number of features (6), got 9"),
    (["--target", "outcome", "--method", "anova_f", "--k", "7"],
     "--k: must be at most the number of features (6), got 7"),
    (["--target", "outcome", "--method", "relieff", "--out", "/nonexistent-dir/o.csv"],
     "--out: no such folder: '/nonexistent-dir'"),
    (["--target", "outcome", "--method", "relieff", "--plot", "/nonexistent-dir/w.png"],
     "--plot: no such folder: '/nonexistent-dir'"),
    (["--target", "outcome", "--method", "relieff", "--out", "o.xlsx"],
     "--out: unknown file type '.xlsx'; expected .csv, .parquet or .json"),
    (["--target", "outcome", "--method", "relieff", "--plot", "w.foo"],
     "--plot: unknown image type '.foo'; expected one of"),
])
def test_select_bad_arguments_are_one_line_errors(table, argv, message, capsys):
    path, _ = table
    with pytest.raises(SystemExit) as exc:
        main(["select", str(path), *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert message in err.strip().splitlines()[-1]


def test_select_checks_outputs_before_it_runs(table, tmp_path, capsys, monkeypatch):
    # a typo in --out or --plot is refused before the (possibly long) selection
    import fastfs.sklearn as sk

    def never(*args, **kwargs):
        raise AssertionError("the selection ran")

    monkeypatch.setattr(sk.ReliefF, "fit", never)
    path, _ = table
    for flag, value in (("--out", tmp_path / "o.xlsx"), ("--plot", tmp_path / "w.foo"),
                        ("--out", tmp_path / "no" / "o.csv")):
        with pytest.raises(SystemExit):
            main(["select", str(path), "--target", "outcome", "--method", "relieff",
                  flag, str(value)])
        assert capsys.readouterr().err.strip().splitlines()[-1].split(": error: ")[1] \
            .startswith(flag)


def test_select_unwritable_output_is_a_one_line_error(table, tmp_path, capsys, monkeypatch):
    # a write that fails after the checks (disk full, permissions): one line, no traceback
    import errno

    import pandas as pd

    def full(self, path, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    path, _ = table
    out = tmp_path / "o.csv"
    with pytest.raises(SystemExit) as exc:
        main(["select", str(path), "--target", "outcome", "--method", "anova_f",
              "--out", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].endswith(f"error: No space left on device: {out}")


def test_select_target_with_missing_labels_names_the_column(table, tmp_path, capsys):
    path, df = table
    df = df.astype({"outcome": object})
    df.loc[[4, 9], "outcome"] = None
    bad = tmp_path / "na.csv"
    df.to_csv(bad, index=False)
    with pytest.raises(SystemExit) as exc:
        main(["select", str(bad), "--target", "outcome", "--method", "relieff"])
    assert exc.value.code == 2
    assert ("--target: column 'outcome' has 2 missing value(s) (file lines 6, 11)"
            in capsys.readouterr().err)


def test_python_dash_m_fastfs_is_the_command():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "fastfs", "--version"], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == f"fastfs {fastfs.__version__}"


def test_select_missing_file_and_non_numeric_column(table, tmp_path, capsys):
    path, df = table
    with pytest.raises(SystemExit) as exc:
        main(["select", str(tmp_path / "missing.csv"), "--target", "outcome",
              "--method", "relieff"])
    assert exc.value.code == 2
    assert "no such file" in capsys.readouterr().err
    df = df.assign(colour=["red", "blue", "green"] * 50)
    bad = tmp_path / "bad.csv"
    df.to_csv(bad, index=False)
    with pytest.raises(SystemExit) as exc:
        main(["select", str(bad), "--target", "outcome", "--method", "relieff"])
    assert exc.value.code == 2
    assert "'colour'" in capsys.readouterr().err


def test_select_parquet_needs_pyarrow_or_reads_it(table, tmp_path, capsys):
    path, df = table
    parquet = tmp_path / "data.parquet"
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        parquet.write_bytes(b"PAR1")  # never read: pandas asks for pyarrow first
        with pytest.raises(SystemExit) as exc:
            main(["select", str(parquet), "--target", "outcome", "--method", "relieff"])
        assert exc.value.code == 2
        assert "pyarrow" in capsys.readouterr().err
    else:
        df.to_parquet(parquet, index=False)
        code, out = _select([parquet, "--target", "outcome", "--method", "relieff", "--k",
                             "2"], capsys)
        assert code == 0 and "2 of 6 features" in out


def test_select_rfe_agrees_with_the_function(table, capsys):
    path, df = table
    code, out = _select([path, "--target", "outcome", "--method", "rfe", "--k", "2"], capsys)
    assert code == 0
    features = df.drop(columns=["outcome"])
    res = fastfs.rfe(features, df["outcome"], 2, step=0.1)  # the command's step
    assert out.splitlines()[0].startswith("rfe: 2 of 6 features selected in")
    assert sorted(line.split()[1] for line in out.splitlines()[1:3]) == \
        sorted(features.columns[res.selected])


def test_select_keeps_the_wrappers_short_on_wide_data(tmp_path, capsys):
    # ORDERED-FS over every size of 60 features, or RFE one feature at a time, would make
    # thousands of fits: the command caps the sizes at 20 and removes a tenth per step
    import numpy as np
    import pandas as pd

    from fastfs import _select_cli

    gen = np.random.default_rng(1)
    X = gen.standard_normal((80, 60))
    df = pd.DataFrame(X, columns=[f"g{i}" for i in range(60)])
    df["outcome"] = (X[:, 3] - X[:, 7] > 0).astype(int)
    path = tmp_path / "wide.csv"
    df.to_csv(path, index=False)
    assert _select_cli._selector("ordered_fs", None, None, False, 60).max_features == 20
    assert _select_cli._selector("ordered_fs", None, None, False, 6).max_features == 6
    assert _select_cli._selector("rfe", None, None, False, 60).step == 0.1
    code, out = _select([path, "--target", "outcome", "--method", "ordered_fs", "--out",
                         tmp_path / "r.json"], capsys)
    assert code == 0
    import json

    report = json.loads((tmp_path / "r.json").read_text())
    assert 0 <= len(report["selected"]) <= 20


@pytest.mark.parametrize("method", ["t_test", "s2n", "auc", "pearson"])
def test_select_signed_filters_keep_both_directions(tmp_path, method, capsys):
    # c2 predicts the target as strongly as c0, in the other direction: ranked by strength
    # (|t|, |s2n|, max(auc, 1 - auc), |r|, from SciPy), both are kept, printed with their sign
    import numpy as np
    import pandas as pd
    from scipy import stats

    gen = np.random.default_rng(0)
    X = gen.standard_normal((120, 8))
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(8)])
    if method == "pearson":
        df["label"] = X[:, 0] - X[:, 2] + 0.3 * gen.standard_normal(120)
        signed = np.array([stats.pearsonr(X[:, j], df["label"]).statistic for j in range(8)])
        strength = np.abs(signed)
    else:
        df["label"] = (X[:, 0] - X[:, 2] > 0).astype(int)
        pos, neg = X[df["label"] == 1], X[df["label"] == 0]
        if method == "auc":
            signed = np.array([stats.mannwhitneyu(pos[:, j], neg[:, j]).statistic
                               for j in range(8)]) / (len(pos) * len(neg))
            strength = np.maximum(signed, 1 - signed)
        else:
            signed = stats.ttest_ind(pos, neg).statistic
            strength = np.abs(signed)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    code, out = _select([path, "--target", "label", "--method", method, "--k", "2",
                         "--quiet"], capsys)
    assert code == 0
    rows = [line.split() for line in out.splitlines()[1:3]]
    assert [r[1] for r in rows] == [f"c{j}" for j in np.argsort(-strength)[:2]]
    assert {r[1] for r in rows} == {"c0", "c2"}
    shown = {r[1]: float(r[2]) for r in rows}
    if method in ("pearson", "auc"):
        np.testing.assert_allclose(shown["c2"], signed[2], rtol=1e-5)
    assert (shown["c2"] < 0.5) if method == "auc" else (shown["c2"] < 0)


def test_select_refuses_a_folder_or_parquet_without_pyarrow_before_it_runs(
        table, tmp_path, capsys, monkeypatch):
    import fastfs.sklearn as sk

    def never(*args, **kwargs):
        raise AssertionError("the selection ran")

    monkeypatch.setattr(sk.ReliefF, "fit", never)
    path, _ = table
    folder = tmp_path / "out.csv"
    folder.mkdir()
    cases = [("--out", folder, "is a folder"), ("--plot", tmp_path, "is a folder")]
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        cases.append(("--out", tmp_path / "o.parquet", "pyarrow"))
    for flag, value, message in cases:
        with pytest.raises(SystemExit) as exc:
            main(["select", str(path), "--target", "outcome", "--method", "relieff",
                  flag, str(value)])
        assert exc.value.code == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert flag in last and message in last


@pytest.mark.parametrize("name, content, message", [
    ("bad.gz", bytes(range(256)) * 2, "cannot read"),
    ("bad.csv", b"\xff\xfe\xfa" * 100, "cannot read"),
    ("empty.csv", b"", "cannot read"),
])
def test_select_unreadable_data_names_the_file(tmp_path, name, content, message, capsys):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SystemExit) as exc:
        main(["select", str(path), "--target", "y", "--method", "relieff"])
    assert exc.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "DATA" in last and message in last and name in last


@pytest.mark.parametrize("content, message", [
    (b"a,b,y\n", "no data row"),              # a header only: had read as 'not numeric'
    (b"a,b,y\n1.0,2.0,0\n", "one data row"),  # scikit-learn's message named no argument
])
def test_select_too_few_rows_names_the_file(tmp_path, content, message, capsys):
    path = tmp_path / "few.csv"
    path.write_bytes(content)
    with pytest.raises(SystemExit) as exc:
        main(["select", str(path), "--target", "y", "--method", "relieff"])
    assert exc.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "DATA" in last and message in last and "few.csv" in last


def test_select_refuses_to_overwrite_its_input(table, tmp_path, capsys, monkeypatch):
    path, df = table
    copy = tmp_path / "data.csv"
    df.to_csv(copy, index=False)
    before = copy.read_bytes()
    monkeypatch.chdir(tmp_path)
    for out in (str(copy), "data.csv", "./data.csv"):
        with pytest.raises(SystemExit) as exc:
            main(["select", str(copy), "--target", "outcome", "--method", "relieff",
                  "--out", out])
        assert exc.value.code == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert "--out" in last and "input file" in last
    assert copy.read_bytes() == before


def test_select_empty_cells_are_named_by_column_and_line(table, tmp_path, capsys):
    path, df = table
    holed = df.copy()
    holed.loc[3, "g4"] = None  # the fourth data row
    file = tmp_path / "holes.csv"
    holed.to_csv(file, index=False)
    with pytest.raises(SystemExit) as exc:
        _select([file, "--target", "outcome", "--method", "anova_f"], capsys)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "DATA: anova_f needs every cell filled; empty cells in column(s) 'g4' (data rows 4)" \
        in err
    # the methods that handle missing values run
    code, out = _select([file, "--target", "outcome", "--method", "relieff", "--k", "2"],
                        capsys)
    assert code == 0 and "2 of 6 features" in out


def test_select_warnings_are_one_line_messages(table, tmp_path):
    # a warning at a shell: its message, not the library's file and source line
    import subprocess
    import sys

    path, df = table
    out = subprocess.run([sys.executable, "-m", "fastfs", "select", str(path), "--target",
                          "outcome", "--method", "chi2", "--quiet"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert lines and all(ln.startswith("warning: ") for ln in lines), out.stderr
    assert ".py:" not in out.stderr
