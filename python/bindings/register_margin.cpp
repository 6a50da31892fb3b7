// Bindings for the margin area: margins, margin_score and G-flip (SPEC 2.2-2.4).
#include "common.hpp"
#include "fastfs/search/gflip.hpp"
#include "fastfs/criteria/margin.hpp"

namespace fastfs::bindings {
namespace {

UtilitySpec utility_spec(const std::string& name, double beta) {
    return UtilitySpec{parse_utility(name), beta};
}

template <class T>
void register_for(py::module_& m) {
    m.def(
        "margins",
        [](InMatrix<T> X, InCodes codes, std::vector<double> weights, int n_threads,
           py::object callback) {
            require(X.rows() == codes.size(), "X and y have different numbers of samples");
            const ProgressHook cb = progress_hook(callback);
            PassStatus status;
            std::vector<double> theta = run_released([&] {
                SignalPoll poll;
                return margins_by_query<T>(X, codes, weights, n_threads, std::ref(poll), cb,
                                           &status);
            });
            return pass_result(theta, status);
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("weights"),
        py::arg("n_threads"), py::arg("callback") = py::none());

    m.def(
        "margin_score",
        [](InMatrix<T> X, InCodes codes, std::vector<double> weights, const std::string& utility,
           double beta, int n_threads, py::object callback) {
            require(X.rows() == codes.size(), "X and y have different numbers of samples");
            const UtilitySpec u = utility_spec(utility, beta);
            const ProgressHook cb = progress_hook(callback);
            PassStatus status;
            const double e = run_released([&] {
                SignalPoll poll;
                return utility_sum(margins_by_query<T>(X, codes, weights, n_threads,
                                                       std::ref(poll), cb, &status, u),
                                   u);
            });
            return py::make_tuple(e, status.stopped_early);
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("weights"),
        py::arg("utility"), py::arg("beta"), py::arg("n_threads"),
        py::arg("callback") = py::none());

    // fastfs.dask: margins and the utility sum of the query samples q0 .. q1-1 only.
    m.def(
        "margins_range",
        [](InMatrix<T> X, InCodes codes, std::vector<double> weights, Index q0, Index q1,
           int n_threads) {
            require(X.rows() == codes.size(), "X and y have different numbers of samples");
            return to_numpy(run_released([&] {
                SignalPoll poll;
                return margins_of_range<T>(X, codes, weights, q0, q1, n_threads, std::ref(poll));
            }));
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("weights"),
        py::arg("q0"), py::arg("q1"), py::arg("n_threads"));

    m.def(
        "margin_score_range",
        [](InMatrix<T> X, InCodes codes, std::vector<double> weights, const std::string& utility,
           double beta, Index q0, Index q1, int n_threads) {
            require(X.rows() == codes.size(), "X and y have different numbers of samples");
            const UtilitySpec u = utility_spec(utility, beta);
            return run_released([&] {
                SignalPoll poll;
                return utility_sum(
                    margins_of_range<T>(X, codes, weights, q0, q1, n_threads, std::ref(poll)), u);
            });
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("weights"),
        py::arg("utility"), py::arg("beta"), py::arg("q0"), py::arg("q1"), py::arg("n_threads"));

    m.def(
        "gflip",
        [](InMatrix<T> X, InCodes codes, const std::string& utility, double beta,
           int max_epochs, int n_restarts, std::vector<std::uint8_t> initial,
           std::uint64_t seed, int n_threads, py::object callback, int first_restart) {
            require(first_restart >= 0, "first_restart must be >= 0");
            GFlipOptions opt;
            opt.first_restart = first_restart;
            opt.utility = utility_spec(utility, beta);
            opt.max_epochs = max_epochs;
            opt.n_restarts = n_restarts;
            opt.initial = std::move(initial);
            opt.seed = seed;
            opt.n_threads = n_threads;
            const ProgressHook cb = progress_hook(callback);
            return run_released([&] {
                GFlip<T> algo(X, codes, std::move(opt));
                SignalPoll poll;
                return algo.run(std::ref(poll), cb);
            });
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("utility"),
        py::arg("beta"), py::arg("max_epochs"), py::arg("n_restarts"), py::arg("initial"),
        py::arg("seed"), py::arg("n_threads"), py::arg("callback"), py::arg("first_restart") = 0);
}

}  // namespace

void register_margin(py::module_& m) {
    bind_result<GFlipResult>(
        m, "GFlipResult",
        "G-flip: support, selected, score, history (per epoch of the best restart), n_epochs, "
        "n_flips, restart_scores, best_restart, stopped_early.",
        {bool_field("support", &GFlipResult::support), field("selected", &GFlipResult::selected),
         field("score", &GFlipResult::score), field("history", &GFlipResult::history),
         field("n_epochs", &GFlipResult::n_epochs), field("n_flips", &GFlipResult::n_flips),
         field("restart_scores", &GFlipResult::restart_scores),
         field("best_restart", &GFlipResult::best_restart),
         field("stopped_early", &GFlipResult::stopped_early)});
    register_for<double>(m);
    register_for<float>(m);
}

}  // namespace fastfs::bindings
