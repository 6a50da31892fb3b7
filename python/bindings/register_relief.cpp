// Bindings for the neighbour-based weighting area: Simba, Relief, ReliefF (SPEC 2.5-2.7) and
// the radius rules SURF, SURF*, MultiSURF, MultiSURF* (SPEC 11).
#include "common.hpp"
#include "fastfs/weights/relief.hpp"
#include "fastfs/weights/relief_mixed.hpp"
#include "fastfs/weights/relief_radius.hpp"
#include "fastfs/weights/relief_sparse.hpp"
#include "fastfs/weights/simba.hpp"
#include "fastfs/weights/stir_null.hpp"

namespace fastfs::bindings {
namespace {

// relief_stir's result: the weights, the moments of the hit and miss differences, and the
// pair graph (per sample, the hit and miss pairs it belongs to; the mutual ordered pairs).
struct StirOut {
    std::vector<double> weights;
    bool stopped_early = false;
    std::vector<double> hit_sum, hit_sq, miss_sum, miss_sq;
    double n_hit = 0.0, n_miss = 0.0;
    std::vector<std::int64_t> hit_pairs, miss_pairs;
    std::int64_t mutual_hit = 0, mutual_miss = 0;
};

RadiusRule parse_rule(const std::string& rule) {
    if (rule == "surf") return RadiusRule::surf;
    if (rule == "surf_star") return RadiusRule::surf_star;
    if (rule == "multisurf") return RadiusRule::multisurf;
    if (rule == "multisurf_star") return RadiusRule::multisurf_star;
    throw std::invalid_argument("rule: unknown '" + rule + "'; valid options are "
                                "'surf', 'surf_star', 'multisurf', 'multisurf_star'");
}

MixedRule parse_mixed_rule(const std::string& rule) {
    if (rule == "relieff") return MixedRule::relieff;
    if (rule == "surf") return MixedRule::surf;
    if (rule == "surf_star") return MixedRule::surf_star;
    if (rule == "multisurf") return MixedRule::multisurf;
    if (rule == "multisurf_star") return MixedRule::multisurf_star;
    throw std::invalid_argument("rule: unknown '" + rule + "'; valid options are 'relieff', "
                                "'surf', 'surf_star', 'multisurf', 'multisurf_star'");
}

MixedOptions mixed_options(const std::string& rule, Index k, std::vector<std::uint8_t> discrete,
                           std::vector<std::int64_t> codes, std::vector<double> y, double radius,
                           std::vector<double> distance_weights) {
    MixedOptions o;
    o.rule = parse_mixed_rule(rule);
    o.k = k;
    o.discrete = std::move(discrete);
    o.codes = std::move(codes);
    o.y = std::move(y);
    o.radius = radius;
    o.distance_weights = std::move(distance_weights);
    return o;
}

template <class T>
void register_for(py::module_& m) {
    // Discrete features, missing values and continuous targets (skrebate's definitions): codes
    // (classes) or y (a continuous target, hits within `radius`), one of them empty.
    m.def(
        "relief_mixed",
        [](InMatrix<T> X, const std::string& rule, Index k, std::vector<std::uint8_t> discrete,
           std::vector<std::int64_t> codes, std::vector<double> y, double radius, int n_threads,
           py::object callback, std::vector<double> distance_weights, Index q0, Index q1) {
            const MixedOptions o = mixed_options(rule, k, std::move(discrete), std::move(codes),
                                                 std::move(y), radius, std::move(distance_weights));
            const ProgressHook cb = progress_hook(callback);
            PassStatus status;
            const bool sums = q1 >= 0;
            std::vector<double> w = run_released([&] {
                SignalPoll poll;
                if (sums) return relief_mixed_sums(X, o, q0, q1, n_threads, std::ref(poll));
                return relief_mixed(X, o, n_threads, std::ref(poll), cb, &status);
            });
            if (sums) return py::object(to_numpy(w));
            return py::object(pass_result(w, status));
        },
        py::arg("X").noconvert(), py::arg("rule"), py::arg("k"), py::arg("discrete"),
        py::arg("codes"), py::arg("y"), py::arg("radius"), py::arg("n_threads"),
        py::arg("callback") = py::none(), py::arg("distance_weights") = std::vector<double>{},
        py::arg("q0") = 0, py::arg("q1") = -1);

    m.def(
        "distinct_upto",
        [](InMatrix<T> X, Index cap) {
            return to_numpy(run_released([&] { return distinct_upto(X, cap); }));
        },
        py::arg("X").noconvert(), py::arg("cap"));

    m.def(
        "simba",
        [](InMatrix<T> X, InCodes codes, const std::string& utility, double beta, Index n_iter,
           int n_restarts, std::vector<Index> sample_order, std::uint64_t seed, int n_threads,
           py::object callback, double step_scale, int first_restart) {
            require(first_restart >= 0, "first_restart must be >= 0");
            SimbaOptions opt;
            opt.first_restart = first_restart;
            opt.step_scale = step_scale;
            opt.utility = UtilitySpec{parse_utility(utility), beta};
            opt.n_steps = n_iter;
            opt.n_restarts = n_restarts;
            opt.sample_order = std::move(sample_order);
            opt.seed = seed;
            opt.n_threads = n_threads;
            const ProgressHook cb = progress_hook(callback);
            return run_released([&] {
                Simba<T> algo(X, codes, std::move(opt));
                SignalPoll poll;
                return algo.run(std::ref(poll), cb);
            });
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("utility"),
        py::arg("beta"), py::arg("n_iter"), py::arg("n_restarts"), py::arg("sample_order"),
        py::arg("seed"), py::arg("n_threads"), py::arg("callback"), py::arg("step_scale") = 1.0,
        py::arg("first_restart") = 0);

    m.def(
        "relief",
        [](InMatrix<T> X, InCodes codes, Index n_iter, std::uint64_t seed, int n_threads,
           py::object callback) {
            const ProgressHook cb = progress_hook(callback);
            PassStatus status;
            std::vector<double> w = run_released([&] {
                std::vector<Index> visit;
                if (n_iter <= 0) {
                    visit.resize(static_cast<std::size_t>(X.rows()));
                    std::iota(visit.begin(), visit.end(), Index{0});
                } else {
                    Rng rng(seed, 0);
                    visit = visiting_order(rng, static_cast<Index>(X.rows()), n_iter);
                }
                SignalPoll poll;
                return relief(X, codes, visit, n_threads, std::ref(poll), cb, &status);
            });
            return pass_result(w, status);
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("n_iter"),
        py::arg("seed"), py::arg("n_threads"), py::arg("callback") = py::none());

    m.def(
        "relieff",
        [](InMatrix<T> X, InCodes codes, Index n_neighbors, int n_threads, py::object callback,
           const std::vector<double>& distance_weights) {
            const ProgressHook cb = progress_hook(callback);
            PassStatus status;
            std::vector<double> w = run_released([&] {
                SignalPoll poll;
                return relieff(X, codes, n_neighbors, n_threads, std::ref(poll), cb, &status,
                               distance_weights);
            });
            return pass_result(w, status);
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("n_neighbors"),
        py::arg("n_threads"), py::arg("callback") = py::none(),
        py::arg("distance_weights") = std::vector<double>{});

    // STIR: ReliefF ("relieff", k neighbours) or a near-set radius rule ("surf", "multisurf"),
    // its weights and the moments of the differences of its hit and miss pairs, in one pass.
    m.def(
        "relief_stir",
        [](InMatrix<T> X, InCodes codes, const std::string& method, Index n_neighbors,
           int n_threads, py::object callback) {
            const bool knn = method == "relieff";
            const RadiusRule r = knn ? RadiusRule::multisurf : parse_rule(method);
            const ProgressHook cb = progress_hook(callback);
            PassStatus status;
            PairMoments mom;
            std::vector<double> w = run_released([&] {
                SignalPoll poll;
                return knn ? relieff(X, codes, n_neighbors, n_threads, std::ref(poll), cb,
                                     &status, {}, &mom)
                           : relief_radius(X, codes, r, n_threads, std::ref(poll), cb, &status,
                                           {}, &mom);
            });
            return StirOut{std::move(w),           status.stopped_early,
                           std::move(mom.hit_sum), std::move(mom.hit_sq),
                           std::move(mom.miss_sum), std::move(mom.miss_sq),
                           mom.n_hit,              mom.n_miss,
                           std::move(mom.hit_pairs), std::move(mom.miss_pairs),
                           mom.mutual_hit,         mom.mutual_miss};
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("method"),
        py::arg("n_neighbors"), py::arg("n_threads"), py::arg("callback") = py::none());

    // STIR's null variance components per feature (v1, s2), from X (min-max scaled here) and
    // the sample weights a of the pair graph.
    m.def(
        "stir_null_components",
        [](InMatrix<T> X, const std::vector<double>& a, int n_threads) {
            std::vector<double> v1, s2;
            run_released([&] {
                stir_null_components<T>(X, a, n_threads, v1, s2);
                return 0;
            });
            return py::make_tuple(to_numpy(v1), to_numpy(s2));
        },
        py::arg("X").noconvert(), py::arg("a"), py::arg("n_threads"));

    // fastfs.dask: the unnormalised sums of a block of query samples (every sample a possible
    // neighbour), added over blocks in block order by the caller.
    m.def(
        "relief_visit",
        [](InMatrix<T> X, InCodes codes, std::vector<Index> visit, int n_threads) {
            for (Index i : visit)
                require_index(i >= 0 && i < X.rows(), "visit: sample index out of range");
            return to_numpy(run_released([&] {
                SignalPoll poll;
                return relief(X, codes, visit, n_threads, std::ref(poll));
            }));
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("visit"),
        py::arg("n_threads"));

    m.def(
        "relieff_sums",
        [](InMatrix<T> X, InCodes codes, Index n_neighbors, Index q0, Index q1, int n_threads) {
            return to_numpy(run_released([&] {
                SignalPoll poll;
                return relieff_sums(X, codes, n_neighbors, q0, q1, n_threads, std::ref(poll));
            }));
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("n_neighbors"),
        py::arg("q0"), py::arg("q1"), py::arg("n_threads"));

    m.def(
        "relief_radius_sums",
        [](InMatrix<T> X, InCodes codes, const std::string& rule, Index q0, Index q1,
           int n_threads) {
            const RadiusRule r = parse_rule(rule);
            return to_numpy(run_released([&] {
                SignalPoll poll;
                return relief_radius_sums(X, codes, r, q0, q1, n_threads, std::ref(poll));
            }));
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("rule"), py::arg("q0"),
        py::arg("q1"), py::arg("n_threads"));

    m.def(
        "relief_radius",
        [](InMatrix<T> X, InCodes codes, const std::string& rule, int n_threads,
           py::object callback, const std::vector<double>& distance_weights) {
            const RadiusRule r = parse_rule(rule);
            const ProgressHook cb = progress_hook(callback);
            PassStatus status;
            std::vector<double> w = run_released([&] {
                SignalPoll poll;
                return relief_radius(X, codes, r, n_threads, std::ref(poll), cb, &status,
                                     distance_weights);
            });
            return pass_result(w, status);
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("rule"),
        py::arg("n_threads"), py::arg("callback") = py::none(),
        py::arg("distance_weights") = std::vector<double>{});
}

// Sparse X (CSR arrays: int64 indptr and indices, float64 data), never densified.
using InIndex = py::array_t<std::int64_t, py::array::c_style>;
using InValues = py::array_t<double, py::array::c_style>;

SparseRef sparse_ref(Index rows, Index cols, const InIndex& indptr, const InIndex& indices,
                     const InValues& data) {
    require(rows >= 0 && cols >= 0, "X: negative shape");
    require(indptr.size() == rows + 1, "X: sparse index pointer has the wrong length");
    SparseRef A;
    A.rows = rows;
    A.cols = cols;
    A.ptr = indptr.data();
    require(indices.size() >= static_cast<py::ssize_t>(A.ptr[rows]) &&
                data.size() >= static_cast<py::ssize_t>(A.ptr[rows]),
            "X: sparse arrays are shorter than the index pointer says");
    A.idx = indices.data();
    A.val = data.data();
    A.validate();
    return A;
}

void register_sparse(py::module_& m) {
    m.def(
        "relief_sparse",
        [](Index rows, Index cols, InIndex indptr, InIndex indices, InValues data,
           const std::string& rule, Index k, std::vector<std::uint8_t> discrete,
           std::vector<std::int64_t> codes, std::vector<double> y, double radius,
           bool zero_constant, int n_threads, py::object callback,
           std::vector<double> distance_weights) {
            const SparseRef A = sparse_ref(rows, cols, indptr, indices, data);
            SparseReliefOptions o;
            static_cast<MixedOptions&>(o) =
                mixed_options(rule, k, std::move(discrete), std::move(codes), std::move(y),
                              radius, std::move(distance_weights));
            o.zero_constant = zero_constant;
            const ProgressHook cb = progress_hook(callback);
            PassStatus status;
            std::vector<double> w = run_released([&] {
                SignalPoll poll;
                return relief_sparse(A, o, n_threads, std::ref(poll), cb, &status);
            });
            return pass_result(w, status);
        },
        py::arg("rows"), py::arg("cols"), py::arg("indptr").noconvert(),
        py::arg("indices").noconvert(), py::arg("data").noconvert(), py::arg("rule"),
        py::arg("k"), py::arg("discrete"), py::arg("codes"), py::arg("y"), py::arg("radius"),
        py::arg("zero_constant"), py::arg("n_threads"), py::arg("callback") = py::none(),
        py::arg("distance_weights") = std::vector<double>{});

    m.def(
        "relief_sparse_kira",
        [](Index rows, Index cols, InIndex indptr, InIndex indices, InValues data,
           std::vector<std::int64_t> codes, std::vector<Index> visit, int n_threads,
           py::object callback) {
            const SparseRef A = sparse_ref(rows, cols, indptr, indices, data);
            const ProgressHook cb = progress_hook(callback);
            PassStatus status;
            std::vector<double> w = run_released([&] {
                SignalPoll poll;
                return relief_sparse_kira(A, codes, visit, n_threads, std::ref(poll), cb, &status);
            });
            return pass_result(w, status);
        },
        py::arg("rows"), py::arg("cols"), py::arg("indptr").noconvert(),
        py::arg("indices").noconvert(), py::arg("data").noconvert(), py::arg("codes"),
        py::arg("visit"), py::arg("n_threads"), py::arg("callback") = py::none());
}

}  // namespace

void register_relief(py::module_& m) {
    bind_result<SimbaResult>(
        m, "SimbaResult",
        "Simba: weights (normalised), score, restart_scores, best_restart, stopped_early.",
        {field("weights", &SimbaResult::weights), field("score", &SimbaResult::score),
         field("restart_scores", &SimbaResult::restart_scores),
         field("best_restart", &SimbaResult::best_restart),
         field("stopped_early", &SimbaResult::stopped_early)});
    bind_result<StirOut>(
        m, "StirResult",
        "STIR pass: weights, stopped_early, hit/miss sums and sums of squares, n_hit, n_miss, "
        "per sample the hit and miss pairs it belongs to (hit_pairs, miss_pairs: as the query "
        "or as the neighbour), and the ordered pairs whose reverse is a pair too (mutual_hit, "
        "mutual_miss).",
        {field("weights", &StirOut::weights), field("stopped_early", &StirOut::stopped_early),
         field("hit_sum", &StirOut::hit_sum), field("hit_sq", &StirOut::hit_sq),
         field("miss_sum", &StirOut::miss_sum), field("miss_sq", &StirOut::miss_sq),
         field("n_hit", &StirOut::n_hit), field("n_miss", &StirOut::n_miss),
         field("hit_pairs", &StirOut::hit_pairs), field("miss_pairs", &StirOut::miss_pairs),
         field("mutual_hit", &StirOut::mutual_hit),
         field("mutual_miss", &StirOut::mutual_miss)});
    register_sparse(m);
    // Relief's visiting order for n_iter steps (what fastfs.relief draws from the seed).
    m.def(
        "relief_order",
        [](Index n_samples, Index n_iter, std::uint64_t seed) {
            Rng rng(seed, 0);
            return to_numpy(visiting_order(rng, n_samples, n_iter));
        },
        py::arg("n_samples"), py::arg("n_iter"), py::arg("seed"));
    register_for<double>(m);
    register_for<float>(m);
}

}  // namespace fastfs::bindings
