// Bindings for the linear learners (SPEC 7.1): L2-regularised logistic regression (Newton) and
// ridge regression on the columns given. fastfs.learners selects the columns and checks input.
#include <optional>

#include "common.hpp"
#include "fastfs/linear/logistic.hpp"

namespace fastfs::bindings {

void register_learners(py::module_& m) {
    bind_result<LogisticFit>(m, "LogisticFit",
                             "Newton fit: theta ((d + 1) x K'), loss, n_iter, converged.",
                             {field("theta", &LogisticFit::theta), field("loss", &LogisticFit::loss),
                              field("n_iter", &LogisticFit::n_iter),
                              field("converged", &LogisticFit::converged)});
    bind_result<L1PathOut>(m, "LogisticL1Path",
                           "L1 path: coefs (d x n_C), intercepts, n_iter and converged per C.",
                           {field("coefs", &L1PathOut::coefs),
                            field("intercepts", &L1PathOut::intercepts),
                            field("n_iter", &L1PathOut::n_iter),
                            bool_field("converged", &L1PathOut::converged)});
    bind_result<RidgeFit>(m, "RidgeFit", "Ridge fit: coef (d, then the intercept) and rss.",
                          {field("coef", &RidgeFit::coef), field("rss", &RidgeFit::rss)});
    m.def(
        "logistic_fit",
        [](InMatrix<double> X, InCodes codes, int n_classes, double C, double tol, int max_iter,
           std::optional<Eigen::MatrixXd> theta0) {
            const Eigen::MatrixXd A = X;
            const Eigen::VectorXi y = codes.cast<int>();
            LogisticOptions o;
            o.C = C;
            o.tol = tol;
            o.max_iter = max_iter;
            return run_released([&] {
                SignalPoll poll;
                const StopHook stop = std::ref(poll);
                o.stop = &stop;
                return fit_logistic(A, y, n_classes, o, theta0 ? &*theta0 : nullptr);
            });
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("n_classes"),
        py::arg("C"), py::arg("tol"), py::arg("max_iter"), py::arg("theta0"));

    m.def(
        "logistic_l1_path",
        [](InMatrix<double> X, InCodes codes, std::vector<double> Cs, double tol, int max_iter) {
            const Eigen::MatrixXd A = X;
            const Eigen::VectorXi y = codes.cast<int>();
            return run_released([&] {
                SignalPoll poll;
                return logistic_l1_path(A, y, Cs, tol, max_iter, std::ref(poll));
            });
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("Cs"), py::arg("tol"),
        py::arg("max_iter"));

    m.def(
        "ridge_fit",
        [](InMatrix<double> X, Eigen::Ref<const Eigen::VectorXd> y, double alpha) {
            const Eigen::MatrixXd A = X;
            const Eigen::VectorXd t = y;
            return run_released([&] { return fit_ridge(A, t, alpha); });
        },
        py::arg("X").noconvert(), py::arg("y").noconvert(), py::arg("alpha"));
}

}  // namespace fastfs::bindings
