// Bindings for the search area (SPEC 5.1-5.2): builds the criterion (a built-in one in C++, or
// a Python callable behind the same interface) and runs one strategy on the shared driver.
#include <algorithm>
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

// A criterion as fastfs.criteria prepares it, once: its kind and typed parameters (those
// the kind does not use keep their defaults). The Python side of a 'callable' or 'remote'
// criterion travels separately (fn), so fastfs.dask can ship a spec to workers cheaply.
struct CriterionSpec {
    std::string kind;
    std::string utility = "linear";  // margin
    double beta = 0.0;               // margin; loo_knn_mse (0: the default of SPEC 3.3)
    int n_neighbors = 1;             // loo_knn_accuracy, loo_knn_mse
    double ridge = 0.0;              // scatter criteria
    bool fit_intercept = false;      // least_squares
    std::vector<Index> fit_rows, score_rows;  // learner criteria
    int n_classes = 0;
    double C = 1.0, alpha = 1.0;
};

const std::vector<std::string>& criterion_kinds() {
    static const std::vector<std::string> kinds = {
        "callable", "remote", "margin", "loo_knn_accuracy", "loo_knn_mse", "train_error",
        "holdout_error", "aic", "bic", "least_squares", "j1", "j2", "j3", "divergence",
        "bhattacharyya"};
    return kinds;
}

std::unique_ptr<Criterion> make_criterion(const CriterionSpec& spec, InMatrix<double> X,
                                          std::optional<InCodes> codes,
                                          std::optional<InVector> y, py::object fn,
                                          int n_threads) {
    const std::string& kind = spec.kind;
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
            u = UtilitySpec{parse_utility(spec.utility), spec.beta};
        else
            k = spec.n_neighbors;
        c = std::make_unique<DistanceCriterion>(
            X, need_codes(), kind == "margin" ? DistanceKind::margin : DistanceKind::knn_accuracy,
            u, k, n_threads);
    } else if (kind == "loo_knn_mse") {
        require(y.has_value() && y->size() == X.rows(), "loo_knn_mse needs real targets y");
        const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> zeros =
            Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>::Zero(X.rows());
        c = std::make_unique<DistanceCriterion>(X, zeros, DistanceKind::knn_mse, UtilitySpec{},
                                                spec.n_neighbors, n_threads, y->data(),
                                                spec.beta);
    } else if (kind == "train_error" || kind == "holdout_error" || kind == "aic" ||
               kind == "bic") {
        const LearnerScore s = kind == "train_error"     ? LearnerScore::train_error
                               : kind == "holdout_error" ? LearnerScore::holdout_error
                               : kind == "aic"           ? LearnerScore::aic
                                                         : LearnerScore::bic;
        const auto& fit_rows = spec.fit_rows;
        const auto& score_rows = spec.score_rows;
        const double C = spec.C, alpha = spec.alpha;
        if (codes.has_value()) {
            const Eigen::VectorXi cc = need_codes().cast<int>();
            c = std::make_unique<LearnerCriterion>(X, fit_rows, score_rows, &cc, nullptr,
                                                   spec.n_classes, s, C, alpha,
                                                   n_threads);
        } else {
            require(y.has_value() && y->size() == X.rows(), kind + " needs labels or targets");
            const Eigen::VectorXd t = *y;
            c = std::make_unique<LearnerCriterion>(X, fit_rows, score_rows, nullptr, &t, 0, s,
                                                   C, alpha, n_threads);
        }
    } else if (kind == "least_squares") {
        require(y.has_value() && y->size() == X.rows(), "least_squares needs real targets y");
        c = std::make_unique<LeastSquaresCriterion>(X, *y, spec.fit_intercept, n_threads);
    } else {
        ScatterKind s;
        if (kind == "j1") s = ScatterKind::j1;
        else if (kind == "j2") s = ScatterKind::j2;
        else if (kind == "j3") s = ScatterKind::j3;
        else if (kind == "divergence") s = ScatterKind::divergence;
        else if (kind == "bhattacharyya") s = ScatterKind::bhattacharyya;
        else throw std::invalid_argument("criterion: unknown kind '" + kind + "'");
        c = std::make_unique<ScatterCriterion>(X, need_codes(), s, spec.ridge);
    }
    c->set_threads(n_threads);
    return c;
}

// A search's result as Python sees it: the records split into scores (history) and subsets.
struct SearchResult {
    Subset selected;
    double score = 0.0;
    std::vector<double> history;
    std::vector<Subset> subsets;  // ascending, one per entry of history
    std::vector<double> best_scores;
    long long n_evaluations = 0;
    bool stopped_early = false;
    bool scores_tied = false;
};

SearchResult search_result(SearchOutcome r) {
    SearchResult out;
    out.selected = std::move(r.selected);
    out.score = r.score;
    for (auto& h : r.history) {
        out.history.push_back(h.score);
        out.subsets.push_back(std::move(h.subset));
    }
    out.best_scores = std::move(r.best_scores);
    out.n_evaluations = r.n_evaluations;
    out.stopped_early = r.stopped_early;
    out.scores_tied = r.scores_tied;
    return out;
}

}  // namespace

void register_search(py::module_& m) {
    bind_result<SearchResult>(
        m, "SearchResult",
        "A subset search: selected (list order), score, history (J of every record), subsets "
        "(ascending, one per record), best_scores (by size), n_evaluations, stopped_early.",
        {field("selected", &SearchResult::selected), field("score", &SearchResult::score),
         field("history", &SearchResult::history), field("subsets", &SearchResult::subsets),
         field("best_scores", &SearchResult::best_scores),
         field("n_evaluations", &SearchResult::n_evaluations),
         field("stopped_early", &SearchResult::stopped_early),
         field("scores_tied", &SearchResult::scores_tied)});
    bind_result<RankOutcome>(
        m, "RankResult",
        "Features ranked by J({x}): scores per feature, order (best first), score of the top "
        "k, n_evaluations.",
        {field("scores", &RankOutcome::scores), field("order", &RankOutcome::order),
         field("score", &RankOutcome::score), field("n_evaluations", &RankOutcome::n_evaluations)});
    bind_result<CriterionSpec>(
        m, "CriterionSpec",
        "A criterion's kind and typed parameters, as fastfs.criteria prepares them.",
        {field("kind", &CriterionSpec::kind), field("utility", &CriterionSpec::utility),
         field("beta", &CriterionSpec::beta), field("n_neighbors", &CriterionSpec::n_neighbors),
         field("ridge", &CriterionSpec::ridge),
         field("fit_intercept", &CriterionSpec::fit_intercept),
         field("fit_rows", &CriterionSpec::fit_rows),
         field("score_rows", &CriterionSpec::score_rows),
         field("n_classes", &CriterionSpec::n_classes), field("C", &CriterionSpec::C),
         field("alpha", &CriterionSpec::alpha)})
        .def(py::init([](std::string kind, std::string utility, double beta, int n_neighbors,
                         double ridge, bool fit_intercept, std::vector<Index> fit_rows,
                         std::vector<Index> score_rows, int n_classes, double C, double alpha) {
                 const auto& kinds = criterion_kinds();
                 require(std::find(kinds.begin(), kinds.end(), kind) != kinds.end(),
                         "criterion: unknown kind '" + kind + "'");
                 if (kind == "margin") parse_utility(utility);  // throws for an unknown one
                 require(n_neighbors >= 1, "n_neighbors: must be >= 1");
                 return CriterionSpec{std::move(kind), std::move(utility), beta, n_neighbors,
                                      ridge, fit_intercept, std::move(fit_rows),
                                      std::move(score_rows), n_classes, C, alpha};
             }),
             py::arg("kind"), py::kw_only(), py::arg("utility") = "linear",
             py::arg("beta") = 0.0, py::arg("n_neighbors") = 1, py::arg("ridge") = 0.0,
             py::arg("fit_intercept") = false, py::arg("fit_rows") = std::vector<Index>{},
             py::arg("score_rows") = std::vector<Index>{}, py::arg("n_classes") = 0,
             py::arg("C") = 1.0, py::arg("alpha") = 1.0);
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
            if (state == "j1") return ScatterCriterion::bytes_needed(n_features, n_classes, true);
            throw std::invalid_argument("memory_need: unknown state '" + state + "'");
        },
        py::arg("state"), py::arg("n_samples"), py::arg("n_features"), py::arg("n_classes"),
        py::arg("n_neighbors"), py::arg("n_threads"));

    m.def(
        "search",
        [](const std::string& strategy, InMatrix<double> X, std::optional<InCodes> codes,
           std::optional<InVector> y, const CriterionSpec& criterion, py::object fn, Index k,
           bool best, bool auto_stop, double tol, Index l, Index r, Index width, double max_subsets,
           bool assume_monotone, int n_threads, py::object callback) {
            auto J = make_criterion(criterion, X, codes, y, fn, n_threads);
            if (strategy == "branch_and_bound")
                require(criterion.kind != "aic" && criterion.kind != "bic",
                        "criterion: AIC and BIC are not monotone (a feature can lower them), "
                        "so branch_and_bound cannot bound with them; use exhaustive or another "
                        "search");
            if (strategy == "branch_and_bound")
                require(J->monotone() || assume_monotone,
                        "criterion: branch_and_bound is exact only for criteria that never rise "
                        "when a feature is removed (j2, j3, divergence, bhattacharyya, "
                        "least_squares); '" + criterion.kind + "' is not one of them. Pass "
                        "assume_monotone=True if you know yours is");
            const ProgressHook cb = progress_hook(callback);
            const SearchTarget t{k, best};
            SearchOutcome out = run_released([&] {
                SignalPoll poll;
                SearchDriver d(*J, std::ref(poll), cb);
                // (bidirectional's backward half starts from the full set: a singular one
                // has no finite move at all, which stays an error)
                d.follow(auto_stop, tol, best && strategy != "bidirectional");
                if (strategy == "sfs") return sfs(d, t);
                if (strategy == "sbs") return sbs(d, t);
                if (strategy == "sffs") return sffs(d, t);
                if (strategy == "sfbs") return sfbs(d, t);
                if (strategy == "plus_l_minus_r") return plus_l_minus_r(d, t, l, r);
                if (strategy == "bidirectional") return bidirectional(d, t);
                if (strategy == "beam") return beam(d, t, width);
                if (strategy == "exhaustive") return exhaustive(d, t, max_subsets);
                if (strategy == "branch_and_bound") return branch_and_bound(d, k, max_subsets);
                throw std::invalid_argument("strategy: unknown '" + strategy + "'");
            });
            return search_result(std::move(out));
        },
        py::arg("strategy"), py::arg("X").noconvert(), py::arg("codes").noconvert(),
        py::arg("y").noconvert(), py::arg("criterion"), py::arg("fn"),
        py::arg("k"), py::arg("best"), py::arg("auto_stop"), py::arg("tol"), py::arg("l"), py::arg("r"), py::arg("width"),
        py::arg("max_subsets"), py::arg("assume_monotone"), py::arg("n_threads"),
        py::arg("callback"));

    m.def(
        "best_first",
        [](InMatrix<double> X, std::optional<InCodes> codes, std::optional<InVector> y,
           const CriterionSpec& criterion, py::object fn, Index max_size,
           Index patience, double max_evaluations, bool removals, int n_threads,
           py::object callback) {
            auto J = make_criterion(criterion, X, codes, y, fn, n_threads);
            const ProgressHook cb = progress_hook(callback);
            const BestFirstOptions o{max_size, patience, max_evaluations, removals};
            SearchOutcome out = run_released([&] {
                SignalPoll poll;
                SearchDriver d(*J, std::ref(poll), cb);
                return best_first(d, o);
            });
            return search_result(std::move(out));
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("y").noconvert(),
        py::arg("criterion"), py::arg("fn"), py::arg("max_size"),
        py::arg("patience"), py::arg("max_evaluations"), py::arg("removals"),
        py::arg("n_threads"), py::arg("callback"));

    m.def(
        "annealing",
        [](InMatrix<double> X, std::optional<InCodes> codes, std::optional<InVector> y,
           const CriterionSpec& criterion, py::object fn, Index size,
           Index n_iter, const std::string& schedule, double T0, double cooling,
           std::vector<double> table, bool relative, Index n_probes, std::uint64_t seed,
           std::vector<Index> start, int n_threads, py::object callback) {
            auto J = make_criterion(criterion, X, codes, y, fn, n_threads);
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
            return search_result(std::move(out));
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("y").noconvert(),
        py::arg("criterion"), py::arg("fn"), py::arg("size"),
        py::arg("n_iter"), py::arg("schedule"), py::arg("T0"), py::arg("cooling"),
        py::arg("table"), py::arg("relative"), py::arg("n_probes"), py::arg("seed"),
        py::arg("start"), py::arg("n_threads"), py::arg("callback"));

    m.def(
        "rank_features",
        [](InMatrix<double> X, std::optional<InCodes> codes, std::optional<InVector> y,
           const CriterionSpec& criterion, py::object fn, Index k,
           int n_threads) {
            auto J = make_criterion(criterion, X, codes, y, fn, n_threads);
            return run_released([&] {
                SignalPoll poll;
                SearchDriver d(*J, std::ref(poll), {});
                return rank_features(d, k);
            });
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("y").noconvert(),
        py::arg("criterion"), py::arg("fn"), py::arg("k"),
        py::arg("n_threads"));

    m.def(
        "criterion_evaluate",
        [](InMatrix<double> X, std::optional<InCodes> codes, std::optional<InVector> y,
           const CriterionSpec& criterion, py::object fn,
           std::vector<Index> subset, int n_threads) {
            auto J = make_criterion(criterion, X, codes, y, fn, n_threads);
            for (Index f : subset) require_index(f >= 0 && f < X.cols(), "features: index out of range");
            return run_released([&] { return J->evaluate(subset); });
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("y").noconvert(),
        py::arg("criterion"), py::arg("fn"), py::arg("subset"),
        py::arg("n_threads"));

    // J of every subset in a list (fastfs.dask scores blocks of candidate subsets as tasks),
    // one criterion built for all of them.
    m.def(
        "criterion_evaluate_many",
        [](InMatrix<double> X, std::optional<InCodes> codes, std::optional<InVector> y,
           const CriterionSpec& criterion, py::object fn,
           std::vector<std::vector<Index>> subsets, int n_threads) {
            auto J = make_criterion(criterion, X, codes, y, fn, n_threads);
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
        py::arg("criterion"), py::arg("fn"), py::arg("subsets"),
        py::arg("n_threads"));
}

}  // namespace fastfs::bindings
