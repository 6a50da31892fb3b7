// Bindings for the filters area (SPEC 6): the one-pass sufficient statistics of
// fastfs/filters/filters.hpp. fastfs.filters validates input and derives scores and p-values.
#include "common.hpp"
#include "fastfs/filters/filters.hpp"

namespace fastfs::bindings {
namespace {

using filters::Binning;

py::array_t<double> as_matrix(const std::vector<double>& v, Index rows, Index cols) {
    py::array_t<double> a({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)});
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
}

py::dict table_dict(const filters::TableStats& s) {
    py::dict out;
    out["chi2"] = to_numpy(s.chi2);
    out["mutual_info"] = to_numpy(s.mutual_info);
    out["n_rows"] = to_numpy(s.n_rows);
    return out;
}

template <class T>
void register_dense(py::module_& m) {
    m.def(
        "class_moments",
        [](InMatrix<T> X, InCodes codes, Index n_classes, int n_threads) {
            auto r = run_released([&] {
                SignalPoll poll;
                return filters::class_moments<T>(X, codes, n_classes, n_threads, std::ref(poll));
            });
            py::dict out;
            out["counts"] = to_numpy(r.counts);
            out["mean"] = as_matrix(r.mean, n_classes, X.cols());
            out["m2"] = as_matrix(r.m2, n_classes, X.cols());
            out["centred"] = as_matrix(r.centred, n_classes, X.cols());
            return out;
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("n_classes"),
        py::arg("n_threads"));

    m.def(
        "cross_moments",
        [](InMatrix<T> X, Eigen::Ref<const Vector<double>> yc, int n_threads) {
            auto r = run_released([&] {
                SignalPoll poll;
                return filters::cross_moments<T>(X, yc, n_threads, std::ref(poll));
            });
            py::dict out;
            out["mean"] = to_numpy(r.mean);
            out["sxx"] = to_numpy(r.sxx);
            out["sxy"] = to_numpy(r.sxy);
            return out;
        },
        py::arg("X").noconvert(), py::arg("yc").noconvert(), py::arg("n_threads"));

    m.def(
        "rank_sums",
        [](InMatrix<T> X, InCodes positive, int n_threads) {
            auto r = run_released([&] {
                SignalPoll poll;
                return filters::rank_sums<T>(X, positive, n_threads, std::ref(poll));
            });
            py::dict out;
            out["positive_rank_sum"] = to_numpy(r.positive_rank_sum);
            out["tie_term"] = to_numpy(r.tie_term);
            return out;
        },
        py::arg("X").noconvert(), py::arg("positive").noconvert(), py::arg("n_threads"));

    m.def(
        "table_stats",
        [](InMatrix<T> X, InCodes codes, Index n_classes, const std::string& binning, int bins,
           double alpha, int n_threads) {
            const Binning b = filters::parse_binning(binning);
            return table_dict(run_released([&] {
                SignalPoll poll;
                return filters::table_stats<T>(X, codes, n_classes, b, bins, alpha, n_threads,
                                               std::ref(poll));
            }));
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("n_classes"),
        py::arg("binning"), py::arg("bins"), py::arg("alpha"), py::arg("n_threads"));
}

template <class T, class I>
void register_sparse(py::module_& m) {
    m.def(
        "sparse_moments",
        [](Index n_rows, Index n_cols, bool csc, py::array_t<I, py::array::c_style> indptr,
           py::array_t<I, py::array::c_style> indices, py::array_t<T, py::array::c_style> data,
           InCodes codes, Index n_classes, py::array_t<double, py::array::c_style> w,
           int n_threads) {
            const Index outer = csc ? n_cols : n_rows;
            require(indptr.size() == outer + 1, "X: sparse index pointer has the wrong length");
            require(indices.size() >= static_cast<py::ssize_t>(indptr.at(outer)) &&
                        data.size() >= static_cast<py::ssize_t>(indptr.at(outer)),
                    "X: sparse arrays are shorter than the index pointer says");
            require(w.size() == 0 || w.size() == n_rows, "w: length must be n_samples");
            const I* p = indptr.data();
            const I* ix = indices.data();
            const T* v = data.data();
            const double* wp = w.size() ? w.data() : nullptr;
            auto r = run_released([&] {
                SignalPoll poll;
                return filters::sparse_moments<T, I>({n_rows, n_cols, csc}, p, ix, v, codes,
                                                     n_classes, wp, n_threads, std::ref(poll));
            });
            py::dict out;
            out["counts"] = to_numpy(r.counts);
            out["sum"] = as_matrix(r.sum, n_classes, n_cols);
            out["sumsq"] = as_matrix(r.sumsq, n_classes, n_cols);
            out["weighted"] = to_numpy(r.weighted);
            out["min"] = to_numpy(r.min);
            out["max"] = to_numpy(r.max);
            return out;
        },
        py::arg("n_rows"), py::arg("n_cols"), py::arg("csc"), py::arg("indptr").noconvert(),
        py::arg("indices").noconvert(), py::arg("data").noconvert(),
        py::arg("codes").noconvert(), py::arg("n_classes"), py::arg("w").noconvert(),
        py::arg("n_threads"));

    m.def(
        "table_stats_csc",
        [](Index n_rows, py::array_t<I, py::array::c_style> indptr,
           py::array_t<I, py::array::c_style> indices, py::array_t<T, py::array::c_style> data,
           InCodes codes, Index n_classes, double alpha, int n_threads) {
            const Index n_cols = static_cast<Index>(indptr.size()) - 1;
            require(n_cols >= 0, "X: CSC indptr is empty");
            require(indices.size() >= static_cast<py::ssize_t>(indptr.at(n_cols)) &&
                        data.size() >= static_cast<py::ssize_t>(indptr.at(n_cols)),
                    "X: CSC arrays are shorter than indptr says");
            const I* p = indptr.data();
            const I* ix = indices.data();
            const T* v = data.data();
            return table_dict(run_released([&] {
                SignalPoll poll;
                return filters::table_stats_csc<T, I>(n_rows, n_cols, p, ix, v, codes, n_classes,
                                                      alpha, n_threads, std::ref(poll));
            }));
        },
        py::arg("n_rows"), py::arg("indptr").noconvert(), py::arg("indices").noconvert(),
        py::arg("data").noconvert(), py::arg("codes").noconvert(), py::arg("n_classes"),
        py::arg("alpha"), py::arg("n_threads"));
}

}  // namespace

void register_filters(py::module_& m) {
    register_dense<double>(m);
    register_dense<float>(m);
    register_sparse<double, std::int32_t>(m);
    register_sparse<double, std::int64_t>(m);
    register_sparse<float, std::int32_t>(m);
    register_sparse<float, std::int64_t>(m);
}

}  // namespace fastfs::bindings
