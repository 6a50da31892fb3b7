// Bindings for the linear learners (SPEC 7.1): L2-regularised logistic regression (Newton) and
// ridge regression on the columns given. fastfs.learners selects the columns and checks input.
#include <optional>

#include "common.hpp"
#include "fastfs/linear/logistic.hpp"

namespace fastfs::bindings {

void register_learners(py::module_& m) {
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
            LogisticFit f = run_released([&] {
                return fit_logistic(A, y, n_classes, o, theta0 ? &*theta0 : nullptr);
            });
            py::dict out;
            out["theta"] = f.theta;
            out["loss"] = f.loss;
            out["n_iter"] = f.n_iter;
            out["converged"] = f.converged;
            return out;
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("n_classes"),
        py::arg("C"), py::arg("tol"), py::arg("max_iter"), py::arg("theta0"));

    m.def(
        "logistic_l1_path",
        [](InMatrix<double> X, InCodes codes, std::vector<double> Cs, double tol, int max_iter) {
            const Eigen::MatrixXd A = X;
            const Eigen::VectorXi y = codes.cast<int>();
            L1PathOut r = run_released([&] { return logistic_l1_path(A, y, Cs, tol, max_iter); });
            py::dict out;
            out["coefs"] = r.coefs;
            out["intercepts"] = r.intercepts;
            out["n_iter"] = to_numpy(r.n_iter);
            std::vector<bool> conv(r.converged.begin(), r.converged.end());
            out["converged"] = py::cast(conv);
            return out;
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("Cs"), py::arg("tol"),
        py::arg("max_iter"));

    m.def(
        "ridge_fit",
        [](InMatrix<double> X, Eigen::Ref<const Eigen::VectorXd> y, double alpha) {
            const Eigen::MatrixXd A = X;
            const Eigen::VectorXd t = y;
            RidgeFit r = run_released([&] { return fit_ridge(A, t, alpha); });
            py::dict out;
            out["coef"] = r.coef;
            out["rss"] = r.rss;
            return out;
        },
        py::arg("X").noconvert(), py::arg("y").noconvert(), py::arg("alpha"));
}

}  // namespace fastfs::bindings
