// Bindings for the regression area (SPEC 3): the soft kNN criterion, SKS, RGS, and the
// forward selection on the shared distance state that fastfs.sfs will take over.
#include "common.hpp"
#include "fastfs/neighbours/knn_query.hpp"
#include "fastfs/weights/rgs.hpp"

namespace fastfs::bindings {
namespace {

using InTarget = Eigen::Ref<const Vector<double>>;

template <class T>
void register_for(py::module_& m) {
    m.def(
        "knn_regression",
        [](InMatrix<T> X, InTarget y, InTarget w, Index n_neighbors, double beta, int n_threads) {
            require(y.size() == X.rows(), "X and y have different numbers of samples");
            require(w.size() == X.cols(), "weights: length differs from n_features");
            return run_released([&] {
                SignalPoll poll;
                return knn_regression(X, y.data(), w.data(), n_neighbors, beta, n_threads,
                                      std::ref(poll));
            });
        },
        py::arg("X").noconvert(), py::arg("y").noconvert(), py::arg("w").noconvert(),
        py::arg("n_neighbors"), py::arg("beta"), py::arg("n_threads"));

    m.def(
        "sks_scores",
        [](InMatrix<T> X, InTarget y, Index n_neighbors, double beta, int n_threads,
           py::object callback) {
            require(y.size() == X.rows(), "X and y have different numbers of samples");
            const ProgressHook cb = progress_hook(callback);
            PassStatus status;
            std::vector<double> scores = run_released([&] {
                SignalPoll poll;
                return single_feature_scores(X, y.data(), n_neighbors, beta, n_threads,
                                             std::ref(poll), cb, &status);
            });
            return pass_result(scores, status);
        },
        py::arg("X").noconvert(), py::arg("y").noconvert(), py::arg("n_neighbors"),
        py::arg("beta"), py::arg("n_threads"), py::arg("callback") = py::none());

    m.def(
        "rgs",
        [](InMatrix<T> X, InTarget y, Index n_neighbors, double beta, Index n_steps,
           std::vector<double> eta, int n_restarts, std::vector<Index> sample_order,
           std::uint64_t seed, int n_threads, py::object callback, bool score, int first_restart) {
            require(y.size() == X.rows(), "X and y have different numbers of samples");
            require(first_restart >= 0, "first_restart must be >= 0");
            RgsOptions opt;
            opt.first_restart = first_restart;
            opt.score = score;
            opt.n_neighbors = n_neighbors;
            opt.beta = beta;
            opt.n_steps = n_steps;
            opt.eta = std::move(eta);
            opt.n_restarts = n_restarts;
            opt.sample_order = std::move(sample_order);
            opt.seed = seed;
            opt.n_threads = n_threads;
            const ProgressHook cb = progress_hook(callback);
            return run_released([&] {
                Rgs<T> algo(X, y.data(), std::move(opt));
                SignalPoll poll;
                return algo.run(std::ref(poll), cb);
            });
        },
        py::arg("X").noconvert(), py::arg("y").noconvert(), py::arg("n_neighbors"),
        py::arg("beta"), py::arg("n_steps"), py::arg("eta"), py::arg("n_restarts"),
        py::arg("sample_order"), py::arg("seed"), py::arg("n_threads"), py::arg("callback"),
        py::arg("score") = true, py::arg("first_restart") = 0);

    // One sample's gradient, for the tests: (d e_x / d w, g_hat(x), neighbour indices).
    m.def(
        "rgs_gradient",
        [](InMatrix<T> X, InTarget y, InTarget w, Index sample, Index n_neighbors, double beta) {
            require(y.size() == X.rows(), "X and y have different numbers of samples");
            require(w.size() == X.cols(), "weights: length differs from n_features");
            require_index(sample >= 0 && sample < X.rows(), "sample: index out of range");
            require(beta > 0.0, "beta must be > 0");
            RgsOptions opt;
            opt.n_neighbors = n_neighbors;
            opt.beta = beta;
            opt.eta.assign(static_cast<std::size_t>(X.rows()), 0.0);
            Rgs<T> algo(X, y.data(), std::move(opt));
            typename Rgs<T>::Workspace ws;
            std::vector<double> wv(w.data(), w.data() + w.size()), grad;
            const double g = algo.gradient(sample, wv, grad, ws, 1);
            return py::make_tuple(to_numpy(grad), g, to_numpy(ws.idx));
        },
        py::arg("X").noconvert(), py::arg("y").noconvert(), py::arg("w").noconvert(),
        py::arg("sample"), py::arg("n_neighbors"), py::arg("beta"));

    // Test hook for the neighbour query RGS steps on: one scratch, prepared with row t of W2
    // (squared weights) before query t (sample samples[t], k neighbours, the row split over
    // n_threads when long enough), as RGS does step after step. Returns the k indices and
    // distances per query, the shortlist length of each, and how often a_j was refreshed
    // (features) or rebuilt.
    testing_module(m).def(
        "knn_query_trace",
        [](InMatrix<T> X, Eigen::Ref<const RowMatrix<double>> W2, const std::vector<Index>& samples,
           int k, int n_threads) {
            require(W2.cols() == X.cols(), "W2: one column per feature");
            require(W2.rows() == static_cast<Index>(samples.size()), "W2: one row per query");
            require((W2.array() >= 0.0).all(), "W2: squared weights must be finite and >= 0");
            require(W2.allFinite(), "W2: squared weights must be finite and >= 0");
            require(k >= 1 && k <= X.rows() - 1, "k must be in [1, n_samples - 1]");
            for (Index i : samples)
                require_index(i >= 0 && i < X.rows(), "samples: index out of range");
            const Index q = W2.rows();
            RowMatrix<Index> idx(q, k);
            RowMatrix<double> dist(q, k);
            std::vector<Index> kept(static_cast<std::size_t>(q));
            const KnnQuery<T> query(X);
            typename KnnQuery<T>::Scratch s;
            for (Index t = 0; t < q; ++t) {
                query.prepare(W2.row(t).data(), s);
                query.query(samples[static_cast<std::size_t>(t)], W2.row(t).data(), k, s,
                            n_threads, idx.row(t).data(), dist.row(t).data());
                kept[static_cast<std::size_t>(t)] = s.shortlist_ok ? s.kept : X.rows();
            }
            py::dict out;
            out["idx"] = py::array_t<Index>({q, static_cast<Index>(k)}, idx.data());
            out["dist"] = py::array_t<double>({q, static_cast<Index>(k)}, dist.data());
            out["kept"] = to_numpy(kept);
            out["refreshed"] = s.n_refreshed;
            out["rebuilt"] = s.n_rebuilt;
            return out;
        },
        py::arg("X").noconvert(), py::arg("W2").noconvert(), py::arg("samples"), py::arg("k"),
        py::arg("n_threads"));
}

}  // namespace

void register_regression(py::module_& m) {
    bind_result<KnnRegressionResult>(
        m, "KnnRegressionResult", "Soft kNN regression: estimates, score e, beta and k used.",
        {field("estimates", &KnnRegressionResult::estimates),
         field("score", &KnnRegressionResult::score), field("beta", &KnnRegressionResult::beta),
         field("k", &KnnRegressionResult::k)});
    bind_result<RgsResult>(
        m, "RgsResult",
        "RGS: weights (normalised), raw, score, restart_scores, best_restart, stopped_early, "
        "beta, k.",
        {field<RgsResult>("weights", &RgsResult::weights), field<RgsResult>("raw", &RgsResult::raw),
         field<RgsResult>("score", &RgsResult::score), field<RgsResult>("restart_scores", &RgsResult::restart_scores),
         field<RgsResult>("best_restart", &RgsResult::best_restart),
         field<RgsResult>("stopped_early", &RgsResult::stopped_early), field<RgsResult>("beta", &RgsResult::beta),
         field<RgsResult>("k", &RgsResult::k)});
    register_for<double>(m);
    register_for<float>(m);

    // e of subset S and of S + {f} for every f outside S, on the shared distance state (the
    // criterion core of forward selection). Scores of features inside S are NaN.
    m.def(
        "knn_subset_scores",
        [](InMatrix<double> X, InTarget y, std::vector<Index> subset, Index n_neighbors,
           double beta, int n_threads) {
            require(y.size() == X.rows(), "X and y have different numbers of samples");
            const Index rows = X.rows(), n = X.cols();
            for (Index f : subset) require_index(f >= 0 && f < n, "subset: feature index out of range");
            const int k = effective_k(n_neighbors, rows);
            return run_released([&] {
                Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> zeros = decltype(zeros)::Zero(rows);
                DistanceState<double> state(ClassLayout::from_codes(zeros), n_threads);
                RowMatrix<double> cols = X.transpose();
                std::vector<char> in(static_cast<std::size_t>(n), 0);
                for (Index f : subset) {
                    if (in[static_cast<std::size_t>(f)]) continue;
                    in[static_cast<std::size_t>(f)] = 1;
                    state.add_feature(cols.row(f).data(), 1.0);
                }
                state.mirror();
                std::pair<double, std::vector<double>> out;
                out.first = knn_subset_score(state, y.data(), k, beta, nullptr, 0.0, n_threads);
                out.second.assign(static_cast<std::size_t>(n), std::numeric_limits<double>::quiet_NaN());
                for (Index f = 0; f < n; ++f)
                    if (!in[static_cast<std::size_t>(f)])
                        out.second[static_cast<std::size_t>(f)] = knn_subset_score(
                            state, y.data(), k, beta, cols.row(f).data(), 1.0, n_threads);
                return out;
            });
        },
        py::arg("X").noconvert(), py::arg("y").noconvert(), py::arg("subset"),
        py::arg("n_neighbors"), py::arg("beta"), py::arg("n_threads"));
}

}  // namespace fastfs::bindings
