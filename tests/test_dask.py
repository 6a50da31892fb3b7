"""fastfs.dask on a LocalCluster of two worker processes: every function gives the answer of one
machine (1e-12 relative, identical selections), bad chunks give the same errors, and a lost
worker gives a retried step, not a wrong result."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import fastfs

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
fd = pytest.importorskip("fastfs.dask")


@contextlib.contextmanager
def _two_worker_processes():
    import dask

    # A task that has killed a worker once is retried once (the default is three times: a
    # task that always kills its worker would take down four workers before the error).
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        # dashboard_address=None still binds the default port 8787; ":0" takes any free one, so
        # the tests never clash with another cluster on the machine.
        cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                           memory_limit="1GiB", dashboard_address=":0")
        c = distributed.Client(cluster)
        try:
            yield c
        finally:
            c.close()
            cluster.close()


@pytest.fixture(scope="module")
def client():
    with _two_worker_processes() as c:
        yield c


@pytest.fixture
def doomed_client():
    """A cluster of its own for a test that ends worker processes: the nanny's restart of a
    killed worker can take over a minute on a loaded machine (and repeated restarts can hang in
    Dask itself, dask/distributed#8534), so no later test waits for it."""
    with _two_worker_processes() as c:
        yield c


def close(a, b, rtol=1e-12, atol=0.0):
    """Equal to one machine: 1e-12 relative; a statistic near 0 (a difference of class means
    that cancels) gets the absolute slack of 1e-12 of the largest score."""
    a, b = np.asarray(a), np.asarray(b)
    np.testing.assert_array_equal(np.isfinite(a), np.isfinite(b))
    ok = np.isfinite(a)
    scale = np.abs(a[ok]).max() if ok.any() else 0.0
    np.testing.assert_allclose(b[ok], a[ok], rtol=rtol, atol=max(atol, rtol * scale))


@pytest.fixture(scope="module")
def classes():
    gen = np.random.default_rng(7)
    X = gen.standard_normal((600, 23)) + 1e3   # a common offset: the merge must keep digits
    y = gen.integers(0, 3, 600)
    X[:, 0] += 0.5 * y
    X[:, 4] = 3.0                               # constant: score 0
    X[:, 5] = np.where(y == 1, 1.0, 2.0)        # constant within classes: inf
    y[:90] = 0                                  # a first row chunk with one class only
    return X, y


def test_import_fastfs_never_imports_dask():
    code = "import sys, fastfs; fastfs.filters.anova_f; assert 'dask' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", ["DaskFilterSelector", "DaskRelief", "DaskReliefF",
                                  "DaskSimba", "DaskGFlip", "DaskRGS", "DaskSURF",
                                  "DaskSURFstar", "DaskMultiSURF", "DaskMultiSURFstar",
                                  "DaskSFS", "DaskSBS", "DaskSFFS", "DaskSFBS",
                                  "DaskBeamSearch", "DaskExhaustive"])
def test_dask_selectors_pass_check_estimator(name):
    # Placed before the cluster starts: with no client, Dask's local threads run the checks.
    from sklearn.utils.estimator_checks import check_estimator

    kw = {"n_restarts": 1} if name in ("DaskSimba", "DaskGFlip") else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # scikit-learn's own notes on skipped checks
        results = check_estimator(getattr(fd, name)(**kw), on_fail=None)
    failed = [(r["check_name"], r["exception"]) for r in results if r["status"] == "failed"]
    assert not failed


@pytest.mark.parametrize("name", ["anova_f", "f_score", "t_test", "z_test", "s2n",
                                  "fisher_ratio", "chi2", "mutual_info", "auc", "pearson"])
def test_filters_keep_a_dataframes_column_names(client, name):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    X = np.abs(np.round(rng.normal(size=(50, 4)) * 3))  # counts, for chi2
    y = (X[:, 0] > 2).astype(int)
    df = pd.DataFrame(X, columns=["gene_a", "gene_b", 7, "gene_d"])
    kw = {"sigma": 1.0} if name == "z_test" else {}
    one = getattr(fastfs.filters, name)(df, y, **kw)
    many = getattr(fd, name)(df, y, client=client, **kw)
    assert list(many.feature_names) == ["gene_a", "gene_b", "7", "gene_d"]
    assert list(many.feature_names) == list(one.feature_names)
    close(one.scores, many.scores)
    assert getattr(fd, name)(X, y, client=client, **kw).feature_names is None


@pytest.mark.parametrize("name", ["anova_f", "chi2", "pearson", "mutual_info"])
def test_filters_score_a_scipy_sparse_x_as_one_machine(client, name):
    # in memory already: the one-machine filter reads it (a "dtype object" error before)
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(6)
    X = np.abs(np.round(rng.normal(size=(60, 5)) * 2))
    y = (X[:, 0] > 1).astype(int)
    kw = {"discrete_features": True} if name == "mutual_info" else {}
    for S in (sparse.csr_matrix(X), sparse.csc_array(X)):
        close(getattr(fd, name)(S, y, client=client, **kw).scores,
              getattr(fastfs.filters, name)(X, y, **kw).scores)
    with pytest.raises(TypeError, match="X: sparse matrices are not supported here"):
        fd.auc(sparse.csr_matrix(X), y, client=client)
    # every score equal: one warning, not one from each layer
    with pytest.warns(fastfs.EqualScoresWarning) as record:
        getattr(fd, name)(sparse.csr_matrix(np.ones((60, 3))), y, client=client, **kw)
    assert sum(issubclass(w.category, fastfs.EqualScoresWarning) for w in record) == 1


@pytest.mark.parametrize("name", ["DaskFilterSelector", "DaskReliefF", "DaskSimba", "DaskSFS"])
def test_dask_selectors_without_y_say_so_as_scikit_learn_does(name):
    est = getattr(fd, name)("anova_f") if name == "DaskFilterSelector" else getattr(fd, name)()
    X = np.random.default_rng(0).normal(size=(20, 4))
    for Xa in (X, da.from_array(X, chunks=(10, 4))):
        with pytest.raises(ValueError, match=f"This {name} estimator requires y to be passed, "
                                             "but the target y is None"):
            est.fit_transform(Xa)


@pytest.mark.parametrize("name", ["anova_f", "fisher_ratio"])
def test_class_filters_equal_one_machine(client, classes, name):
    X, y = classes
    one = getattr(fastfs.filters, name)(X, y)
    many = getattr(fd, name)(da.from_array(X, chunks=(97, 6)), y, client=client)
    close(one.scores, many.scores)
    if one.pvalues is not None:
        close(one.pvalues, many.pvalues)


@pytest.mark.parametrize("name", ["anova_f", "relief", "relieff", "multisurf", "simba", "rgs",
                                  "relieff_general"])
def test_equal_scores_warn_on_the_client_once(client, name):
    """Constant columns: the client warns as one machine does (EqualScoresWarning, once, at the
    caller's line); warnings raised in the tasks would be lost on a worker or said twice."""
    X = np.full((64, 5), 2.0)
    y = np.repeat([0, 1], 32)
    Xd = da.from_array(X, chunks=(16, 5))
    kw = {"client": client}
    if name == "relieff_general":  # a continuous target: one task runs fastfs.relieff
        name, y, kw = "relieff", np.arange(64.0), dict(kw, target="continuous")
    elif name == "rgs":
        y, kw = np.arange(64.0), dict(kw, beta=1.0, random_state=0)
    elif name == "simba":
        kw = dict(kw, n_restarts=2, random_state=0)
    with pytest.warns(fastfs.EqualScoresWarning) as record:
        res = getattr(fd, name)(Xd, y, **kw)
    ours = [w for w in record if issubclass(w.category, fastfs.EqualScoresWarning)]
    assert len(ours) == 1 and ours[0].filename == __file__
    assert str(ours[0].message).startswith(f"{name}: every feature got the same")
    values = np.asarray(getattr(res, "weights", None) if hasattr(res, "weights") else res.scores)
    assert np.all(values == values[0])


def test_chunks_without_rows_are_skipped(client, classes):
    X, y = classes
    Xd = da.from_array(X, chunks=((0, 250, 0, 350), (10, 13)))
    close(fastfs.filters.anova_f(X, y).scores, fd.anova_f(Xd, y, client=client).scores)
    t = X[:, 0] + np.arange(600) % 5
    close(fastfs.filters.pearson(X, t).scores, fd.pearson(Xd, t, client=client).scores,
          atol=1e-14)


def test_anova_f_equals_scikit_learn(client, classes):
    from sklearn.feature_selection import f_classif

    X, y = classes
    keep = [j for j in range(X.shape[1]) if j not in (4, 5)]
    # F does not change with a common offset; scikit-learn's sums of squares lose digits to it.
    f, p = f_classif(X[:, keep] - 1e3, y)
    res = fd.anova_f(da.from_array(X, chunks=(150, 10)), da.from_array(y, chunks=200),
                     client=client)
    np.testing.assert_allclose(res.scores[keep], f, rtol=1e-9)
    np.testing.assert_allclose(res.pvalues[keep], p, rtol=1e-9)


@pytest.mark.parametrize("name,kw", [("f_score", {}), ("s2n", {}), ("t_test", {}),
                                     ("t_test", {"equal_var": False}),
                                     ("z_test", {"sigma": 1.5})])
def test_two_class_filters_equal_one_machine(client, classes, name, kw):
    X, y = classes
    y2 = (y == 1).astype(int)
    X32 = X.astype(np.float32)   # float32 stays float32 in every chunk, as on one machine
    for data in (X, X32):
        one = getattr(fastfs.filters, name)(data, y2, **kw)
        many = getattr(fd, name)(da.from_array(data, chunks=(128, 9)), y2, client=client, **kw)
        close(one.scores, many.scores)
        if one.pvalues is not None:
            close(one.pvalues, many.pvalues)


def test_pearson_equals_one_machine_and_scikit_learn(client, rng):
    from sklearn.feature_selection import r_regression

    X = rng.standard_normal((500, 17)) * np.logspace(-3, 3, 17)
    t = X[:, 2] / 100 + rng.standard_normal(500)
    one = fastfs.filters.pearson(X, t)
    many = fd.pearson(da.from_array(X, chunks=(70, 5)), da.from_array(t, chunks=120),
                      client=client)
    close(one.scores, many.scores, atol=1e-14)
    close(one.pvalues, many.pvalues, atol=1e-14)
    np.testing.assert_allclose(many.scores, r_regression(X, t), rtol=1e-10, atol=1e-14)


def test_extreme_columns_are_rescaled_as_on_one_machine(client, classes):
    X, y = classes
    X = X.copy()
    X[:, 1] *= 1e200    # squares overflow
    X[:, 2] *= 1e-200   # subnormal squares
    Xd = da.from_array(X, chunks=(97, 6))
    close(fastfs.filters.anova_f(X, y).scores, fd.anova_f(Xd, y, client=client).scores)
    t = X[:, 1] * 1e-200 + np.arange(X.shape[0]) % 7
    close(fastfs.filters.pearson(X, t).scores, fd.pearson(Xd, t, client=client).scores,
          atol=1e-14)


def test_chi2_counts_equals_one_machine_and_scikit_learn(client, rng):
    from sklearn.feature_selection import chi2 as sk_chi2

    X = rng.poisson(3.0, size=(400, 12)).astype(float)
    y = rng.integers(0, 4, 400)
    one = fastfs.filters.chi2(X, y, kind="counts")
    many = fd.chi2(da.from_array(X, chunks=(64, 5)), y, kind="counts", client=client)
    close(one.scores, many.scores)
    close(one.pvalues, many.pvalues)
    np.testing.assert_allclose(many.scores, sk_chi2(X, y)[0], rtol=1e-10)
    # a constant column at counts of 1e200: 0 and p 1, not its shares' rounding times 1e200
    big = X * 1e200
    big[:, 3] = 7e200
    many = fd.chi2(da.from_array(big, chunks=(64, 5)), y, kind="counts", client=client)
    assert many.scores[3] == 0.0 and many.pvalues[3] == 1.0
    np.testing.assert_allclose(np.delete(many.scores, 3),
                               np.delete(sk_chi2(X, y)[0], 3) * 1e200, rtol=1e-9)
    with pytest.raises(ValueError, match="non-negative"):
        fd.chi2(da.from_array(X - 5, chunks=(64, 5)), y, kind="counts", client=client)


def test_column_block_statistics_equal_one_machine(client, rng):
    from sklearn.metrics import roc_auc_score

    X = np.round(rng.standard_normal((300, 14)), 1)      # ties and repeated values
    y = rng.integers(0, 3, 300)
    X[:, 0] += y
    Xd = da.from_array(X, chunks=(70, 5))
    for name, kw in [("chi2", {}), ("mutual_info", {}), ("mutual_info", {"binning": "uniform"}),
                     ("mutual_info", {"discrete_features": True, "alpha": 0.0})]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fastfs.filters.DiscretenessWarning)
            one = getattr(fastfs.filters, name)(X, y, **kw)
            many = getattr(fd, name)(Xd, y, client=client, block_cols=4, **kw)
        np.testing.assert_array_equal(many.scores, one.scores)   # the same kernel per column
        if one.pvalues is not None:
            np.testing.assert_array_equal(many.pvalues, one.pvalues)
    y2 = (y == 1).astype(int)
    many = fd.auc(Xd, y2, client=client)
    np.testing.assert_array_equal(many.scores, fastfs.filters.auc(X, y2).scores)
    np.testing.assert_allclose(many.scores[:3], [roc_auc_score(y2, X[:, j]) for j in range(3)],
                               rtol=1e-12)


def test_chi2_warns_about_continuous_features_as_one_machine(client, rng):
    X = rng.standard_normal((100, 3))
    y = rng.integers(0, 2, 100)
    with pytest.warns(fastfs.EqualScoresWarning, match="same score .100. up to rounding"):
        with pytest.warns(fastfs.filters.DiscretenessWarning, match="about one sample per value"):
            fd.chi2(da.from_array(X, chunks=50), y, client=client)


def test_nan_in_one_chunk_gives_the_error_of_one_machine(client, classes):
    X, y = classes
    X = X.copy()
    X[517, 13] = np.nan
    with pytest.raises(ValueError) as one:
        fastfs.filters.anova_f(X, y)
    with pytest.raises(ValueError) as many:
        fd.anova_f(da.from_array(X, chunks=(100, 10)), y, client=client)
    assert str(many.value) == str(one.value)
    with pytest.raises(ValueError, match="NaN or infinity"):
        fd.pearson(da.from_array(X, chunks=(100, 10)), np.arange(600.0), client=client)
    with pytest.raises(ValueError) as one:
        fastfs.filters.mutual_info(X, y)
    with pytest.raises(ValueError) as many:
        fd.mutual_info(da.from_array(X, chunks=(100, 10)), y, client=client)
    assert str(many.value) == str(one.value)


def test_bad_input_gives_the_errors_of_one_machine(classes):
    X, y = classes
    Xd = da.from_array(X, chunks=(100, 10))
    for f, yy in [("anova_f", np.zeros(600)), ("f_score", y), ("pearson", np.ones(600))]:
        with pytest.raises(ValueError) as one:
            getattr(fastfs.filters, f)(X, yy)
        with pytest.raises(ValueError) as many:
            getattr(fd, f)(Xd, yy)
        assert str(many.value) == str(one.value)
    with pytest.raises(ValueError, match="2-D"):
        fd.anova_f(da.zeros(10, chunks=5), y[:10])


@pytest.fixture(scope="module")
def neighbours():
    gen = np.random.default_rng(11)
    X = gen.standard_normal((403, 70))          # >= 64 features: ReliefF's float32 shortlist
    y = gen.integers(0, 3, 403)
    X[:, 0] += y
    X[:, 1] = np.round(X[:, 1])                 # ties between distances
    return X, y


def test_relief_equals_one_machine(client, neighbours):
    X, y = neighbours
    close(fastfs.relief(X, y).weights,
          fd.relief(da.from_array(X, chunks=(100, 70)), y, client=client, block_rows=90).weights)
    one = fastfs.relief(X, y, n_iter=700, random_state=5)
    many = fd.relief(X, y, n_iter=700, random_state=5, client=client, block_rows=128)
    close(one.weights, many.weights)
    np.testing.assert_array_equal(one.ranking[:10], many.ranking[:10])


def test_relief_equals_reference(client, random_problem):
    from reference import relief as ref_relief

    X, y = random_problem
    np.testing.assert_allclose(fd.relief(X, y, client=client, block_rows=40).weights,
                               ref_relief(X, y), rtol=1e-10)


def test_relieff_equals_one_machine_and_reference(client, neighbours, random_problem):
    from reference import relieff as ref_relieff

    X, y = neighbours
    close(fastfs.relieff(X, y, n_neighbors=5).weights,
          fd.relieff(X, y, n_neighbors=5, client=client, block_rows=60).weights)
    X, y = random_problem
    np.testing.assert_allclose(fd.relieff(X, y, client=client, block_rows=32).weights,
                               ref_relieff(X, y), rtol=1e-10, atol=1e-14)


def test_relieff_takes_a_fraction_of_the_samples(client, neighbours):
    # n_neighbors as a float: k = int(fraction * n_samples / 2), as fastfs.relieff
    X, y = neighbours
    k = int(0.1 * X.shape[0] * 0.5)
    close(fd.relieff(X, y, n_neighbors=0.1, client=client, block_rows=60).weights,
          fastfs.relieff(X, y, n_neighbors=k).weights)
    continuous = dict(discrete_features=[], target="classes")
    close(fd.relieff(X, y, n_neighbors=0.1, client=client, block_rows=60, **continuous).weights,
          fastfs.relieff(X, y, n_neighbors=k, **continuous).weights)


def test_relief_family_on_discrete_data_and_missing_values_equals_one_machine(client):
    # SNP-like features (0/1/2) are discrete and NaN is a missing value, as in fastfs.relieff:
    # such data are scored by one task with the general kernel, never read as continuous.
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(80, 12)).astype(np.float64)
    y = (X[:, 0] + X[:, 1]) % 2
    X[rng.random(X.shape) < 0.05] = np.nan
    close(fd.relieff(X, y, n_neighbors=5, client=client).weights,
          fastfs.relieff(X, y, n_neighbors=5).weights)
    for name in ("surf", "multisurf"):
        close(getattr(fd, name)(X, y, client=client).weights,
              getattr(fastfs, name)(X, y).weights)
    with pytest.raises(ValueError, match="n_neighbors"):
        fd.relieff(X, y, n_neighbors=1.5, client=client)


@pytest.mark.parametrize("name", ["surf", "surfstar", "multisurf", "multisurfstar"])
def test_radius_rules_equal_one_machine(client, neighbours, name):
    X, y = neighbours
    close(getattr(fastfs, name)(X, y).weights,
          getattr(fd, name)(X, y, client=client, block_rows=100).weights)


def test_margins_equal_one_machine_and_reference(client, neighbours):
    from reference import margins as ref_margins

    X, y = neighbours
    w = np.random.default_rng(3).random(X.shape[1])
    many = fd.margins(X, y, w, client=client, block_rows=50)
    # every sample's neighbours are those of one pass: the same bits
    np.testing.assert_array_equal(many, fastfs.margins(X, y, w))
    np.testing.assert_allclose(many, ref_margins(X, y, w), rtol=1e-10)
    for utility in ("linear", "sigmoid", "zero_one"):
        close(fastfs.margin_score(X, y, w, utility=utility),
              fd.margin_score(X, y, w, utility=utility, client=client, block_rows=50))


def test_neighbour_methods_refuse_bad_input_as_one_machine(neighbours):
    X, y = neighbours
    X = X.copy()
    X[7, 3] = np.inf
    for f in ("relief", "relieff", "margins"):
        with pytest.raises(ValueError) as one:
            getattr(fastfs, f)(X, y)
        with pytest.raises(ValueError) as many:
            getattr(fd, f)(da.from_array(X, chunks=100), y)
        assert str(many.value) == str(one.value)


def _same_result(one, many):
    for field in ("weights", "support", "selected", "history", "best_restart", "n_epochs",
                  "n_flips", "raw_weights"):
        if hasattr(one, field):
            np.testing.assert_array_equal(getattr(many, field), getattr(one, field),
                                          err_msg=field)
    assert many.score == one.score


def test_restarts_as_tasks_equal_one_machine(client, xor300):
    X, y = xor300
    _same_result(fastfs.simba(X, y, n_restarts=3, random_state=3),
                 fd.simba(X, y, n_restarts=3, random_state=3, client=client))
    one = fastfs.gflip(X, y, n_restarts=3, random_state=8)
    many = fd.gflip(X, y, n_restarts=3, random_state=8, client=client)
    _same_result(one, many)
    t = X[:, 0] * 2 + X[:, 1] + np.sin(3 * X[:, 2])
    _same_result(fastfs.rgs(X, t, n_restarts=3, random_state=4),
                 fd.rgs(X, t, n_restarts=3, random_state=4, client=client))


def test_restarts_as_tasks_report_restarts_as_one_machine(client, xor300):
    """The result vocabulary with restarts as tasks: restart_scores = the final score of every
    restart in order, best_restart = the first largest of them, history = the returned
    restart's own steps (the tasks once put the restart scores in history and kept only the
    winner's score in restart_scores)."""
    X, y = xor300
    t = X[:, 0] * 2 + X[:, 1] + np.sin(3 * X[:, 2])
    pairs = [(fastfs.simba(X, y, n_restarts=3, random_state=3),
              fd.simba(X, y, n_restarts=3, random_state=3, client=client)),
             (fastfs.gflip(X, y, n_restarts=3, random_state=8),
              fd.gflip(X, y, n_restarts=3, random_state=8, client=client)),
             (fastfs.rgs(X, t, n_restarts=3, random_state=4),
              fd.rgs(X, t, n_restarts=3, random_state=4, client=client))]
    for one, many in pairs:
        assert one.restart_scores.shape == (3,)
        np.testing.assert_array_equal(many.restart_scores, one.restart_scores)
        first_best = int(np.flatnonzero(one.restart_scores == one.restart_scores.max())[0])
        assert many.best_restart == one.best_restart == first_best
        np.testing.assert_array_equal(many.history, one.history)
        assert many.stopped_early is one.stopped_early is False


def test_restarts_draw_one_seed_from_a_generator(client, xor300):
    X, y = xor300
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    _same_result(fastfs.simba(X, y, n_restarts=2, random_state=g1),
                 fd.simba(X, y, n_restarts=2, random_state=g2, client=client))
    assert g1.integers(1 << 30) == g2.integers(1 << 30)   # advanced alike


def test_filter_selector_on_dask_arrays(client, classes):
    from fastfs.sklearn import FilterSelector

    X, y = classes
    one = FilterSelector("anova_f", mode="k_best", param=5).fit(X, y)
    est = fd.DaskFilterSelector("anova_f", mode="k_best", param=5, client=client)
    Xd = da.from_array(X, chunks=(150, 10))
    est.fit(Xd, y)
    np.testing.assert_array_equal(est.get_support(), one.get_support())
    close(one.scores_, est.scores_)
    out = est.transform(Xd)
    assert isinstance(out, da.Array)                 # lazy: the data are never read whole
    np.testing.assert_array_equal(out.compute(), one.transform(X))
    np.testing.assert_array_equal(est.fit(X, y).transform(X), one.transform(X))


def test_dask_selectors_equal_their_one_machine_selectors(client, xor300):
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline

    from fastfs.sklearn import (SBS, SFBS, SFFS, SFS, SURF, BeamSearch, Exhaustive, GFlip,
                                MultiSURF, MultiSURFstar, Relief, ReliefF, Simba, SURFstar)

    X, y = xor300
    pairs = [(Relief(3), fd.DaskRelief(3, client=client, block_rows=64)),
             (ReliefF(3), fd.DaskReliefF(3, client=client)),
             (Relief(3), fd.DaskRelief(3, client=client, mode="tiled", tile_rows=70)),
             (ReliefF(3), fd.DaskReliefF(3, client=client, mode="tiled", tile_rows=70)),
             (Simba(3, n_restarts=2, random_state=0),
              fd.DaskSimba(3, n_restarts=2, random_state=0, client=client)),
             (GFlip(random_state=1), fd.DaskGFlip(random_state=1, client=client)),
             (SURF(3), fd.DaskSURF(3, client=client)),
             (SURFstar(3), fd.DaskSURFstar(3, client=client, mode="tiled", tile_rows=70)),
             (MultiSURF(3), fd.DaskMultiSURF(3, client=client, mode="tiled", tile_rows=70)),
             (MultiSURFstar(3), fd.DaskMultiSURFstar(3, client=client)),
             (SFS(3), fd.DaskSFS(3, client=client)), (SBS(3), fd.DaskSBS(3, client=client)),
             (SFFS(3), fd.DaskSFFS(3, client=client)), (SFBS(3), fd.DaskSFBS(3, client=client)),
             (BeamSearch(3, width=2), fd.DaskBeamSearch(3, width=2, client=client)),
             (Exhaustive(2), fd.DaskExhaustive(2, client=client))]
    for one, many in pairs:
        one.fit(X, y)
        clone(many).fit(X, y)
        many.fit(da.from_array(X, chunks=100), y)
        np.testing.assert_array_equal(many.get_support(), one.get_support())
        assert many.get_params()["client"] is client
    # in a Pipeline under cross-validation (clone shares the client): the same scores
    pipe = make_pipeline(fd.DaskReliefF(3, client=client), KNeighborsClassifier(1))
    one = make_pipeline(ReliefF(3), KNeighborsClassifier(1))
    np.testing.assert_array_equal(cross_val_score(pipe, X, y, cv=3),
                                  cross_val_score(one, X, y, cv=3))


def test_dask_selectors_pass_dask_input_on_and_select_lazily(client, xor300, monkeypatch):
    """The Dask selectors computed a Dask X whole through scikit-learn's validation before the
    fastfs.dask function ran (so the tiled mode never saw a Dask array), and transform
    returned NumPy. Now fit hands X on as given and transform selects the columns lazily."""
    from fastfs import _dask_sklearn
    from fastfs.sklearn import ReliefF, MultiSURF

    X, y = xor300
    Xd = da.from_array(X, chunks=100)
    seen = []
    real = _dask_sklearn._fd.relieff

    def spy(X, y, **kw):
        seen.append(type(X))
        return real(X, y, **kw)

    monkeypatch.setattr(_dask_sklearn.DaskReliefF, "_function", staticmethod(spy))
    est = fd.DaskReliefF(3, client=client, mode="tiled", tile_rows=70).fit(Xd, y)
    assert seen == [da.Array]
    one = ReliefF(3).fit(X, y)
    np.testing.assert_array_equal(est.get_support(), one.get_support())
    assert est.n_features_in_ == X.shape[1] and not hasattr(est, "feature_names_in_")
    out = est.transform(Xd)
    assert isinstance(out, da.Array)
    np.testing.assert_array_equal(out.compute(), one.transform(X))
    with pytest.raises(ValueError, match="X: has 3 features"):
        est.transform(Xd[:, :3])
    # a selection parameter is refused before the method runs, and the fit is left whole
    with pytest.raises(ValueError, match="n_features_to_select"):
        fd.DaskMultiSURF(X.shape[1] + 1, client=client).fit(Xd, y)
    bad = est.set_params(n_features_to_select=0)
    with pytest.raises(ValueError, match="n_features_to_select"):
        bad.fit(Xd, y)
    np.testing.assert_array_equal(bad.get_support(), one.get_support())
    one = MultiSURF(3).fit(X, y)
    many = fd.DaskMultiSURF(3, client=client).fit(Xd, y)
    np.testing.assert_array_equal(many.get_support(), one.get_support())


def test_dask_selectors_keep_a_dask_dataframes_names(client, xor300):
    """DaskFilterSelector dropped a Dask DataFrame's column names (feature_names_in_ and
    get_feature_names_out unset), and the other selectors computed the frame whole; both now
    record the names as for a pandas frame, and transform selects the named columns lazily."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from fastfs.sklearn import FilterSelector, ReliefF

    X, y = xor300
    names = [f"f{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    ddf = dd.from_pandas(df, npartitions=3)
    for one, many in ((FilterSelector("anova_f", mode="k_best", param=4),
                       fd.DaskFilterSelector("anova_f", mode="k_best", param=4,
                                             client=client)),
                      (ReliefF(3), fd.DaskReliefF(3, client=client, mode="tiled",
                                                  tile_rows=70))):
        one.fit(df, y)
        many.fit(ddf, y)
        assert list(many.feature_names_in_) == names
        assert list(many.get_feature_names_out()) == list(one.get_feature_names_out())
        assert list(many.result_.feature_names) == names
        out = many.transform(ddf)
        assert hasattr(out, "dask") and list(out.columns) == list(one.get_feature_names_out())
        np.testing.assert_array_equal(out.compute().to_numpy(), one.transform(df))
        with pytest.raises(ValueError, match="feature names"):
            many.transform(ddf.rename(columns={"f0": "g0"}))


def test_dask_gflip_selector_takes_the_split_state(client, xor300):
    """DaskGFlip lacked split_state and n_blocks (the fastfs.dask.gflip parameters the README
    says the selectors carry); n_blocks without split_state was silently ignored."""
    from fastfs.sklearn import GFlip

    X, y = xor300
    one = GFlip(random_state=1).fit(X, y)
    many = fd.DaskGFlip(random_state=1, split_state=True, n_blocks=3, client=client).fit(X, y)
    np.testing.assert_array_equal(many.get_support(), one.get_support())
    assert many.get_params()["split_state"] is True and many.get_params()["n_blocks"] == 3
    with pytest.raises(ValueError, match="n_blocks"):
        fd.gflip(X, y, n_blocks=2, client=client)


def test_a_client_that_is_not_one_is_named(classes):
    from scipy import sparse

    X, y = classes
    S = sparse.csr_matrix(np.abs(X))
    for call in (lambda: fd.anova_f(X, y, client="foo"),
                 lambda: fd.relief(X, y, client="foo"),
                 lambda: fd.DaskSimba(2, client=42).fit(X, y),
                 # a SciPy sparse X goes to the one-machine filter, but client is still checked
                 lambda: fd.anova_f(S, y, client="foo"),
                 lambda: fd.DaskFilterSelector(client=3).fit(S, y)):
        with pytest.raises(TypeError, match="client: expected a dask.distributed.Client"):
            call()


def test_dask_dataframes_with_a_client_and_mode_auto(client, xor300):
    """With a client, mode='auto' sized X from its shape, and a Dask DataFrame's row count is
    a lazy scalar: float() of it raised a TypeError, so the Relief family, margins and their
    selectors failed on every Dask DataFrame."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from fastfs.sklearn import ReliefF

    X, y = xor300
    names = [f"f{j}" for j in range(X.shape[1])]
    ddf = dd.from_pandas(pd.DataFrame(X, columns=names), npartitions=3)
    for name in ("relief", "relieff", "surf", "multisurf"):
        got = getattr(fd, name)(ddf, y, client=client)
        close(got.weights, getattr(fastfs, name)(X, y).weights)
        assert list(got.feature_names) == names
    np.testing.assert_array_equal(fd.margins(ddf, y, client=client), fastfs.margins(X, y))
    est = fd.DaskReliefF(3, client=client).fit(ddf, y)
    np.testing.assert_array_equal(est.get_support(), ReliefF(3).fit(X, y).get_support())


def test_a_dask_dataframes_columns_are_checked_as_pandas_ones_are(client, xor300):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = xor300
    frame = pd.DataFrame(X[:, :3], columns=["a", "b", "c"]).assign(
        snp=np.where(X[:, 3] > 0, "AA", "Aa"))
    with pytest.raises(TypeError, match="X: column 'snp' has dtype"):
        fd.DaskFilterSelector(client=client).fit(dd.from_pandas(frame, npartitions=2), y)
    mixed = pd.DataFrame(X[:, :3], columns=["a", 1, "c"])
    with pytest.raises(TypeError, match="X: column names must all be strings"):
        fd.DaskFilterSelector(client=client).fit(dd.from_pandas(mixed, npartitions=2), y)
    # nullable numbers and bools beside them: float64, as for a pandas frame
    nullable = pd.DataFrame({"a": pd.array(np.round(X[:, 0] * 3), dtype="Int64"),
                             "b": X[:, 1], "c": X[:, 2] > 0})
    got = fd.anova_f(dd.from_pandas(nullable, npartitions=2), y, client=client)
    close(got.scores, fastfs.filters.anova_f(nullable, y).scores)
    assert list(got.feature_names) == ["a", "b", "c"]


def _killing_chunks(X, marker, always=False):
    """X as a Dask array whose chunk with the first row ends its worker process the first time
    it is computed (a lost worker mid-run), or every time."""

    def chunk(block, block_info=None):
        import os

        if block_info[0]["array-location"][0][0] == 0 and (always or not os.path.exists(marker)):
            open(marker, "w").close()
            os._exit(1)
        return block

    return da.from_array(X, chunks=(100, 23)).map_blocks(chunk, dtype=X.dtype)


def test_a_lost_worker_gives_a_retried_step_and_the_same_answer(doomed_client, classes, tmp_path):
    import os

    X, y = classes
    marker = str(tmp_path / "killed")
    res = fd.anova_f(_killing_chunks(X, marker), y, client=doomed_client)
    assert os.path.exists(marker)          # a worker did die
    close(fastfs.filters.anova_f(X, y).scores, res.scores)


def test_a_task_that_keeps_killing_workers_is_a_clear_error(doomed_client, classes, tmp_path):
    X, y = classes
    with pytest.raises(distributed.KilledWorker):
        fd.anova_f(_killing_chunks(X, str(tmp_path / "k"), always=True), y, client=doomed_client)


def _same_search(one, many):
    np.testing.assert_array_equal(many.selected, one.selected)
    np.testing.assert_array_equal(many.support, one.support)
    assert many.score == one.score
    np.testing.assert_array_equal(many.history, one.history)
    np.testing.assert_array_equal(many.best_scores, one.best_scores)
    assert many.subsets == one.subsets
    assert many.n_evaluations == one.n_evaluations


@pytest.mark.parametrize("k,criterion,kw", [
    ("best", "loo_knn_accuracy", {}),               # many ties: the first subset wins
    (3, "j3", {}),
    ("best", "margin", {"tol": 0.5}),
])
def test_exhaustive_as_tasks_equals_one_machine(client, xor300, k, criterion, kw):
    X, y = xor300
    X = X[:, :7] * 1e250 if criterion == "margin" else X[:, :7]   # rescaled J, back in units
    one = fastfs.exhaustive(X, y, k, criterion=criterion, **kw)
    many = fd.exhaustive(X, y, k, criterion=criterion, client=client, block_subsets=16, **kw)
    _same_search(one, many)


def test_exhaustive_with_a_callable_criterion_and_its_errors(client, random_problem):
    X, y = random_problem

    def spread(Xs, yy):
        return float(np.var(Xs.mean(axis=1)))

    _same_search(fastfs.exhaustive(X[:, :6], y, 2, criterion=spread),
                 fd.exhaustive(X[:, :6], y, 2, criterion=spread, client=client))
    for kw in ({"max_subsets": 10}, {"tol": -1.0}):
        with pytest.raises(ValueError) as one:
            fastfs.exhaustive(X, y, **kw)
        with pytest.raises(ValueError) as many:
            fd.exhaustive(X, y, client=client, **kw)
        assert str(many.value) == str(one.value)


def test_worker_arrays_reach_the_core_aligned():
    # Arrays a worker receives are views into message buffers that may start at any byte; a
    # float64 at an odd address is undefined behaviour in C++ (the sanitized CI run reported it
    # in the chunk statistics), so the tasks copy such views first.
    from fastfs._dask_core import _aligned, _block

    raw = np.arange(8 * 6 + 1, dtype=np.uint8)
    view = np.frombuffer(raw.data, dtype=np.float64, count=6, offset=1).reshape(2, 3)
    assert not view.flags.aligned
    for out in (_aligned(view), _block(view)):
        assert out.flags.aligned and out.flags.c_contiguous
        np.testing.assert_array_equal(out, view)
    ok = np.zeros((2, 3))
    assert _aligned(ok) is ok


# --------------------------------------------------------------------------------------------
# the m x m distance state split by row blocks across the workers


def _split_problem():
    """Three classes, ties between distances (rounded columns), a feature whose scale
    dominates the others (its removal is scored from scratch on one machine) and a float32
    copy of X is not used: G-flip and the searches read float64."""
    gen = np.random.default_rng(21)
    X = gen.standard_normal((157, 9))
    y = gen.integers(0, 3, 157)
    X[:, 0] += y
    X[:, 1] = np.round(X[:, 1] + 0.5 * y)
    X[:, 2] = np.round(X[:, 2])
    X[:, 5] *= 1e3
    return X, y


@pytest.mark.parametrize("kw", [
    {"random_state": 3, "n_restarts": 3},
    {"random_state": 4, "utility": "sigmoid", "beta": 3.0},
    {"random_state": 5, "utility": "zero_one", "initial": np.arange(9) % 2 == 0},
])
def test_gflip_on_a_split_state_equals_one_machine(client, kw):
    X, y = _split_problem()
    one = fastfs.gflip(X, y, **kw)
    many = fd.gflip(X, y, split_state=True, n_blocks=3, client=client, **kw)
    _same_result(one, many)
    np.testing.assert_array_equal(many.restart_scores, one.restart_scores)
    assert many.n_flips > 0


def test_gflip_leaves_out_constant_features_on_a_split_state_and_in_tasks(client):
    # the full start keeps constant features (no flip of one raises e strictly): every path
    # leaves them out of the answer, as one machine does
    X, y = _split_problem()
    X = np.column_stack([X, np.full(X.shape[0], 2.0)])
    kw = {"random_state": 3, "n_restarts": 2}
    one = fastfs.gflip(X, y, **kw)
    assert not one.support[-1]
    many = fd.gflip(X, y, split_state=True, n_blocks=3, client=client, **kw)
    _same_result(one, many)
    _same_result(one, fd.gflip(X, y, client=client, **kw))


def test_gflip_on_a_split_state_of_float32_data_equals_one_machine(client):
    X, y = _split_problem()
    X = X.astype(np.float32)
    kw = {"random_state": 6, "n_restarts": 2}
    _same_result(fastfs.gflip(X, y, **kw),
                 fd.gflip(X, y, split_state=True, n_blocks=2, client=client, **kw))


def test_gflip_on_a_split_state_takes_xor_apart_as_one_machine(client, xor300):
    X, y = xor300
    one = fastfs.gflip(X, y, n_restarts=2, random_state=8)
    _same_result(one, fd.gflip(X, y, n_restarts=2, random_state=8, split_state=True,
                               n_blocks=5, client=client))
    assert set(one.selected) >= {0, 1, 2}      # the xor features (independent check)


@pytest.mark.parametrize("name,k", [("sfs", 4), ("sbs", 3), ("sffs", "best")])
@pytest.mark.parametrize("criterion", ["margin", "loo_knn_accuracy",
                                       fastfs.criteria.LooKnnAccuracy(n_neighbors=3)])
def test_distance_searches_on_a_split_state_equal_one_machine(client, name, k, criterion):
    X, y = _split_problem()
    one = getattr(fastfs, name)(X, y, k, criterion=criterion)
    many = getattr(fd, name)(X, y, k, criterion=criterion, n_blocks=3, client=client)
    _same_search(one, many)


def test_split_state_accuracy_equals_scikit_learn(client, random_problem):
    # An independent reference: the leave-one-out 1-NN accuracy of the selected subset.
    from sklearn.model_selection import LeaveOneOut, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    X, y = random_problem
    res = fd.sfs(X, y, 2, criterion="loo_knn_accuracy", client=client)
    acc = cross_val_score(KNeighborsClassifier(1), X[:, res.selected], y,
                          cv=LeaveOneOut()).mean()
    assert res.score == pytest.approx(acc, rel=1e-12)


def test_split_state_skips_the_one_machine_memory_guard_without_touching_it(
        client, random_problem, monkeypatch):
    # The m x m state lives in blocks on the workers: a client limit below one machine's
    # state does not refuse the split search, and the limit itself is left as it was.
    X, y = random_problem
    expected = fastfs.sfs(X, y, 2, criterion="margin").selected
    monkeypatch.setattr(fastfs.config, "max_memory", 1)
    with pytest.raises(MemoryError):
        fastfs.sfs(X, y, 2, criterion="margin")
    res = fd.sfs(X, y, 2, criterion="margin", client=client)
    np.testing.assert_array_equal(res.selected, expected)
    assert fastfs.config.max_memory == 1


def test_split_state_refuses_other_criteria_and_bad_arguments(client, random_problem):
    X, y = random_problem
    with pytest.raises(ValueError, match="criterion"):
        fd.sfs(X, y, 2, criterion="j3", client=client)
    with pytest.raises(ValueError, match="n_blocks"):
        fd.sfs(X, y, 2, criterion="margin", n_blocks=0, client=client)
    with pytest.raises(TypeError, match="split_state"):
        fd.gflip(X, y, split_state="yes", client=client)
    with pytest.raises(ValueError, match="utility"):
        fd.gflip(X, y, split_state=True, utility="cubic", client=client)
    big = np.zeros((13000, 2))               # 1.26 GiB of state, workers of 1 GiB
    with pytest.raises(ValueError, match="memory limit"):
        fd.gflip(big, np.arange(13000) % 2, split_state=True, n_blocks=1, client=client)


def test_a_lost_worker_holding_blocks_of_the_state_is_rebuilt(doomed_client, xor300):
    # Kill the worker holding block 0 during the search: its blocks are rebuilt on the other
    # worker from the last rebuild plus the updates since, and the answer is unchanged.
    from fastfs import _dask_state

    X, y = xor300
    one = fastfs.sfs(X, y, 4, criterion="margin")
    state_calls = {"n": 0}
    original = _dask_state.SplitState.margin_scores

    def margin_scores(self, *args):
        state_calls["n"] += 1
        if state_calls["n"] == 3:
            addr = self.actors[0]._address
            try:   # the worker dies during the call
                self.client.run(lambda: __import__("os")._exit(1), workers=[addr])
            except OSError:
                pass
        return original(self, *args)

    _dask_state.SplitState.margin_scores = margin_scores
    try:
        import dask

        # (a call to the dead worker's actor fails once connecting to it times out)
        with dask.config.set({"distributed.comm.timeouts.connect": "3s"}):
            many = fd.sfs(X, y, 4, criterion="margin", n_blocks=2, client=doomed_client)
    finally:
        _dask_state.SplitState.margin_scores = original
    assert state_calls["n"] > 3
    _same_search(one, many)


@pytest.mark.parametrize("criterion", ["j3", "margin", "loo_knn_accuracy", "callable"])
def test_beam_on_the_cluster_equals_one_machine(client, random_problem, criterion):
    X, y = random_problem
    if criterion == "callable":
        def criterion(Xs, yy):   # a Python criterion: runs on the workers
            return float(abs(np.corrcoef(Xs.sum(axis=1), yy)[0, 1]))
    one = fastfs.beam(X, y, 3, width=3, criterion=criterion)
    many = fd.beam(X, y, 3, width=3, criterion=criterion, client=client, block_subsets=4)
    _same_search(one, many)


def test_beam_refuses_criteria_it_does_not_serve(client, random_problem):
    X, y = random_problem
    with pytest.raises(ValueError, match="criterion"):
        fd.beam(X, y, 2, criterion="least_squares", client=client)
    with pytest.raises(ValueError, match="block_subsets"):
        fd.beam(X, y, 2, criterion="j3", block_subsets=0, client=client)


# --------------------------------------------------------------------------------------------
# the tiled mode: X in row tiles, no worker holding it whole


def _tiled_data(kind):
    """Tiles of unequal size; ties between distances and duplicate rows (distance 0)."""
    gen = np.random.default_rng(23)
    if kind == "real":
        X = gen.standard_normal((211, 70))     # >= 64 features: one machine's float32 screens
        X[:, 1] = np.round(3 * X[:, 1])        # ties (still > 10 distinct values: continuous)
    else:
        X = gen.integers(0, 40, size=(211, 6)).astype(np.float64)   # exact distances, many ties
    y = gen.integers(0, 3, 211)
    X[:, 0] += y
    X[50], X[120], X[200] = X[10], X[10], X[11]   # duplicates, of the same and other classes
    return X, y, da.from_array(X, chunks=((50, 73, 30, 58), X.shape[1]))


@pytest.fixture(scope="module", params=["real", "grid"])
def tiled_problem(request):
    return _tiled_data(request.param)


@pytest.fixture(scope="module")
def tiled_real():
    return _tiled_data("real")


def test_tiled_neighbours_are_those_of_one_machine(client, tiled_problem):
    from reference import _nearest_hit_miss, _row_sq_distances

    from fastfs import _dask_tiles

    X, y, Xd = tiled_problem
    tiles = _dask_tiles.make_tiles(Xd, None, client, lambda a: a)
    codes = np.unique(y, return_inverse=True)[1].astype(np.int64)
    hit, _, miss, _ = _dask_tiles.nearest_hit_miss(tiles, codes, 0, None, 1, client)
    if X[:, 1:].astype(np.int64).astype(np.float64).tolist() == X[:, 1:].tolist():
        # integer data: exact distances, so the reference's choices are the true ones
        for s in range(X.shape[0]):
            assert (hit[s], miss[s]) == _nearest_hit_miss(_row_sq_distances(X, s), codes, s)
    same = [j for j in (50, 120) if y[j] == y[10]]
    if same:                                     # a duplicate of its class: distance 0
        assert hit[10] == same[0]


def test_tiled_relief_family_equals_one_machine(client, tiled_problem):
    X, y, Xd = tiled_problem
    kw = dict(client=client, mode="tiled")
    close(fastfs.relief(X, y).weights, fd.relief(Xd, y, **kw).weights)
    one = fastfs.relief(X, y, n_iter=300, random_state=5)
    close(one.weights, fd.relief(X, y, n_iter=300, random_state=5, tile_rows=64, **kw).weights)
    close(fastfs.relieff(X, y, n_neighbors=5).weights,
          fd.relieff(Xd, y, n_neighbors=5, **kw).weights)
    for name in ("surf", "surfstar", "multisurf", "multisurfstar"):
        close(getattr(fastfs, name)(X, y).weights, getattr(fd, name)(Xd, y, **kw).weights)
    w = np.linspace(0.5, 1.5, X.shape[1])
    np.testing.assert_array_equal(fd.margins(Xd, y, w, **kw), fastfs.margins(X, y, w))
    for utility in ("linear", "sigmoid", "zero_one"):
        assert fd.margin_score(Xd, y, w, utility=utility, **kw) == \
            fastfs.margin_score(X, y, w, utility=utility)


def test_tiled_mode_on_float32_and_extreme_scales_equals_one_machine(client, tiled_real,
                                                                      monkeypatch):
    from fastfs import _dask_tiles

    X, y, _ = tiled_real
    X32 = X.astype(np.float32)
    kw = dict(client=client, mode="tiled", tile_rows=70)
    close(fastfs.relief(X32, y).weights, fd.relief(X32, y, **kw).weights)
    np.testing.assert_array_equal(fd.margins(X32, y, **kw), fastfs.margins(X32, y))
    big = X * 2.0**100                          # rescaled exactly, scores in units of X
    close(fastfs.relief(big, y).weights, fd.relief(big, y, **kw).weights)
    close(fastfs.relieff(big, y).weights, fd.relieff(big, y, **kw).weights)
    np.testing.assert_array_equal(fd.margins(big, y, **kw), fastfs.margins(big, y))
    # SURF's threshold from column blocks of 3 columns (every row of each), as one machine's
    monkeypatch.setattr(_dask_tiles, "_COLUMN_BLOCK_BYTES", 3 * 8 * X.shape[0])
    for name in ("surf", "surfstar"):
        close(getattr(fastfs, name)(big, y).weights, getattr(fd, name)(big, y, **kw).weights)
    # columns of 2**660 beside columns of 2**-660: no one power of two brings both into the
    # screen's range, so each column takes its own (one for all had flushed the small ones
    # to zero and scored them 0), in the tiled mode as on one machine
    h = X.shape[1] // 2
    mixed = np.c_[np.ldexp(X[:, :h], 660), np.ldexp(X[:, h:], -660)]
    plain = fastfs.relieff(X, y).weights
    assert np.abs(plain[h:]).max() > 0
    close(fd.relieff(mixed, y, **kw).weights, plain)
    for name in ("surf", "multisurf"):
        close(getattr(fd, name)(mixed, y, **kw).weights, getattr(fastfs, name)(X, y).weights)


def test_tiled_mode_errors(client, tiled_real):
    X, y, _ = tiled_real
    kw = dict(client=client, mode="tiled", tile_rows=60)
    bad = X.copy()
    bad[130, 3] = np.nan                         # in the third tile
    for name in ("relief", "margins"):
        with pytest.raises(ValueError) as one:
            getattr(fastfs, name)(bad, y)
        with pytest.raises(ValueError) as many:
            getattr(fd, name)(bad, y, **kw)
        assert str(many.value) == str(one.value)
    # NaN is a missing value for the Relief family: the general kernel, not tiled
    with pytest.raises(ValueError, match="missing values.*mode='broadcast'"):
        fd.relieff(bad, y, **kw)
    snp = X.copy()
    snp[:, 2] = np.arange(211) % 3               # a discrete feature
    with pytest.raises(ValueError, match=r"features \[2\].*discrete"):
        fd.multisurf(snp, y, **kw)
    close(fastfs.relieff(snp, y, discrete_threshold=None).weights,
          fd.relieff(snp, y, discrete_threshold=None, **kw).weights)
    with pytest.raises(ValueError, match="discrete_features"):
        fd.relieff(X, y, discrete_features=[0], **kw)
    with pytest.raises(ValueError, match="continuous target"):
        fd.relieff(X, X[:, 0], **kw)
    with pytest.raises(ValueError, match="mode: unknown value 'tile'"):
        fd.relief(X, y, client=client, mode="tile")
    limit = fastfs.config.max_memory
    try:
        fastfs.config.max_memory = 1000
        with pytest.raises(MemoryError, match="smaller tile_rows"):
            fd.margins(X, y, **kw)
    finally:
        fastfs.config.max_memory = limit


def test_auto_mode_tiles_x_above_a_fraction_of_the_worker_memory(client, tiled_real,
                                                                   monkeypatch):
    from fastfs import _dask_tiles

    X, y, Xd = tiled_real
    made = []
    real = _dask_tiles.make_tiles
    monkeypatch.setattr(_dask_tiles, "make_tiles",
                        lambda *a, **k: made.append(1) or real(*a, **k))
    expected = fastfs.margins(X, y)
    np.testing.assert_array_equal(fd.margins(Xd, y, client=client), expected)
    assert not made                              # 200 kB against workers of 1 GiB
    monkeypatch.setattr(_dask_tiles, "AUTO_FRACTION", X.nbytes / 2**31)
    np.testing.assert_array_equal(fd.margins(Xd, y, client=client), expected)
    assert made


def test_auto_mode_sizes_its_default_tiles_to_the_worker_memory(client, tiled_real,
                                                                  monkeypatch):
    """mode='auto' chose the tiled mode under a small worker memory limit and then refused its
    own default tiles (one tile of every row: a task above the limit, 'pass a smaller
    tile_rows'). The default tiles now fit half of the limit, for a NumPy X and for a Dask
    array whose row chunks are larger than that."""
    from fastfs import _dask_tiles

    X, y, Xd = tiled_real
    limit = 2.0 * X.nbytes                       # X is half of it: tiled under 'auto'
    monkeypatch.setattr(_dask_tiles, "_worker_memory", lambda cl: limit)
    made = []
    real = _dask_tiles.make_tiles
    monkeypatch.setattr(_dask_tiles, "make_tiles",
                        lambda *a, **k: made.append(real(*a, **k)) or made[-1])
    one_chunk = da.from_array(X, chunks=(X.shape[0], X.shape[1]))
    for data in (X, one_chunk):
        made.clear()
        np.testing.assert_array_equal(fd.margins(data, y, client=client),
                                      fastfs.margins(X, y))
        close(fd.relieff(data, y, n_neighbors=5, client=client).weights,
              fastfs.relieff(X, y, n_neighbors=5).weights)
        assert made and all(t.count > 1 for t in made)
    # an explicit tile_rows is taken as given, and still refused above the limit
    with pytest.raises(MemoryError, match="smaller tile_rows"):
        fd.margins(X, y, client=client, tile_rows=X.shape[0])


def test_tiled_mode_survives_a_lost_worker(doomed_client, classes, tmp_path):
    import os

    X, y = classes
    marker = str(tmp_path / "killed")
    res = fd.margins(_killing_chunks(X, marker), y, client=doomed_client, mode="tiled")
    assert os.path.exists(marker)          # a worker did die
    np.testing.assert_array_equal(res, fastfs.margins(X, y))


def test_tiled_numpy_tiles_are_made_again_when_their_worker_is_lost(tiled_real, monkeypatch):
    """A NumPy X's tiles live on the workers; the worker holding the first is closed between
    the statistics pass and the neighbour chains: Dask makes the lost tiles again from the
    tasks the scheduler keeps, and the answer is that of one machine (a scattered tile could
    not be made again: every later step was cancelled). Its own cluster of in-process workers,
    so no nanny has to restart one (repeated nanny restarts can hang in Dask itself,
    dask/distributed#8534)."""
    from fastfs import _dask_tiles

    X, y, _ = tiled_real
    statistics = _dask_tiles.tile_statistics
    closed = []

    def then_close(tiles, cl, **kw):
        out = statistics(tiles, cl, **kw)
        holder = cl.who_has([tiles.refs[0]])[tiles.refs[0].key][0]
        worker = next(w for w in cluster.workers.values() if w.address == holder)
        cl.sync(worker.close)       # its tiles are gone with it
        closed.append(holder)
        return out

    monkeypatch.setattr(_dask_tiles, "tile_statistics", then_close)
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as cl:
        # ReliefF: the tiles and the held labels and column ranges feed two passes of chains
        res = fd.relieff(X, y, client=cl, mode="tiled", tile_rows=60)
        assert closed and holder_gone(cl, closed[0])
    close(fastfs.relieff(X, y).weights, res.weights)


def holder_gone(client, address):
    return address not in client.scheduler_info()["workers"]


def test_tiled_steps_receive_aligned_arrays():
    """A task's array arguments can be views at odd addresses into Dask's message buffers;
    every tiled step gets them aligned (the C++ reads int64 labels and states)."""
    from fastfs import _dask_tiles

    raw = np.zeros(8 * 10 + 1, np.uint8)
    odd = raw[1:].view(np.int64)              # misaligned int64 view
    assert not odd.flags.aligned
    seen = []

    def step(state, codes):
        seen.extend([state[0].flags.aligned, state[1].flags.aligned,
                     all(c.flags.aligned for c in codes)])
        return state

    state = (odd, np.arange(3.0))
    out = _dask_tiles._aligned_step(step, state, [odd, odd[:4]])
    assert seen == [True, True, True]
    np.testing.assert_array_equal(out[0], odd)


def test_distance_state_waits_for_a_worker_then_names_the_problem(monkeypatch):
    """The distance state's placement, on a cluster with no worker at the moment (a nanny
    restarting one, an adaptive cluster scaling up), waits a moment for one; with none after
    it, the error says so. (A whole call would first wait in Dask's scatter.)"""
    import time

    import fastfs._dask_state as state

    monkeypatch.setattr(state, "_WORKER_WAIT_SECONDS", 0.5)
    with distributed.LocalCluster(n_workers=0, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        split = state.SplitState.__new__(state.SplitState)
        split.client = c
        t0 = time.perf_counter()
        with pytest.raises(RuntimeError, match="no worker.*within 0.5 s"):
            split._workers()
        assert time.perf_counter() - t0 >= 0.5
        monkeypatch.setattr(state, "_WORKER_WAIT_SECONDS", 60.0)
        cluster.scale(1)
        assert len(split._workers()) == 1  # waits for the worker that is joining


@pytest.mark.parametrize("offset, chunks", [
    (1e10, (1, 1)),  # the reported case; 3000 one-value chunks take ~25 s, so only this one
    *[(offset, chunks) for offset in (1e6, 1e10, 1e14) for chunks in ((100, 2), (333, 3))],
])
def test_pearson_on_columns_with_a_large_offset(offset, chunks):
    """The merge of per-chunk moments took raw means: at an offset of 1e10 with 1-row chunks
    r was 1.6e-7 off one machine's (exact to 6e-16). The chunks now shift by X's first row."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1000, 3)) + offset
    y = x[:, 0] - offset + rng.normal(size=1000)
    want = fastfs.filters.pearson(x, y)
    got = fd.pearson(da.from_array(x, chunks=chunks), y)
    np.testing.assert_allclose(got.scores, want.scores, rtol=1e-12)
    np.testing.assert_allclose(got.pvalues, want.pvalues, rtol=1e-9)


def test_a_dask_dataframes_names_reach_the_tiled_results():
    """The tiled mode cut a Dask DataFrame into tiles of a bare array: relief, relieff and
    multisurf returned feature_names None where the broadcast mode and one machine keep
    the column names."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.normal(size=(60, 4)), columns=["g1", "g2", "g3", "g4"])
    y = (df["g1"] + 0.3 * rng.normal(size=60) > 0).astype(int).to_numpy()
    ddf = dd.from_pandas(df, npartitions=3)
    for name, kw in (("relief", {}), ("relieff", {"n_neighbors": 3}), ("multisurf", {})):
        got = getattr(fd, name)(ddf, y, mode="tiled", **kw)
        one = getattr(fastfs, name)(df, y, **kw)
        assert list(got.feature_names) == ["g1", "g2", "g3", "g4"], name
        np.testing.assert_allclose(got.weights, one.weights, rtol=1e-12, atol=1e-15)
    m = fd.margins(ddf, y, mode="tiled")
    np.testing.assert_allclose(m, fastfs.margins(df, y), rtol=1e-12, atol=1e-15)


def test_a_dask_dataframes_names_reach_the_broadcast_results():
    """Relief, margins, Simba, G-flip, RGS and the searches computed a Dask DataFrame into a
    bare array: feature_names None where a pandas frame keeps them."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(40, 4)), columns=list("abcd"))
    y = (df["a"] > 0).astype(int).to_numpy()
    ddf = dd.from_pandas(df, npartitions=3)
    for name, kw in (("relief", {}), ("relieff", {"n_neighbors": 3}), ("multisurf", {}),
                     ("simba", {"random_state": 0}), ("gflip", {"random_state": 0}),
                     ("sfs", {"n_features_to_select": 2})):
        got = getattr(fd, name)(ddf, y, mode="broadcast", **kw) if name.startswith(
            ("relief", "multi")) else getattr(fd, name)(ddf, y, **kw)
        assert list(got.feature_names) == list("abcd"), name


def test_sparse_input_is_refused_with_the_one_machine_function_named(classes):
    """relieff on a SciPy matrix advised densifying it ('pass a dense array'), though the
    one-machine function reads sparse X; a Dask array of sparse chunks crashed inside
    ('setting an array element with a sequence')."""
    from scipy import sparse

    X, y = classes
    S = sparse.csr_matrix(np.where(np.abs(X) > 1, X, 0.0))
    for call in (lambda: fd.relieff(S, y), lambda: fd.margins(S, y),
                 lambda: fd.relief(S, y, mode="tiled"), lambda: fd.simba(S, y)):
        with pytest.raises(TypeError, match="X: a SciPy sparse matrix.*one-machine function"):
            call()
    chunks = da.from_array(S, chunks=(100, 10), asarray=False)
    with pytest.raises(TypeError, match="X: a Dask array of SciPy sparse chunks"):
        fd.anova_f(chunks, y)
    # the filters still score a SciPy matrix with the one-machine filter
    close(fd.anova_f(S, y).scores, fastfs.filters.anova_f(S, y).scores)
