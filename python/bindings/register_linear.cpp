// Bindings for greedy least-squares selection and the LASSO (SPEC 4.1-4.2). X arrives
// Fortran-ordered float64 (the algorithms read whole columns; fastfs.linear converts once), or
// C-ordered for OMP's method "qr", which reads it by rows.
#include <type_traits>

#include "common.hpp"
#include "fastfs/linear/lasso.hpp"
#include "fastfs/linear/omp.hpp"

namespace fastfs::bindings {
namespace {

using InColMatrix = Eigen::Ref<const Eigen::MatrixXd>;
using InVector = Eigen::Ref<const Eigen::VectorXd>;

// _core.omp on a column-major X (methods "qr" and "svd") or a C-ordered one ("qr" only).
template <class XRef>
LinearSelection omp_entry(XRef X, InVector y, Index n_features, const std::string& method,
                          const std::string& criterion, double tol, int n_threads,
                          py::object callback, int check_exponent) {
    constexpr bool columns = std::is_same_v<XRef, InColMatrix>;
    const OmpCriterion crit = parse_omp_criterion(criterion);
    if constexpr (columns) {
        require(check_exponent == 0 || method == "qr",
                "check_exponent: only method 'qr' checks X itself");
        require(method == "qr" || method == "svd",
                "method: unknown value '" + method + "'; valid options are 'qr', 'svd'");
    } else {
        require(method == "qr", "method: a C-ordered X takes method 'qr' only");
    }
    const ProgressHook cb = progress_hook(callback);
    return run_released([&] {
        SignalPoll poll;
        StopHook stop = std::ref(poll);
        if constexpr (columns)
            if (method == "svd") return omp_svd(X, y, n_features, crit, tol, stop, cb);
        return omp_qr(X, y, n_features, crit, tol, n_threads, stop, cb, check_exponent);
    });
}

}  // namespace

void register_linear(py::module_& m) {
    bind_result<LinearSelection>(
        m, "LinearSelection",
        "Greedy least squares: selected, eliminated, coef, rss per round, stopped_early (no "
        "column above tol), stopped_by_callback, n_passes.",
        {field("selected", &LinearSelection::selected),
         field("eliminated", &LinearSelection::eliminated), field("coef", &LinearSelection::coef),
         field("rss", &LinearSelection::rss), field("stopped_early", &LinearSelection::stopped_early),
         field("stopped_by_callback", &LinearSelection::stopped_by_callback),
         field("n_passes", &LinearSelection::n_passes),
         field("needs_preparation", &LinearSelection::needs_preparation)});
    bind_result<LassoPathOut>(
        m, "LassoPath", "LASSO path: coefs (n_features x n_alphas), gaps and n_iter per alpha.",
        {field("coefs", &LassoPathOut::coefs), field("gaps", &LassoPathOut::gaps),
         field("n_iter", &LassoPathOut::n_iter),
         field("stopped_early", &LassoPathOut::stopped_early)});
    // Column-major X: every method; C-ordered X: method "qr", read by rows (no column-major
    // copy, the same bits).
    m.def("omp", &omp_entry<InColMatrix>, py::arg("X").noconvert(), py::arg("y").noconvert(),
          py::arg("n_features"), py::arg("method"), py::arg("criterion"), py::arg("tol"),
          py::arg("n_threads"), py::arg("callback") = py::none(), py::arg("check_exponent") = 0);
    m.def("omp", &omp_entry<InMatrix<double>>, py::arg("X").noconvert(),
          py::arg("y").noconvert(), py::arg("n_features"), py::arg("method"),
          py::arg("criterion"), py::arg("tol"), py::arg("n_threads"),
          py::arg("callback") = py::none(), py::arg("check_exponent") = 0);

    m.def(
        "backward_least_squares",
        [](InColMatrix X, InVector y, Index n_features, double tol, int n_threads,
           py::object callback) {
            const ProgressHook cb = progress_hook(callback);
            return run_released([&] {
                SignalPoll poll;
                return backward_elimination(X, y, n_features, tol, n_threads, std::ref(poll), cb);
            });
        },
        py::arg("X").noconvert(), py::arg("y").noconvert(), py::arg("n_features"),
        py::arg("tol"), py::arg("n_threads"), py::arg("callback") = py::none());

    m.def(
        "lasso_path_data",
        [](InColMatrix X, InVector y, InVector alphas, double tol, int max_iter, int n_threads,
           py::object callback) {
            LassoOptions opt{tol, max_iter, n_threads};
            const ProgressHook cb = progress_hook(callback);
            return run_released([&] {
                SignalPoll poll;
                return lasso_path_data(X, y, alphas, opt, std::ref(poll), cb);
            });
        },
        py::arg("X").noconvert(), py::arg("y").noconvert(), py::arg("alphas").noconvert(),
        py::arg("tol"), py::arg("max_iter"), py::arg("n_threads"),
        py::arg("callback") = py::none());

    m.def(
        "lasso_path_gram",
        [](InColMatrix G, InVector Xy, double yy, Index n_samples, InVector alphas, double tol,
           int max_iter, py::object callback) {
            LassoOptions opt{tol, max_iter, 1};
            const ProgressHook cb = progress_hook(callback);
            return run_released([&] {
                SignalPoll poll;
                return lasso_path_gram(G, Xy, yy, n_samples, alphas, opt, std::ref(poll), cb);
            });
        },
        py::arg("G").noconvert(), py::arg("Xy").noconvert(), py::arg("yy"), py::arg("n_samples"),
        py::arg("alphas").noconvert(), py::arg("tol"), py::arg("max_iter"),
        py::arg("callback") = py::none());

    // Test hook for the OrthoBasis interface the searches build on: applies ("add", [j, hints...]),
    // ("remove", [j]), ("reset", subset) or ("clear", []) in turn and returns the state after
    // each, with the number of passes over X so far. max_products / max_gram >= 0 cap the
    // memory budgets (OrthoBasis::limit_memory), in columns.
    testing_module(m).def(
        "ortho_basis_trace",
        [](InColMatrix X, InVector y, double tol,
           const std::vector<std::pair<std::string, std::vector<Index>>>& ops, int n_threads,
           Index max_products, Index max_gram) {
            OrthoBasis basis(X, y, tol, n_threads);
            if (max_products >= 0 || max_gram >= 0)
                basis.limit_memory(max_products >= 0 ? max_products : X.cols(),
                                   max_gram >= 0 ? max_gram : X.cols());
            py::list out;
            for (const auto& [op, arg] : ops) {
                if (op == "add") {
                    require(!arg.empty(), "add takes an index and optional hints");
                    basis.add(arg[0], std::vector<Index>(arg.begin() + 1, arg.end()));
                } else if (op == "remove") {
                    require(arg.size() == 1, "remove takes one index");
                    basis.remove(arg[0]);
                } else if (op == "reset") {
                    basis.reset(arg);
                } else if (op == "clear") {
                    basis.clear();
                } else {
                    throw std::invalid_argument("unknown op " + op);
                }
                const Index n = X.cols();
                std::vector<double> gains(static_cast<std::size_t>(n));
                std::vector<std::uint8_t> addable(static_cast<std::size_t>(n));
                for (Index j = 0; j < n; ++j) {
                    gains[static_cast<std::size_t>(j)] = basis.add_gain(j);
                    addable[static_cast<std::size_t>(j)] = basis.addable(j) ? 1 : 0;
                }
                std::vector<double> costs;
                for (Index j : basis.selected()) costs.push_back(basis.remove_cost(j));
                const Eigen::VectorXd coef = basis.coef();
                py::dict d;
                d["selected"] = to_numpy(basis.selected());
                d["rss"] = basis.rss();
                d["gains"] = to_numpy(gains);
                d["addable"] = to_numpy(addable);
                d["remove_costs"] = to_numpy(costs);
                d["coef"] = py::array_t<double>(coef.size(), coef.data());
                d["n_passes"] = basis.n_passes();
                out.append(d);
            }
            return out;
        },
        py::arg("X").noconvert(), py::arg("y").noconvert(), py::arg("tol"), py::arg("ops"),
        py::arg("n_threads"), py::arg("max_products") = -1, py::arg("max_gram") = -1);
}

}  // namespace fastfs::bindings
