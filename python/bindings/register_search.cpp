// Bindings for the search area (SPEC 5.1-5.2): builds the criterion (a built-in one in C++, or
// a Python callable behind the same interface) and runs one strategy on the shared driver.
#include <cmath>
#include <memory>
#include <optional>

#include "common.hpp"
#include "fastfs/criteria/distance.hpp"
#include "fastfs/criteria/learner.hpp"
#include "fastfs/criteria/least_squares.hpp"
#include "fastfs/criteria/scatter.hpp"
#include "fastfs/search/annealing.hpp"
#include "fastfs/search/beam.hpp"
#include "fastfs/search/best_first.hpp"
#include "fastfs/search/bidirectional.hpp"
#include "fastfs/search/branch_and_bound.hpp"
#include "fastfs/search/exhaustive.hpp"
#include "fastfs/search/gflip.hpp"
#include "fastfs/search/floating.hpp"
#include "fastfs/search/ranking.hpp"
#include "fastfs/search/sequential.hpp"

namespace fastfs::bindings {
namespace {

using InVector = Eigen::Ref<const Vector<double>>;

// A Python callable fn(indices) -> float as a criterion. Called with the GIL held, one
// subset at a time (never from an OpenMP team).
class PyCriterion : public SubsetCriterion {
public:
    PyCriterion(py::object fn, Index n) : fn_(std::move(fn)), n_(n) {}
    Index n_features() const override { return n_; }
    bool thread_safe() const override { return false; }
    double evaluate(const Subset& S) override {
        Subset sorted = S;
        std::sort(sorted.begin(), sorted.end());
        py::gil_scoped_acquire gil;
        return fn_(to_numpy(sorted)).cast<double>();
    }

private:
    py::object fn_;
    Index n_;
};

// A Python object with the Criterion interface (reset, add, remove, current,
// score_additions, score_removals, evaluate): fastfs.dask's criterion over a distance state
// split across workers. Called with the GIL held, from the driver's thread only.
class PyStateCriterion : public Criterion {
public:
    PyStateCriterion(py::object obj, Index n) : obj_(std::move(obj)), n_(n) {}
    Index n_features() const override { return n_; }
    bool thread_safe() const override { return false; }
    void reset(const Subset& S) override {
        py::gil_scoped_acquire gil;
        obj_.attr("reset")(to_numpy(S));
    }
    void add(Index x) override {
        py::gil_scoped_acquire gil;
        obj_.attr("add")(x);
    }
    void remove(Index x) override {
        py::gil_scoped_acquire gil;
        obj_.attr("remove")(x);
    }
    double current() override {
        py::gil_scoped_acquire gil;
        return obj_.attr("current")().cast<double>();
    }
    void score_additions(const Subset& cands, double* out) override {
        scores("score_additions", cands, out);
    }
    void score_removals(const Subset& cands, double* out) override {
        scores("score_removals", cands, out);
    }
    double evaluate(const Subset& S) override {
        py::gil_scoped_acquire gil;
        return obj_.attr("evaluate")(to_numpy(S)).cast<double>();
    }

private:
    // Every Python object is made, used and released with the GIL held.
    void scores(const char* name, const Subset& cands, double* out) {
        py::gil_scoped_acquire gil;
        const auto v = obj_.attr(name)(to_numpy(cands)).cast<std::vector<double>>();
        require(v.size() == cands.size(), std::string(name) + ": one score per candidate");
        std::copy(v.begin(), v.end(), out);
    }

    py::object obj_;
    Index n_;
};

std::unique_ptr<Criterion> make_criterion(const std::string& kind, InMatrix<double> X,
                                          std::optional<InCodes> codes,
                                          std::optional<InVector> y, const py::dict& params,
                                          py::object fn, int n_threads) {
    std::unique_ptr<Criterion> c;
    auto need_codes = [&] {
        require(codes.has_value(), "criterion '" + kind + "' needs class labels");
        require(codes->size() == X.rows(), "X and y have different numbers of samples");
        return *codes;
    };
    if (kind == "callable") {
        c = std::make_unique<PyCriterion>(std::move(fn), X.cols());
    } else if (kind == "remote") {
        c = std::make_unique<PyStateCriterion>(std::move(fn), X.cols());
    } else if (kind == "margin" || kind == "loo_knn_accuracy") {
        UtilitySpec u;
        int k = 1;
        if (kind == "margin")
            u = UtilitySpec{parse_utility(params["utility"].cast<std::string>()),
                            params["beta"].cast<double>()};
        else
            k = params["n_neighbors"].cast<int>();
        c = std::make_unique<DistanceCriterion>(
            X, need_codes(), kind == "margin" ? DistanceKind::margin : DistanceKind::knn_accuracy,
            u, k, n_threads);
    } else if (kind == "loo_knn_mse") {
        require(y.has_value() && y->size() == X.rows(), "loo_knn_mse needs real targets y");
        const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> zeros =
            Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>::Zero(X.rows());
        c = std::make_unique<DistanceCriterion>(X, zeros, DistanceKind::knn_mse, UtilitySpec{},
                                                params["n_neighbors"].cast<int>(), n_threads,
                                                y->data(), params["beta"].cast<double>());
    } else if (kind == "train_error" || kind == "holdout_error" || kind == "aic" ||
               kind == "bic") {
        const LearnerScore s = kind == "train_error"     ? LearnerScore::train_error
                               : kind == "holdout_error" ? LearnerScore::holdout_error
                               : kind == "aic"           ? LearnerScore::aic
                                                         : LearnerScore::bic;
        const auto fit_rows = params["fit_rows"].cast<std::vector<Index>>();
        const auto score_rows = params["score_rows"].cast<std::vector<Index>>();
        const double C = params["C"].cast<double>(), alpha = params["alpha"].cast<double>();
        if (codes.has_value()) {
            const Eigen::VectorXi cc = need_codes().cast<int>();
            c = std::make_unique<LearnerCriterion>(X, fit_rows, score_rows, &cc, nullptr,
                                                   params["n_classes"].cast<int>(), s, C, alpha,
                                                   n_threads);
        } else {
            require(y.has_value() && y->size() == X.rows(), kind + " needs labels or targets");
            const Eigen::VectorXd t = *y;
            c = std::make_unique<LearnerCriterion>(X, fit_rows, score_rows, nullptr, &t, 0, s,
                                                   C, alpha, n_threads);
        }
    } else if (kind == "least_squares") {
        require(y.has_value() && y->size() == X.rows(), "least_squares needs real targets y");
        c = std::make_unique<LeastSquaresCriterion>(X, *y, params["fit_intercept"].cast<bool>(),
                                                    n_threads);
    } else {
        ScatterKind s;
        if (kind == "j1") s = ScatterKind::j1;
        else if (kind == "j2") s = ScatterKind::j2;
        else if (kind == "j3") s = ScatterKind::j3;
        else if (kind == "divergence") s = ScatterKind::divergence;
        else if (kind == "bhattacharyya") s = ScatterKind::bhattacharyya;
        else throw std::invalid_argument("criterion: unknown kind '" + kind + "'");
        const double ridge = params.contains("ridge") ? params["ridge"].cast<double>() : 0.0;
        c = std::make_unique<ScatterCriterion>(X, need_codes(), s, ridge);
    }
    c->set_threads(n_threads);
    return c;
}

py::dict outcome_to_dict(const SearchOutcome& r) {
    py::dict out;
    out["selected"] = to_numpy(r.selected);
    out["score"] = r.score;
    std::vector<double> scores;
    py::list subsets;
    for (const auto& h : r.history) {
        scores.push_back(h.score);
        subsets.append(py::tuple(py::cast(h.subset)));
    }
    out["history"] = to_numpy(scores);
    out["subsets"] = py::tuple(subsets);
    out["best_scores"] = to_numpy(r.best_scores);
    out["n_evaluations"] = r.n_evaluations;
    out["stopped_early"] = r.stopped_early;
    return out;
}

}  // namespace

void register_search(py::module_& m) {
    // The bytes a C++ state will hold, as the state itself reports them: the memory guard of
    // SPEC 1.3 (fastfs.config.max_memory) compares this figure instead of its own estimate.
    m.def(
        "memory_need",
        [](const std::string& state, Index n_samples, Index n_features, Index n_classes,
           int n_neighbors, int n_threads) -> double {
            if (state == "gflip") return GFlip<double>::bytes_needed(n_samples, n_features, n_threads);
            if (state == "margin")
                return DistanceCriterion::bytes_needed(n_samples, n_features, DistanceKind::margin,
                                                       n_neighbors, n_threads);
            if (state == "loo_knn_accuracy")
                return DistanceCriterion::bytes_needed(n_samples, n_features,
                                                       DistanceKind::knn_accuracy, n_neighbors,
                                                       n_threads);
            if (state == "loo_knn_mse")
                return DistanceCriterion::bytes_needed(n_samples, n_features, DistanceKind::knn_mse,
                                                       n_neighbors, n_threads);
            if (state == "scatter") return ScatterCriterion::bytes_needed(n_features, n_classes);
            throw std::invalid_argument("memory_need: unknown state '" + state + "'");
        },
        py::arg("state"), py::arg("n_samples"), py::arg("n_features"), py::arg("n_classes"),
        py::arg("n_neighbors"), py::arg("n_threads"));

    m.def(
        "search",
        [](const std::string& strategy, InMatrix<double> X, std::optional<InCodes> codes,
           std::optional<InVector> y, const std::string& criterion, py::dict params,
           py::object fn, Index k, bool best, bool auto_stop, double tol, Index l, Index r, Index width, double max_subsets,
           bool assume_monotone, int n_threads, py::object callback) {
            auto J = make_criterion(criterion, X, codes, y, params, fn, n_threads);
            if (strategy == "branch_and_bound")
                require(criterion != "aic" && criterion != "bic",
                        "criterion: AIC and BIC are not monotone (a feature can lower them), "
                        "so branch_and_bound cannot bound with them; use exhaustive or another "
                        "search");
            if (strategy == "branch_and_bound")
                require(J->monotone() || assume_monotone,
                        "criterion: branch_and_bound is exact only for criteria that never rise "
                        "when a feature is removed (j2, j3, divergence, bhattacharyya, "
                        "least_squares); '" + criterion + "' is not one of them. Pass "
                        "assume_monotone=True if you know yours is");
            const ProgressHook cb = progress_hook(callback);
            const SearchTarget t{k, best};
            SearchOutcome out = run_released([&] {
                SignalPoll poll;
                SearchDriver d(*J, std::ref(poll), cb);
                d.follow(auto_stop, tol);
                if (strategy == "sfs") return sfs(d, t);
                if (strategy == "sbs") return sbs(d, t);
                if (strategy == "sffs") return sffs(d, t);
                if (strategy == "sfbs") return sfbs(d, t);
                if (strategy == "plus_l_minus_r") return plus_l_minus_r(d, t, l, r);
                if (strategy == "bidirectional") return bidirectional(d, t);
                if (strategy == "beam") return beam(d, t, width);
                if (strategy == "exhaustive") return exhaustive(d, t, max_subsets);
                if (strategy == "branch_and_bound") return branch_and_bound(d, k);
                throw std::invalid_argument("strategy: unknown '" + strategy + "'");
            });
            return outcome_to_dict(out);
        },
        py::arg("strategy"), py::arg("X").noconvert(), py::arg("codes").noconvert(),
        py::arg("y").noconvert(), py::arg("criterion"), py::arg("params"), py::arg("fn"),
        py::arg("k"), py::arg("best"), py::arg("auto_stop"), py::arg("tol"), py::arg("l"), py::arg("r"), py::arg("width"),
        py::arg("max_subsets"), py::arg("assume_monotone"), py::arg("n_threads"),
        py::arg("callback"));

    m.def(
        "best_first",
        [](InMatrix<double> X, std::optional<InCodes> codes, std::optional<InVector> y,
           const std::string& criterion, py::dict params, py::object fn, Index max_size,
           Index patience, double max_evaluations, bool removals, int n_threads,
           py::object callback) {
            auto J = make_criterion(criterion, X, codes, y, params, fn, n_threads);
            const ProgressHook cb = progress_hook(callback);
            const BestFirstOptions o{max_size, patience, max_evaluations, removals};
            SearchOutcome out = run_released([&] {
                SignalPoll poll;
                SearchDriver d(*J, std::ref(poll), cb);
                return best_first(d, o);
            });
            return outcome_to_dict(out);
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("y").noconvert(),
        py::arg("criterion"), py::arg("params"), py::arg("fn"), py::arg("max_size"),
        py::arg("patience"), py::arg("max_evaluations"), py::arg("removals"),
        py::arg("n_threads"), py::arg("callback"));

    m.def(
        "annealing",
        [](InMatrix<double> X, std::optional<InCodes> codes, std::optional<InVector> y,
           const std::string& criterion, py::dict params, py::object fn, Index size,
           Index n_iter, const std::string& schedule, double T0, double cooling,
           std::vector<double> table, bool relative, Index n_probes, std::uint64_t seed,
           std::vector<Index> start, int n_threads, py::object callback) {
            auto J = make_criterion(criterion, X, codes, y, params, fn, n_threads);
            for (Index f : start)
                require_index(f >= 0 && f < X.cols(), "initial: index out of range");
            const ProgressHook cb = progress_hook(callback);
            AnnealingOptions o;
            o.size = size;
            o.n_iter = n_iter;
            if (schedule == "geometric") o.schedule = AnnealingOptions::Schedule::geometric;
            else if (schedule == "linear") o.schedule = AnnealingOptions::Schedule::linear;
            else if (schedule == "table") o.schedule = AnnealingOptions::Schedule::table;
            else throw std::invalid_argument("schedule: unknown '" + schedule + "'");
            o.T0 = T0;
            o.cooling = cooling;
            o.table = std::move(table);
            o.relative = relative;
            o.n_probes = n_probes;
            o.seed = seed;
            o.start = std::move(start);
            SearchOutcome out = run_released([&] {
                SignalPoll poll;
                SearchDriver d(*J, std::ref(poll), cb);
                return annealing(d, o);
            });
            return outcome_to_dict(out);
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("y").noconvert(),
        py::arg("criterion"), py::arg("params"), py::arg("fn"), py::arg("size"),
        py::arg("n_iter"), py::arg("schedule"), py::arg("T0"), py::arg("cooling"),
        py::arg("table"), py::arg("relative"), py::arg("n_probes"), py::arg("seed"),
        py::arg("start"), py::arg("n_threads"), py::arg("callback"));

    m.def(
        "rank_features",
        [](InMatrix<double> X, std::optional<InCodes> codes, std::optional<InVector> y,
           const std::string& criterion, py::dict params, py::object fn, Index k,
           int n_threads) {
            auto J = make_criterion(criterion, X, codes, y, params, fn, n_threads);
            RankOutcome r = run_released([&] {
                SignalPoll poll;
                SearchDriver d(*J, std::ref(poll), {});
                return rank_features(d, k);
            });
            py::dict out;
            out["scores"] = to_numpy(r.scores);
            out["order"] = to_numpy(r.order);
            out["score"] = r.score;
            out["n_evaluations"] = r.n_evaluations;
            return out;
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("y").noconvert(),
        py::arg("criterion"), py::arg("params"), py::arg("fn"), py::arg("k"),
        py::arg("n_threads"));

    m.def(
        "criterion_evaluate",
        [](InMatrix<double> X, std::optional<InCodes> codes, std::optional<InVector> y,
           const std::string& criterion, py::dict params, py::object fn,
           std::vector<Index> subset, int n_threads) {
            auto J = make_criterion(criterion, X, codes, y, params, fn, n_threads);
            for (Index f : subset) require_index(f >= 0 && f < X.cols(), "features: index out of range");
            return run_released([&] { return J->evaluate(subset); });
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("y").noconvert(),
        py::arg("criterion"), py::arg("params"), py::arg("fn"), py::arg("subset"),
        py::arg("n_threads"));

    // J of every subset in a list (fastfs.dask scores blocks of candidate subsets as tasks),
    // one criterion built for all of them.
    m.def(
        "criterion_evaluate_many",
        [](InMatrix<double> X, std::optional<InCodes> codes, std::optional<InVector> y,
           const std::string& criterion, py::dict params, py::object fn,
           std::vector<std::vector<Index>> subsets, int n_threads) {
            auto J = make_criterion(criterion, X, codes, y, params, fn, n_threads);
            for (const auto& s : subsets)
                for (Index f : s)
                    require_index(f >= 0 && f < X.cols(), "features: index out of range");
            return to_numpy(run_released([&] {
                SignalPoll poll;
                std::vector<double> out(subsets.size());
                for (std::size_t i = 0; i < subsets.size(); ++i) {
                    if (poll()) throw Interrupted();
                    out[i] = J->evaluate(subsets[i]);
                }
                return out;
            }));
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("y").noconvert(),
        py::arg("criterion"), py::arg("params"), py::arg("fn"), py::arg("subsets"),
        py::arg("n_threads"));
}

}  // namespace fastfs::bindings
