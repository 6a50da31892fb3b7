"""fastfs.omp, backward_least_squares, lasso_path and lasso (SPEC 4.1-4.2) against the NumPy
references of tests/reference.py and scikit-learn."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fastfs
import reference as ref
from fastfs.linear import ConvergenceWarning


def regression_problem(gen, m=80, n=30, k=5, noise=0.1):
    X = gen.standard_normal((m, n))
    w = np.zeros(n)
    idx = gen.choice(n, size=k, replace=False)
    w[idx] = gen.uniform(1, 3, size=k) * gen.choice([-1, 1], size=k)
    y = X @ w + noise * gen.standard_normal(m)
    return X, y


# ------------------------------------------------------------------------------------------
# OMP


@pytest.mark.parametrize("criterion", ["exact", "gradient", "coordinate"])
@pytest.mark.parametrize("shape", [(60, 25), (30, 80)])
def test_omp_svd_matches_book_reference(rng, criterion, shape):
    X, y = regression_problem(rng, *shape, k=6)
    X[:, 3] *= 5.0  # unequal column norms tell the three rules apart
    rounds = 12
    sel, coef, rss = ref.omp_book(X, y, rounds, criterion)
    res = fastfs.omp(X, y, rounds, method="svd", criterion=criterion)
    assert_array_equal(res.selected, sel)
    assert_allclose(res.coef, coef, rtol=1e-8, atol=1e-10)
    assert_allclose(-res.history, rss, rtol=1e-8, atol=1e-10)
    assert_allclose(res.residual_norms, np.sqrt(rss), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("criterion", ["exact", "gradient", "coordinate"])
@pytest.mark.parametrize("c", [1e14, 1e16, 1e40, 1e-40])
def test_omp_svd_with_columns_of_very_different_norms(criterion, c):
    """The SVD's rank cut is relative to the largest singular value: a column 1e14 times the
    others' norm hid their directions (the residual grew when a column was added, the picks
    went wrong). The selection does not depend on the columns' scales."""
    rng = np.random.default_rng(23)
    X = rng.standard_normal((50, 12))
    y = X[:, :4] @ [1.0, 2.0, 3.0, 4.0] + 0.1 * rng.standard_normal(50)
    Xs = X.copy()
    Xs[:, 0] *= c
    got = fastfs.omp(Xs, y, 6, method="svd", criterion=criterion)
    assert np.all(np.diff(got.residual_norms) <= 1e-12 * got.residual_norms[0])
    qr = fastfs.omp(Xs, y, 6, method="qr", criterion=criterion)
    assert_array_equal(got.selected, qr.selected)
    assert_allclose(got.residual_norms, qr.residual_norms, rtol=1e-8)
    assert_allclose(got.coef, qr.coef, rtol=1e-7)
    if criterion != "gradient":  # the gradient rule's picks depend on the column norms
        base = fastfs.omp(X, y, 6, method="svd", criterion=criterion)
        assert_array_equal(got.selected, base.selected)
        assert_allclose(got.residual_norms, base.residual_norms, rtol=1e-8)
        want = base.coef.copy()
        want[list(base.selected).index(0)] /= c
        assert_allclose(got.coef, want, rtol=1e-7)


@pytest.mark.parametrize("criterion", ["exact", "gradient", "coordinate"])
def test_omp_qr_equals_svd(rng, criterion):
    for _ in range(5):
        X, y = regression_problem(rng, 100, 60, k=8)
        rounds = 40
        a = fastfs.omp(X, y, rounds, method="svd", criterion=criterion)
        b = fastfs.omp(X, y, rounds, method="qr", criterion=criterion)
        assert_array_equal(a.selected, b.selected)
        assert_allclose(b.coef, a.coef, rtol=0, atol=1e-8)
        assert_allclose(b.history, a.history, rtol=1e-9, atol=1e-10)


def _omp_family(gen, family):
    """Data of the kinds the float32 screen of omp(method="qr") meets: tall (more samples than
    twice the features), wide, gene-expression-like (positive values with large per-column
    offsets, y almost in the span of a few columns, so the residual shrinks by orders of
    magnitude), columns dominated by their mean (every candidate's explicit part takes two
    Gram-Schmidt passes; the exact rule drops most candidates after the first product with the
    basis), tiny-scale values and duplicated columns."""
    if family == "tall":
        return regression_problem(gen, 400, 60, k=8)
    if family == "wide":
        return regression_problem(gen, 40, 300, k=6)
    if family == "gene":
        X = np.exp(gen.normal(5.0, 1.0, size=(30, 1500))) + gen.uniform(0, 1e4, size=1500)
        y = X[:, [3, 70, 900]] @ np.array([1e-3, -2e-3, 5e-4])
        return X, y + 1e-4 * y.std() * gen.standard_normal(30)
    if family == "offset":  # raw MADELON: every column mostly its mean (480 + noise)
        X = 480.0 + 10.0 * gen.standard_normal((400, 60))
        y = X[:, [2, 17, 40]] @ np.array([1.0, -0.5, 0.25])
        return X, y + 0.5 * gen.standard_normal(400)
    if family == "tiny":  # (scaled back below for the reference)
        X, y = regression_problem(gen, 300, 50, k=6)
        return np.ldexp(X, -990), y
    base, y = regression_problem(gen, 300, 30, k=6)  # duplicates: every column twice
    return np.column_stack([base, base[:, ::-1]]), y


@pytest.mark.parametrize("criterion", ["exact", "gradient"])
@pytest.mark.parametrize("family", ["tall", "wide", "gene", "offset", "tiny", "duplicates"])
def test_omp_screen_matches_reference_on_data_families(rng, family, criterion):
    """The float32 screen (every shape, both rules; the exact rule's correlations updated by one
    product per round) selects what the book's SVD procedure selects, with its coefficients."""
    X, y = _omp_family(rng, family)
    rounds = min(25, min(X.shape) // 2)
    # Powers of two scale X exactly: the tiny family's reference is that of X * 2^990.
    e = 990 if family == "tiny" else 0
    sel, coef, rss = ref.omp_book(np.ldexp(X, e), y, rounds, criterion)
    coef = np.ldexp(coef, e)
    res = fastfs.omp(X, y, rounds, criterion=criterion)
    assert_array_equal(res.selected, sel)
    assert_allclose(res.coef, coef, rtol=1e-7, atol=1e-12 * np.abs(coef).max())
    assert_allclose(-res.history, rss, rtol=1e-7, atol=1e-12 * rss[0])


def test_omp_exact_rule_is_best_single_addition(rng):
    """The exact rule = the book's argmin over j of the refitted RSS of I + j (brute force)."""
    X, y = regression_problem(rng, 50, 15, k=4)
    res = fastfs.omp(X, y, 6)
    chosen: list[int] = []
    for j in res.selected:
        rss = {c: ref.lstsq_rss(X, y, chosen + [c]) for c in range(15) if c not in chosen}
        assert j == min(rss, key=rss.get)
        chosen.append(int(j))
    assert_allclose(-res.score, ref.lstsq_rss(X, y, chosen), rtol=1e-10)
    assert_allclose(res.coef, np.linalg.lstsq(X[:, chosen], y, rcond=None)[0], rtol=1e-9)


def test_omp_gradient_matches_sklearn_on_unit_norm_columns(rng):
    from sklearn.linear_model import OrthogonalMatchingPursuit, orthogonal_mp

    X, y = regression_problem(rng, 120, 200, k=10)
    X /= np.linalg.norm(X, axis=0)
    for k in (1, 5, 25):
        sk = OrthogonalMatchingPursuit(n_nonzero_coefs=k, fit_intercept=False).fit(X, y)
        res = fastfs.omp(X, y, k, criterion="gradient")
        # scikit-learn's coef_ keeps no order; its path (below) gives every prefix.
        assert_array_equal(np.sort(res.selected), np.flatnonzero(sk.coef_))
        assert_allclose(res.coef, sk.coef_[res.selected], rtol=1e-8, atol=1e-10)
    path = orthogonal_mp(X, y, n_nonzero_coefs=25, return_path=True)
    res = fastfs.omp(X, y, 25, criterion="gradient")
    for t in range(1, 26):
        assert_array_equal(np.sort(res.selected[:t]), np.flatnonzero(path[:, t - 1]))


@pytest.mark.parametrize("method", ["qr", "svd", "reference"])
def test_omp_exact_ties_go_to_the_lower_index(rng, method):
    """Column 7 duplicates column 2 and column 8 is column 2 plus column 0: whenever one of
    them is the best, the others score the same up to rounding, and the lowest index wins.
    A score better by a relative 1e-8 is no tie: that column wins whatever its index."""
    base = rng.standard_normal((50, 7))
    X = np.column_stack([base, base[:, 2], base[:, 2] + base[:, 0]])
    y = 3.0 * base[:, 2] + base[:, 0] + 0.1 * rng.standard_normal(50)
    sel = (ref.omp_book(X, y, 3)[0] if method == "reference"
           else fastfs.omp(X, y, 3, method=method).selected)
    assert sel[0] == 2 and 7 not in sel
    # Two columns whose scores differ by a relative 1e-8 (first round: <X_j, y>^2 / ||X_j||^2).
    Z = np.zeros((4, 2))
    Z[:, 0] = [1.0, 0.0, 0.0, 0.0]
    Z[:, 1] = [0.0, 1.0, 0.0, 0.0]
    yz = np.array([1.0, 1.0 + 5e-9, 0.3, 0.2])  # column 1: (1 + 5e-9)^2 = 1 + 1e-8
    sel = (ref.omp_book(Z, yz, 1)[0] if method == "reference"
           else fastfs.omp(Z, yz, 1, method=method).selected)
    assert list(sel) == [1]


@pytest.mark.parametrize("method", ["qr", "svd", "reference"])
def test_omp_infinite_score_is_picked(rng, method):
    """A squared correlation that overflows to +inf is the best score, tied with itself (the
    tie window inf - inf is NaN, and must not lose the column)."""
    X = rng.standard_normal((50, 6))
    X[:, 2] *= 1e150
    y = 1e10 * rng.standard_normal(50)
    if method == "reference":
        with np.errstate(over="ignore"):
            sel = ref.omp_book(X, y, 3)[0]
    else:
        sel = fastfs.omp(X, y, 3, method=method).selected
    assert len(sel) == 3 and sel[0] == 2


def test_omp_qr_never_picks_a_column_in_the_span(rng):
    """Nearly collinear data: duplicates and exact combinations of chosen columns never enter,
    and the result stays equal to the SVD reference."""
    m = 60
    base = rng.standard_normal((m, 8))
    X = np.column_stack([
        base,
        base[:, 0] + base[:, 1],              # 8: in span{0, 1}
        2.0 * base[:, 2] + 3.0 * base[:, 6],  # 9: in span{2, 6}
        base[:, 3] - 0.5 * base[:, 4] + 1e-13 * rng.standard_normal(m),  # 10: span + noise
        base[:, 5] + 1e-6 * rng.standard_normal(m),  # 11: nearly 5, but independent
    ])
    y = base @ rng.standard_normal(8) + 0.5 * rng.standard_normal(m)
    res = fastfs.omp(X, y, 12)
    chosen = list(res.selected)
    span = {8: {0, 1}, 9: {2, 6}, 10: {3, 4}}
    for j, needs in span.items():
        if j in chosen:
            assert not needs <= set(chosen[:chosen.index(j)]), (j, chosen)
    # Every chosen set has full column rank.
    XI = X[:, res.selected]
    assert np.linalg.matrix_rank(XI, tol=1e-9 * np.linalg.norm(XI, 2)) == XI.shape[1]
    sel, coef, _ = ref.omp_book(X, y, 12)
    assert_array_equal(res.selected, sel)
    assert res.stopped_early == (len(sel) < 12)


def test_omp_stops_early_when_everything_is_in_the_span(rng):
    base = rng.standard_normal((40, 3))
    X = np.column_stack([base, base @ rng.standard_normal((3, 4)), np.zeros(40)])
    y = rng.standard_normal(40)
    for method in ("qr", "svd"):
        res = fastfs.omp(X, y, 7, method=method)
        assert res.stopped_early
        assert len(res.selected) == 3
        assert res.history.shape == (3,)
        assert 6 not in res.selected  # a zero column is never addable


@pytest.mark.parametrize("criterion", ["exact", "gradient", "coordinate"])
@pytest.mark.parametrize("tol", [0.5, 0.7, 0.9])
def test_omp_qr_with_a_large_tol_looks_past_the_columns_below_it(rng, criterion, tol):
    # The best-scoring columns can fall below tol while others pass it: the search goes on to
    # them (the book's argmax over the columns above tol), it does not stop there.
    X0 = np.array([[0.2, -0.5, 0.0], [-0.1, 0.0, 0.0], [-0.7, -1.1, -0.7]])
    y0 = np.array([1.1, 0.4, 0.6])
    cases = [(X0, y0)] + [(rng.standard_normal((m, n)), rng.standard_normal(m))
                          for m, n in [(5, 4), (6, 8), (8, 5), (12, 20)] * 4]
    for X, y in cases:
        k = min(X.shape)
        sel, coef, rss = ref.omp_book(X, y, k, criterion, tol=tol)
        res = fastfs.omp(X, y, k, criterion=criterion, tol=tol)
        assert_array_equal(res.selected, sel)
        assert res.stopped_early == (len(sel) < k)
        if len(sel):
            assert_allclose(-res.history, rss, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("criterion", ["exact", "gradient", "coordinate"])
def test_omp_qr_stops_when_no_column_lowers_the_rss(criterion):
    # y in the span of the first column: after it every score is exactly zero, and adding
    # columns with coefficient 0 would only pad the answer.
    X = np.eye(5)[:, :4]
    y = np.array([1.0, 0, 0, 0, 0])
    res = fastfs.omp(X, y, 3, criterion=criterion)
    assert_array_equal(res.selected, [0])
    assert res.stopped_early
    assert_allclose(res.residual_norms, [0.0])
    # the residual orthogonal to every column's new part: nothing lowers the RSS either
    X = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]])
    y = np.array([2.0, 0, 0, 3])
    res = fastfs.omp(X, y, 3, criterion=criterion)
    assert_array_equal(res.selected, [0])
    assert res.stopped_early
    assert_allclose(res.residual_norms, [3.0])


def test_omp_fit_intercept_centres(rng):
    X, y = regression_problem(rng, 70, 20, k=4)
    X += rng.uniform(-5, 5, size=20)
    y += 7.0
    res = fastfs.omp(X, y, 5, fit_intercept=True)
    Xc, yc = X - X.mean(0), y - y.mean()
    sel, coef, rss = ref.omp_book(Xc, yc, 5)
    assert_array_equal(res.selected, sel)
    assert_allclose(res.coef, coef, rtol=1e-9)
    assert_allclose(res.intercept, y.mean() - X.mean(0)[sel] @ coef, rtol=1e-9)
    pred = X[:, res.selected] @ res.coef + res.intercept
    assert_allclose(np.sum((y - pred) ** 2), -res.score, rtol=1e-9)


@pytest.mark.parametrize("order", ["C", "F"])
def test_omp_fit_intercept_centres_in_one_copy_and_leaves_x_alone(rng, order):
    import tracemalloc

    X, y = regression_problem(rng, 50, 4000, k=4)
    X = np.asarray(X + 3.0, order=order)
    before = X.copy()
    want = fastfs.omp(np.array(X, order="F"), y, 5, fit_intercept=True)
    tracemalloc.start()
    got = fastfs.omp(X, y, 5, fit_intercept=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert_array_equal(X, before)
    assert_array_equal(got.selected, want.selected)
    assert_allclose(got.coef, want.coef, rtol=1e-12)
    assert peak < 1.5 * X.nbytes  # the centring was a second copy of X


def test_omp_result_fields_and_threads(rng):
    X, y = regression_problem(rng, 300, 400, k=10)
    a = fastfs.omp(X, y, 30, n_jobs=1)
    b = fastfs.omp(X, y, 30, n_jobs=2)
    assert_array_equal(a.selected, b.selected)
    assert_array_equal(a.coef, b.coef)
    assert_array_equal(a.history, b.history)
    assert isinstance(a, fastfs.LinearResult) and isinstance(a, fastfs.SubsetResult)
    assert a.support.sum() == 30 and a.support[a.selected].all()
    assert a.score == a.history[-1]
    assert np.all(np.diff(a.history) >= 0)  # -RSS never decreases
    assert "LinearResult(" in repr(a)


@pytest.mark.parametrize("criterion", ["exact", "gradient", "coordinate"])
def test_omp_reads_a_c_ordered_x_without_a_copy_and_gets_the_same_bits(rng, criterion):
    """SPEC 1.1: any layout works, copied at most once. omp(method="qr") reads a C-ordered
    float64 X as it is (its float32 copy and column moments come from the rows): no float64
    copy of X is made, and the run is the one on the Fortran-ordered X, bit for bit, for
    integer-valued data with copies and a zero column, float32 input, a column of extreme
    magnitude (the rescaled retry) and with a thread team (more than 2**20 elements)."""
    import tracemalloc

    X, y = regression_problem(rng, 240, 90, k=6)
    X[:, 10::7] = np.round(X[:, 10::7])  # ties
    X[:, 20] = X[:, 3]
    X[:, 30] = 0.0
    big = rng.standard_normal((1100, 1000))  # (1024 columns would take the copy: 4 KiB rows)
    y_big = big[:, :5].sum(axis=1) + 0.1 * rng.standard_normal(1100)
    extreme = X.copy()
    extreme[:, 5] = np.ldexp(extreme[:, 5], 400)
    cases = [(X, y, 1), (X.astype(np.float32), y, 1), (extreme, y, 1), (big, y_big, 2)]
    for A, b, n_jobs in cases:
        assert A.flags.c_contiguous
        got = fastfs.omp(A, b, 25, criterion=criterion, n_jobs=n_jobs)
        want = fastfs.omp(np.asfortranarray(A), b, 25, criterion=criterion, n_jobs=n_jobs)
        assert_array_equal(got.selected, want.selected)
        assert_array_equal(got.coef, want.coef)
        assert_array_equal(got.history, want.history)
    # NumPy reports its allocations to tracemalloc: a float64 copy of X would be 8.8 MB.
    fastfs.omp(big, y_big, 5, criterion=criterion)
    tracemalloc.start()
    try:
        fastfs.omp(big, y_big, 25, criterion=criterion)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < big.nbytes / 8
    # The core's row-major entry takes method "qr" only.
    from fastfs import _core

    with pytest.raises(ValueError, match="method"):
        _core.omp(big, y_big, 3, "svd", criterion, 1e-10, 1, None, 0)


def test_omp_float32_and_dataframe(rng):
    import pandas as pd

    X, y = regression_problem(rng, 50, 10, k=3)
    X32 = X.astype(np.float32)
    res32 = fastfs.omp(X32, y, 4)
    res64 = fastfs.omp(X32.astype(np.float64), y, 4)
    assert_array_equal(res32.selected, res64.selected)
    assert_array_equal(res32.coef, res64.coef)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(10)])
    res = fastfs.omp(df, y, 3)
    assert list(res.selected_names) == [f"f{i}" for i in res.selected]


def test_omp_bad_input(rng):
    X, y = regression_problem(rng, 20, 5, k=2)
    with pytest.raises(ValueError, match="n_features: asked for 6 features but X has only 5"):
        fastfs.omp(X, y, 6)
    with pytest.raises(ValueError, match="n_features"):
        fastfs.omp(X, y, 0)
    with pytest.raises(ValueError, match="method: unknown value 'lu'.*'qr', 'svd'"):
        fastfs.omp(X, y, 2, method="lu")
    with pytest.raises(ValueError, match="criterion: unknown value"):
        fastfs.omp(X, y, 2, criterion="best")
    with pytest.raises(ValueError, match="tol"):
        fastfs.omp(X, y, 2, tol=-1.0)
    with pytest.raises(ValueError, match="different numbers of samples"):
        fastfs.omp(X, y[:-1], 2)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="X: contains NaN"):
        fastfs.omp(Xn, y, 2)
    with pytest.raises(TypeError, match="fit_intercept"):
        fastfs.omp(X, y, 2, fit_intercept="yes")


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_linear_one_scan_of_x_still_refuses_non_finite_values(rng, order, bad):
    """The finiteness check shares its read of X with the range scan (per column for OMP's
    exact rule and backward elimination): every entry point still refuses NaN and inf,
    wherever they are."""
    X, y = regression_problem(rng, 30, 8)
    for at in [(0, 0), (29, 7), (11, 3)]:
        Xn = np.array(X, order=order)
        Xn[at] = bad
        for call in (lambda: fastfs.omp(Xn, y, 2),
                     lambda: fastfs.omp(Xn, y, 2, criterion="gradient"),
                     lambda: fastfs.backward_least_squares(Xn, y, 2),
                     lambda: fastfs.lasso_path(Xn, y, n_alphas=3)):
            with pytest.raises(ValueError, match="X: contains NaN or infinity"):
                call()


def test_omp_own_check_asks_for_preparation_and_the_result_is_the_rescaled_one(rng):
    """Without an intercept, omp(method="qr") leaves the NaN / range check of X to the core's
    first read: the core refuses a column with a value that is not finite or a magnitude
    beyond 2**+-200 (nothing selected, needs_preparation), accepts ordinary data, and the
    public function then rescales that column exactly, so the selection is the one of the
    ordinary data and the coefficient comes back in the caller's units."""
    from fastfs import _core

    X, y = regression_problem(rng, 60, 12, k=4)
    X = np.asfortranarray(X)
    ok = _core.omp(X, y, 3, "qr", "exact", 1e-10, 1, None, 200)
    assert not ok.needs_preparation and len(ok.selected) == 3
    plain = fastfs.omp(X, y, 3)
    for scale in (-700, -300, 300, 700):
        Xs = X.copy(order="F")
        Xs[:, plain.selected[0]] = np.ldexp(Xs[:, plain.selected[0]], scale)
        out = _core.omp(Xs, y, 3, "qr", "exact", 1e-10, 1, None, 200)
        assert out.needs_preparation and len(out.selected) == 0
        for criterion in ("exact", "coordinate"):
            res = fastfs.omp(Xs, y, 3, criterion=criterion)
            want = fastfs.omp(X, y, 3, criterion=criterion)
            assert_array_equal(res.selected, want.selected)
            k = list(res.selected).index(plain.selected[0])
            assert_allclose(np.ldexp(res.coef[k], scale), want.coef[k], rtol=1e-12)
    # Columns within the range are taken as they are, whatever the criterion.
    edge = X.copy(order="F")
    edge[:, 0] = np.ldexp(edge[:, 0] / np.abs(edge[:, 0]).max(), 200) * 0.75
    assert not _core.omp(edge, y, 3, "qr", "gradient", 1e-10, 1, None, 200).needs_preparation
    with pytest.raises(ValueError, match="check_exponent"):
        _core.omp(X, y, 3, "svd", "exact", 1e-10, 1, None, 200)


def test_omp_rescaled_retry_keeps_the_column_names(rng):
    """A DataFrame with a column of extreme magnitude takes the retry path (the core refuses
    the unchecked X, Python rescales it): the result still carries the DataFrame's names, and
    a NaN in a DataFrame still raises the usual error."""
    pd = pytest.importorskip("pandas")
    X, y = regression_problem(rng, 60, 6, k=3)
    X[:, 2] *= 2.0**-400
    names = [f"g{i}" for i in range(6)]
    res = fastfs.omp(pd.DataFrame(X, columns=names), y, 3)
    want = fastfs.omp(X, y, 3)
    assert_array_equal(res.selected, want.selected)
    assert list(res.feature_names) == names
    X[5, 4] = np.nan
    with pytest.raises(ValueError, match="X: contains NaN or infinity"):
        fastfs.omp(pd.DataFrame(X, columns=names), y, 3)


# ------------------------------------------------------------------------------------------
# backward elimination


def test_backward_matches_brute_force(rng):
    X, y = regression_problem(rng, 40, 12, k=4, noise=0.5)
    kept, order, rss = ref.backward_book(X, y, 3)
    res = fastfs.backward_least_squares(X, y, 3)
    assert_array_equal(res.eliminated, order)
    assert_array_equal(res.selected, kept)
    assert_allclose(-res.history, rss, rtol=1e-9)
    assert_allclose(res.coef, np.linalg.lstsq(X[:, kept], y, rcond=None)[0], rtol=1e-9)


def test_backward_long_run_on_correlated_columns(rng):
    """Forty-two removals in a row (R^{-1} downdated by rotations each time, the leaving
    direction's products taken from the turned products) on columns that share a common
    factor: the same order as the brute-force reference."""
    m, n = 100, 50
    common = rng.standard_normal((m, 1))
    X = 0.8 * common + 0.6 * rng.standard_normal((m, n))
    X[:, ::7] *= 50.0  # and unequal scales
    y = X[:, [3, 10, 44]] @ np.array([0.05, -1.0, 2.0]) + 0.5 * rng.standard_normal(m)
    kept, order, rss = ref.backward_book(X, y, 8)
    res = fastfs.backward_least_squares(X, y, 8)
    assert_array_equal(res.eliminated, order)
    assert_array_equal(res.selected, kept)
    assert_allclose(-res.history, rss, rtol=1e-9)


def test_backward_with_dependent_columns(rng):
    base = rng.standard_normal((30, 6))
    X = np.column_stack([base, base[:, 0] - base[:, 1]])  # column 6 is in span{0, 1}
    y = base @ np.array([3.0, -2.0, 0.0, 1.0, 0.0, 0.5]) + 0.1 * rng.standard_normal(30)
    res = fastfs.backward_least_squares(X, y, 3)
    assert res.eliminated[0] == 6  # dependent: eliminated first, at no cost
    assert res.history[0] == res.history[1]
    kept, order, rss = ref.backward_book(base, y, 3)
    assert_array_equal(res.selected, kept)
    assert_array_equal(res.eliminated[1:], order)


def test_backward_keep_all(rng):
    X, y = regression_problem(rng, 30, 5, k=2)
    res = fastfs.backward_least_squares(X, y, 5)
    assert res.eliminated.size == 0
    assert_allclose(-res.score, ref.lstsq_rss(X, y, range(5)), rtol=1e-10)


# Scales at which squares (RSS), fourth powers (coef^2 / [(X^T X)^{-1}]_jj) or R^{-1} row norms
# overflow or turn subnormal unless the data are scaled first.
EXTREME_SCALES = [(1e-160, 1.0), (1e160, 1.0), (1e300, 1.0), (1.0, 1e-120), (1e-150, 1e150),
                  (2.0**-101, 2.0**-150), (1e100, 1e140)]


@pytest.mark.parametrize("sx, sy", EXTREME_SCALES)
def test_backward_at_extreme_scales_matches_brute_force(rng, sx, sy):
    X, y = regression_problem(rng, 40, 8, k=3, noise=0.5)
    kept, order, rss = ref.backward_book(X, y, 3)
    res = fastfs.backward_least_squares(X * sx, y * sy, 3)
    assert_array_equal(res.eliminated, order)
    assert_array_equal(res.selected, kept)
    assert_allclose(-res.history / sy**2, rss, rtol=1e-9)
    assert_allclose(res.coef * sx / sy, np.linalg.lstsq(X[:, kept], y, rcond=None)[0],
                    rtol=1e-9)


@pytest.mark.parametrize("sx, sy", EXTREME_SCALES)
@pytest.mark.parametrize("criterion", ["exact", "gradient"])
def test_omp_at_extreme_scales_matches_book_reference(rng, sx, sy, criterion):
    X, y = regression_problem(rng, 40, 8, k=3, noise=0.5)
    selected, coef, rss = ref.omp_book(X, y, 3, criterion=criterion)
    seen = []
    res = fastfs.omp(X * sx, y * sy, 3, criterion=criterion,
                     callback=lambda state: seen.append(state.score))
    assert_array_equal(res.selected, selected)
    assert_allclose(-res.history / sy**2, rss, rtol=1e-9)
    assert_allclose(res.coef * sx / sy, coef, rtol=1e-9)
    assert_allclose(seen, res.history[:2], rtol=1e-12)  # the callback sees the caller's units


@pytest.mark.parametrize("sx, sy", [(1.0, 1e300), (1.0, 1e160), (1.0, 1e-200), (1e-300, 1e-300),
                                    (1e-200, 1e200)])
def test_unrepresentable_rss_or_coef_is_a_clear_error(rng, sx, sy):
    # RSS about 1e600 or 1e-400, or coefficients about 1e400: float64 cannot hold the result.
    X, y = regression_problem(rng, 30, 5, k=2, noise=0.5)
    for fn in (fastfs.backward_least_squares, fastfs.omp):
        with pytest.raises(ValueError, match=r"y: the residual sums of squares or coefficients "
                                             r"lie outside the float64 range"):
            fn(X * sx, y * sy, 2)


# ------------------------------------------------------------------------------------------
# LASSO


@pytest.mark.parametrize("shape", [(50, 120), (200, 30)])
@pytest.mark.parametrize("precompute", ["auto", True, False])
def test_lasso_path_matches_sklearn(rng, shape, precompute):
    from sklearn.linear_model import lasso_path as sk_lasso_path

    X, y = regression_problem(rng, *shape, k=8, noise=0.5)
    res = fastfs.lasso_path(X, y, n_alphas=30, eps=1e-3, tol=1e-10, max_iter=100000,
                            precompute=precompute)
    alpha_max = np.abs(X.T @ y).max() / X.shape[0]  # the largest alpha with w = 0 optimal
    assert_allclose(res.alphas, np.geomspace(alpha_max, 1e-3 * alpha_max, 30), rtol=1e-12)
    assert np.all(res.coefs[:, 0] == 0) and np.any(res.coefs[:, 1] != 0)
    alphas, coefs, _ = sk_lasso_path(X, y, alphas=res.alphas, tol=1e-12, max_iter=100000)
    assert res.coefs.shape == coefs.shape
    assert_allclose(res.coefs, coefs, rtol=0, atol=1e-6)
    assert np.all(res.dual_gaps <= 1e-10 * (y @ y))


@pytest.mark.parametrize("precompute", [False, True])
def test_lasso_path_converges_fast_on_correlated_columns(precompute):
    # Neighbouring columns correlated 0.99 (AR(1)), as adjacent pixels or co-expressed genes:
    # plain coordinate descent needs hundreds of sweeps per alpha here. The path must reach
    # the duality-gap tolerance within 20 passes over the features per alpha (no
    # ConvergenceWarning, which pytest turns into an error) and agree with scikit-learn run to
    # a tighter tolerance.
    from sklearn.linear_model import lasso_path as sk_lasso_path

    gen = np.random.default_rng(0)
    m, n = 60, 200
    Z = gen.standard_normal((m, n))
    X = np.empty((m, n))
    X[:, 0] = Z[:, 0]
    for j in range(1, n):
        X[:, j] = 0.99 * X[:, j - 1] + np.sqrt(1 - 0.99**2) * Z[:, j]
    w = np.zeros(n)
    w[[20, 90, 150]] = [2.0, -1.5, 1.0]
    y = X @ w + 0.1 * gen.standard_normal(m)
    res = fastfs.lasso_path(X, y, n_alphas=10, eps=1e-2, tol=1e-10, max_iter=20,
                            precompute=precompute)
    assert np.all(res.dual_gaps <= 1e-10 * (y @ y))
    _, coefs, _ = sk_lasso_path(X, y, alphas=res.alphas, tol=1e-12, max_iter=10**6)
    assert_allclose(res.coefs, coefs, rtol=0, atol=1e-8)


def test_lasso_path_given_alphas_sorted_and_kkt(rng):
    X, y = regression_problem(rng, 60, 20, k=5)
    res = fastfs.lasso_path(X, y, alphas=[0.01, 0.5, 0.1])
    assert_array_equal(res.alphas, [0.5, 0.1, 0.01])
    m = X.shape[0]
    for k, a in enumerate(res.alphas):
        w = res.coefs[:, k]
        g = X.T @ (y - X @ w) / m  # KKT: |g_j| <= alpha, = alpha sign(w_j) where w_j != 0
        assert np.all(np.abs(g) <= a * (1 + 1e-4) + 1e-8)
        nz = w != 0
        assert_allclose(g[nz], a * np.sign(w[nz]), rtol=1e-3, atol=1e-6)


def test_lasso_single_alpha_matches_sklearn(rng):
    from sklearn.linear_model import Lasso

    X, y = regression_problem(rng, 80, 40, k=6)
    X += 3.0
    y += 2.0
    sk = Lasso(alpha=0.05, tol=1e-12, max_iter=100000).fit(X, y)
    res = fastfs.lasso(X, y, 0.05, fit_intercept=True, tol=1e-10)
    w = np.zeros(40)
    w[res.selected] = res.coef
    assert_allclose(w, sk.coef_, atol=1e-6)
    assert_allclose(res.intercept, sk.intercept_, atol=1e-6)
    assert_array_equal(np.sort(res.selected), np.flatnonzero(sk.coef_))
    assert np.all(np.diff(np.abs(res.coef)) <= 0)


@pytest.mark.parametrize("precompute", [True, False])
@pytest.mark.parametrize("alphas", [[0.05], np.array([0.05]), np.array([0.3, 0.05])[1:],
                                    np.array([0.3, 0.05])[::-2]])
def test_lasso_path_one_alpha_matches_sklearn(rng, alphas, precompute):
    # Sorting reverses the penalties; a reversed 1-element array keeps a negative stride that
    # NumPy calls contiguous and the core refuses, so the conversion must copy it.
    from sklearn.linear_model import lasso_path as sk_lasso_path

    X, y = regression_problem(rng, 60, 12, k=4)
    res = fastfs.lasso_path(X, y, alphas=alphas, tol=1e-12, max_iter=100000,
                            precompute=precompute)
    assert_array_equal(res.alphas, [0.05])
    _, coefs, _ = sk_lasso_path(X, y, alphas=[0.05], tol=1e-12, max_iter=100000)
    assert_allclose(res.coefs, coefs, rtol=0, atol=1e-8)


def test_lasso_path_alphas_go_through_the_real_vector_check(rng):
    X, y = regression_problem(rng, 30, 5, k=2)
    with pytest.raises(TypeError, match="alphas: complex values are not supported"):
        fastfs.lasso_path(X, y, alphas=[0.1 + 0.5j])
    with pytest.raises(TypeError, match="alphas: expected real numbers"):
        fastfs.lasso_path(X, y, alphas=np.array(["0.1"]))
    with pytest.raises(ValueError, match="alphas: contains NaN"):
        fastfs.lasso_path(X, y, alphas=[0.1, np.nan])
    with pytest.raises(ValueError, match="alphas: expected a non-empty 1-D array"):
        fastfs.lasso_path(X, y, alphas=[[0.1]])


def test_lasso_convergence_warning_and_bad_input(rng):
    X, y = regression_problem(rng, 40, 60, k=5)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        fastfs.lasso_path(X, y, n_alphas=5, tol=1e-14, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fastfs.lasso_path(X, y, n_alphas=5)
    with pytest.raises(ValueError, match="alphas: penalties must be >= 0"):
        fastfs.lasso_path(X, y, alphas=[0.1, -1])
    with pytest.raises(ValueError, match="precompute: unknown value"):
        fastfs.lasso_path(X, y, precompute="yes")
    with pytest.raises(ValueError, match="alpha: must be >= 0"):
        fastfs.lasso(X, y, -0.1)
    with pytest.raises(ValueError, match="n_alphas"):
        fastfs.lasso_path(X, y, n_alphas=0)
    for eps in (1, 1.0, 10.0):  # the grid would not decrease from alpha_max
        with pytest.raises(ValueError, match="eps: must be < 1"):
            fastfs.lasso_path(X, y, eps=eps, n_alphas=4)
    assert np.all(np.diff(fastfs.lasso_path(X, y, eps=0.5, n_alphas=4).alphas) < 0)


# ------------------------------------------------------------------------------------------
# OrthoBasis, the shared state of OMP, backward elimination and the least-squares criterion


def _basis_trace(X, y, ops, tol=1e-10, n_threads=1, max_products=-1, max_gram=-1):
    from fastfs import _core

    return _core._testing.ortho_basis_trace(np.asfortranarray(X, dtype=np.float64),
                                    np.asarray(y, dtype=np.float64), tol, ops, n_threads,
                                    max_products, max_gram)


def _check_state(X, y, state):
    sel = list(state["selected"])
    rss = ref.lstsq_rss(X, y, sel)
    assert_allclose(state["rss"], rss, rtol=1e-9, atol=1e-12)
    if sel:
        assert_allclose(state["coef"], np.linalg.lstsq(X[:, sel], y, rcond=None)[0], rtol=1e-8,
                        atol=1e-10)
    for k, j in enumerate(sel):  # remove_cost = RSS(I - j) - RSS(I)
        rest = [c for c in sel if c != j]
        assert_allclose(state["remove_costs"][k], ref.lstsq_rss(X, y, rest) - rss, rtol=1e-7,
                        atol=1e-9)
    for j in range(X.shape[1]):  # add_gain = RSS(I) - RSS(I + j), 0 when not addable
        if j in sel:
            assert state["gains"][j] == 0 and not state["addable"][j]
        elif state["addable"][j]:
            assert_allclose(state["gains"][j], rss - ref.lstsq_rss(X, y, sel + [j]), rtol=1e-7,
                            atol=1e-9)


def test_ortho_basis_add_remove_reset(rng):
    X, y = regression_problem(rng, 40, 9, k=4)
    ops = [("add", [3]), ("add", [0]), ("add", [7]), ("add", [1]), ("remove", [0]),
           ("remove", [1]), ("add", [0]), ("add", [5]), ("remove", [5]), ("reset", [8, 2, 4]),
           ("remove", [8]), ("reset", [])]
    trace = _basis_trace(X, y, ops)
    for state in trace:
        _check_state(X, y, state)
    assert list(trace[6]["selected"]) == [3, 7, 0]
    assert list(trace[9]["selected"]) == [8, 2, 4]
    assert trace[-1]["selected"].size == 0 and trace[-1]["rss"] == pytest.approx(y @ y)
    again = _basis_trace(X, y, ops, n_threads=2)
    for a, b in zip(trace, again):
        assert_array_equal(a["gains"], b["gains"])


def test_ortho_basis_hinted_adds_skip_the_pass_and_keep_the_state(rng):
    """A column whose Gram column an earlier pass computed on the side (a hint) is added without
    reading X, and a removal takes the leaving direction from the turned products: neither
    changes the state, which still equals least squares refitted from scratch."""
    X, y = regression_problem(rng, 50, 12, k=4)
    ops = [("add", [3, 5, 9, 1]),  # a pass, with Gram columns of 5, 9, 1 on the side
           ("add", [9]),           # hinted: no pass
           ("add", [1]),           # hinted: no pass
           ("add", [0]),           # not hinted: a pass
           ("remove", [9]),        # turned products: no pass
           ("add", [5]),           # still cached from the first pass
           ("remove", [3]),
           ("reset", [2, 4, 6, 8, 10, 11])]  # each add hints the next three
    trace = _basis_trace(X, y, ops)
    for state in trace:
        _check_state(X, y, state)
    passes = [int(s["n_passes"]) for s in trace]
    assert passes[:7] == [1, 1, 1, 2, 2, 2, 2]
    assert passes[7] - passes[6] < 6


def test_omp_reads_x_every_round_when_the_basis_is_large_against_m(rng):
    """Gene-expression shape (few samples, many columns): the Gram columns of runners-up cost
    a pass three more products per element and save only O(n |I|) against O(n m) when the
    basis is not small against m, so OMP stops computing them and reads X every round (it was
    2x slower than without them on 72 x 7129). The selection is still the book's, as the SVD
    reference computes it."""
    X, y = regression_problem(rng, 30, 600, k=6)
    from fastfs import _core

    X = np.asfortranarray(X)
    out = _core.omp(X, y, 20, "qr", "exact", 1e-10, 1, None)
    # Runners-up are cached only while 8 (|I| + 1) <= m: in the first three rounds.
    assert int(out.n_passes) >= 20 - 3
    ref = _core.omp(X, y, 20, "svd", "exact", 1e-10, 1, None)
    assert_array_equal(out.selected, ref.selected)
    assert_allclose(out.coef, ref.coef, rtol=1e-9, atol=1e-9)


def test_ortho_basis_long_chain_of_gram_rounds_stays_exact(rng):
    """Sixty hinted additions in a row (products built from products, round after round), then
    removals down to ten: every state equals the refitted one."""
    X, y = regression_problem(rng, 90, 70, k=10)
    order = list(rng.permutation(70)[:60])
    ops = [("add", [j] + order[i + 1:i + 4]) for i, j in enumerate(order)]
    ops += [("remove", [j]) for j in order[5:55]]
    trace = _basis_trace(X, y, ops)
    for state in trace[::7] + trace[-3:]:
        _check_state(X, y, state)
    assert int(trace[59]["n_passes"]) <= 20  # one pass per four additions, about
    assert int(trace[-1]["n_passes"]) == int(trace[59]["n_passes"])


def test_ortho_basis_gram_rounds_as_accurate_as_passes_on_correlated_columns(rng):
    """AR(1) columns (neighbours correlated 0.99, scales from 1e-3 to 1e3): eighty hinted
    additions, some through Gram columns and some turned down by the 1/16 guard, then forty
    removals, against the same operations with no hints (a pass every time). The gains agree
    to 1e-10 relative, far inside what the 1e-7 refit checks would notice."""
    m, n = 200, 120
    Z = np.empty((m, n))
    Z[:, 0] = rng.standard_normal(m)
    for j in range(1, n):
        Z[:, j] = 0.99 * Z[:, j - 1] + np.sqrt(1 - 0.99**2) * rng.standard_normal(m)
    X = Z * np.logspace(-3, 3, n)[rng.permutation(n)]
    y = X[:, [10, 60, 110]] @ np.array([1e2, 1.0, 1e-2]) + rng.standard_normal(m)
    order = list(rng.permutation(n)[:80])
    hinted = [("add", [j] + order[i + 1:i + 9]) for i, j in enumerate(order)]
    plain = [("add", [j]) for j in order]
    removals = [("remove", [j]) for j in order[20:60]]
    a = _basis_trace(X, y, plain + removals)
    b = _basis_trace(X, y, hinted + removals)
    for sa, sb in zip(a, b):
        assert_array_equal(sa["selected"], sb["selected"])
        scale = np.max(sa["gains"])
        assert_allclose(sb["gains"], sa["gains"], rtol=1e-10, atol=1e-10 * scale)
        assert_allclose(sb["remove_costs"], sa["remove_costs"], rtol=1e-10,
                        atol=1e-10 * scale)
    gram_rounds = 80 - int(b[79]["n_passes"])
    assert 0 < gram_rounds < 79  # both routes were taken
    _check_state(X, y, b[79])
    _check_state(X, y, b[-1])


def test_ortho_basis_gram_route_refused_for_a_nearly_dependent_column(rng):
    """Column 1 is column 0 plus a 1e-3 perturbation: once 0 is in, its part outside the span
    is a thousandth of its norm, too small to trust (X^T X_1 - P s) / ||u_1||; it is added with
    a pass over X even though its Gram column is cached, and the state stays exact."""
    base = rng.standard_normal((40, 6))
    X = np.column_stack([base[:, 0], base[:, 0] + 1e-3 * base[:, 1], base[:, 2:]])
    y = X @ rng.standard_normal(6) + 0.1 * rng.standard_normal(40)
    trace = _basis_trace(X, y, [("add", [0, 1, 2]), ("add", [2]), ("add", [1])])
    for state in trace:
        _check_state(X, y, state)
    assert [int(s["n_passes"]) for s in trace] == [1, 1, 2]


def test_ortho_basis_odd_hints_change_nothing_but_speed(rng):
    """Hints that cannot be used (negative, out of range, selected, dead, repeated, the added
    column itself, more than three) are skipped: the state equals the one built without hints
    (up to rounding), and the pass count is what the usable hints allow."""
    base = rng.standard_normal((45, 9))
    X = np.column_stack([base, base[:, 0] + base[:, 1]])  # 9 is dead once 0 and 1 are in
    y = X @ rng.standard_normal(10) + 0.1 * rng.standard_normal(45)
    plain = [("add", [0]), ("add", [1]), ("add", [4]), ("add", [5]), ("remove", [1]),
             ("add", [6]), ("add", [7])]
    odd = [("add", [0, -3, 0, 10**6, 4]), ("add", [1, 0, 1, 4, 4, 4]),  # 4 cached first
           ("add", [4, 9, 9, 5, 6, 7, 8, 2]),  # 4 was cached: no pass, no new Gram columns
           ("add", [5, 9, 6, 7, 8, 2]), ("remove", [1]), ("add", [6]), ("add", [7])]
    a, b = _basis_trace(X, y, plain), _basis_trace(X, y, odd)
    for sa, sb in zip(a, b):
        assert_array_equal(sa["selected"], sb["selected"])
        assert_allclose(sb["gains"], sa["gains"], rtol=1e-12, atol=1e-12)
        assert_allclose(sb["rss"], sa["rss"], rtol=1e-12)
        _check_state(X, y, sb)
    assert [int(s["n_passes"]) for s in a] == [1, 2, 3, 4, 4, 5, 6]
    # 0: pass (caches 4); 1: pass (nothing new); 4: cached; 5: pass (caches 6, 7, 8 - 9 is
    # dead); remove: none; 6 and 7: cached.
    assert [int(s["n_passes"]) for s in b] == [1, 2, 2, 3, 3, 3, 3]


def test_ortho_basis_small_budgets(rng):
    """Products capped at 3 columns and the Gram cache at 2: past the cap every addition and
    removal reads X again, clear() brings the products back, a full cache is emptied, and
    every state still equals least squares refitted from scratch."""
    X, y = regression_problem(rng, 40, 14, k=4)
    ops = [("add", [0, 1, 2, 3]), ("add", [1]), ("add", [2, 3, 4]), ("add", [3, 5]),
           ("add", [4, 5, 6]), ("remove", [1]), ("add", [6]), ("clear", []),
           ("add", [7, 8, 9]), ("add", [8]), ("remove", [7]), ("reset", [10, 11, 12, 13])]
    trace = _basis_trace(X, y, ops, max_products=3, max_gram=2)
    for state in trace:
        _check_state(X, y, state)
    passes = [int(s["n_passes"]) for s in trace]
    steps = np.diff([0] + passes)
    # 0: pass; 1: cached; 2: cached (its pass-free round is still within the cap);
    # 3 (4th column, over the cap): pass; 4: pass; remove: pass; 6: pass;
    # clear: none; 7: pass; 8: cached; remove 7: turned products; reset: within the cap.
    assert list(steps[:11]) == [1, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0]


def test_ortho_basis_threaded_pass_is_bitwise_the_serial_one(rng):
    """Above a million elements of X the passes run on two threads: the same bits as one,
    with hints, Gram rounds and removals, on a column count that leaves partial blocks."""
    m, n = 1100, 1001  # n = 1 (mod 3) and 1 (mod 4)
    X = rng.standard_normal((m, n))
    y = X[:, [5, 50, 500]] @ np.array([1.0, -2.0, 0.5]) + rng.standard_normal(m)
    ops = [("add", [5, 50, 500, 999]), ("add", [50]), ("add", [1000, 7]), ("add", [500]),
           ("remove", [50]), ("add", [7]), ("reset", [999, 998, 997, 3])]
    one, two = _basis_trace(X, y, ops, n_threads=1), _basis_trace(X, y, ops, n_threads=2)
    for a, b in zip(one, two):
        assert_array_equal(a["selected"], b["selected"])
        assert_array_equal(a["gains"], b["gains"])
        assert_array_equal(a["remove_costs"], b["remove_costs"])
        assert a["n_passes"] == b["n_passes"]
    assert int(one[-1]["n_passes"]) < 2 * len(ops)  # the Gram route was taken


@pytest.mark.parametrize("shape", [(1, 5), (7, 1), (9, 2)])
def test_ortho_basis_tiny_shapes_with_hints(rng, shape):
    """One sample, one feature, two features (a partial block of three columns): hinted
    additions and removals still give the refitted state."""
    m, n = shape
    X = rng.standard_normal(shape)
    y = rng.standard_normal(m)
    ops = [("add", [0] + list(range(n))), ("remove", [0])]
    if n > 1 and m > 1:
        ops += [("add", [1, 0]), ("add", [0]), ("remove", [1])]
    for state in _basis_trace(X, y, ops):
        _check_state(X, y, state)


def test_ortho_basis_span_columns_leave_and_return(rng):
    base = rng.standard_normal((30, 4))
    X = np.column_stack([base, base[:, 0] + 2 * base[:, 1]])  # 4 in span{0, 1}
    y = rng.standard_normal(30)
    trace = _basis_trace(X, y, [("add", [0]), ("add", [1]), ("remove", [1]), ("add", [4])])
    assert not trace[1]["addable"][4] and trace[1]["gains"][4] == 0
    assert trace[2]["addable"][4]  # back out of the span once 1 is gone
    for state in trace:
        _check_state(X, y, state)
    with pytest.raises(ValueError, match="span"):
        _basis_trace(X, y, [("add", [0]), ("add", [1]), ("add", [4])])
    with pytest.raises(ValueError, match="already selected"):
        _basis_trace(X, y, [("add", [0]), ("add", [0])])
    with pytest.raises(ValueError, match="not selected"):
        _basis_trace(X, y, [("remove", [2])])
    with pytest.raises(IndexError, match="out of range"):
        _basis_trace(X, y, [("add", [5])])


def test_omp_and_backward_callbacks_stop(rng):
    X, y = regression_problem(rng, 60, 20, k=5)
    seen = []

    def stop_at_3(state):
        seen.append((state.step, state.score, list(state.selection)))
        return state.step == 3

    res = fastfs.omp(X, y, 10, callback=stop_at_3)
    full = fastfs.omp(X, y, 10)
    assert res.stopped_early and len(res.selected) == 3
    assert_array_equal(res.selected, full.selected[:3])
    assert [s[0] for s in seen] == [1, 2, 3]
    assert_allclose([s[1] for s in seen], full.history[:3], rtol=1e-12)
    assert seen[-1][2] == list(full.selected[:3])
    assert_allclose(res.coef, np.linalg.lstsq(X[:, res.selected], y, rcond=None)[0], rtol=1e-9)
    steps = []
    fastfs.omp(X, y, 10, method="svd", callback=lambda s: steps.append(s.step))
    assert steps == list(range(1, 10))  # not after the last round

    back = fastfs.backward_least_squares(X, y, 5, callback=lambda s: s.step == 2)
    assert back.stopped_early and back.eliminated.size == 2 and back.selected.size == 18

    def boom(state):
        raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        fastfs.omp(X, y, 5, callback=boom)


@pytest.mark.parametrize("criterion", ["exact", "gradient", "coordinate"])
def test_omp_float32_screen_keeps_the_reference_selection_on_wide_data(rng, criterion):
    """Few samples, many columns (the float32 screen's case): uncentred columns at an offset of
    500 (the float32 products lose digits to it, so their bounds must be honest), columns at
    scales from 1e-3 to 1e3 (wider spreads make the SVD reference drop columns), duplicates (exact ties: the lower index wins) and a zero column.
    The selection equals the book's SVD procedure and the coefficients its least squares."""
    m, n = 40, 400
    X = rng.standard_normal((m, n)) * np.logspace(-3, 3, n)[rng.permutation(n)]
    X[:, :100] += 500.0 * np.logspace(-2, 2, 100)
    X[:, 200] = X[:, 17]
    X[:, 300] = 3.0 * X[:, 250]
    X[:, 5] = 0.0
    cols = [17, 250, 120]
    y = (X[:, cols] / np.abs(X[:, cols]).max(0)) @ np.array([1e-2, 1.0, 1e2])
    y = y + 0.5 * rng.standard_normal(m)
    a = fastfs.omp(X, y, 12, criterion=criterion)
    b = fastfs.omp(X, y, 12, method="svd", criterion=criterion)
    assert_array_equal(a.selected, b.selected)
    assert 200 not in a.selected and 5 not in a.selected
    assert_allclose(a.coef, b.coef, rtol=1e-6)
    # Whatever the rule, it matches the NumPy reference written from the book.
    if criterion == "exact":
        assert_array_equal(a.selected, ref.omp_book(X, y, 12)[0])


@pytest.mark.parametrize("fn", ["omp", "backward_least_squares"])
def test_nothing_to_explain_warns(fn):
    """y = 0 (or a constant y with an intercept) leaves every column uncorrelated with the
    residual: the selection is the column order, and a warning says so."""
    X = np.random.default_rng(0).normal(size=(30, 5))
    with pytest.warns(fastfs.EqualScoresWarning, match=f"{fn}: y is all zeros"):
        getattr(fastfs, fn)(X, np.zeros(30), 2)
    for c in (3.0, 0.1):  # 30 x 0.1 does not sum to 3 exactly: its mean keeps a rounding
        with pytest.warns(fastfs.EqualScoresWarning, match=f"{fn}: y is constant"):
            getattr(fastfs, fn)(X, np.full(30, c), 2, fit_intercept=True)
    getattr(fastfs, fn)(X, X[:, 1] + 0.5, 2, fit_intercept=True)  # quiet (warnings are errors)
    if fn == "omp":  # method "qr" stops on scores of 0 and says it selected nothing
        with pytest.warns(fastfs.EqualScoresWarning, match="no feature is selected"):
            assert fastfs.omp(X, np.zeros(30), 2).selected.size == 0
        with pytest.warns(fastfs.EqualScoresWarning, match="only the column order"):
            assert_array_equal(fastfs.omp(X, np.zeros(30), 2, method="svd").selected, [0, 1])


@pytest.mark.parametrize("precompute", [True, False])
def test_lasso_path_callback_reports_each_alpha_and_stops(precompute):
    # SPEC 1.7: after each alpha the callback sees the step and the support there; True stops
    # the path, whose result then holds exactly the alphas done (the uninterrupted path's
    # first columns, bit for bit: the warm starts are the same).
    gen = np.random.default_rng(3)
    X = gen.normal(size=(50, 20))
    y = X[:, :3] @ np.array([1.0, 2.0, 3.0]) + 0.1 * gen.normal(size=50)
    full = fastfs.lasso_path(X, y, n_alphas=30, precompute=precompute)
    seen = []

    def cb(state):
        seen.append((state.step, state.selection.tolist(), state.score))
        return state.step == 7

    part = fastfs.lasso_path(X, y, n_alphas=30, precompute=precompute, callback=cb)
    assert part.stopped_early and not full.stopped_early
    assert [s[0] for s in seen] == list(range(1, 8))
    assert [s[1] for s in seen] == [np.flatnonzero(full.coefs[:, i]).tolist() for i in range(7)]
    assert all(np.isnan(s[2]) for s in seen)
    assert_array_equal(part.alphas, full.alphas[:7])
    assert_array_equal(part.coefs, full.coefs[:, :7])
    assert_array_equal(part.dual_gaps, full.dual_gaps[:7])
    assert_array_equal(part.n_iter, full.n_iter[:7])
    # a callback that never stops changes nothing
    never = fastfs.lasso_path(X, y, n_alphas=30, precompute=precompute, callback=lambda s: None)
    assert_array_equal(never.coefs, full.coefs)
    assert not never.stopped_early
    with pytest.raises(TypeError, match="callback"):
        fastfs.lasso_path(X, y, callback=3)
