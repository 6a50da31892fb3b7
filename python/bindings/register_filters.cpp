// Bindings for the filters area (SPEC 6): the one-pass sufficient statistics of
// fastfs/filters/filters.hpp. fastfs.filters validates input and derives scores and p-values.
#include "common.hpp"
#include "fastfs/filters/filters.hpp"

namespace fastfs::bindings {
namespace {

using filters::Binning;

template <class T>
void register_dense(py::module_& m) {
    m.def(
        "class_moments",
        [](InMatrix<T> X, InCodes codes, Index n_classes, int n_threads) {
            return run_released([&] {
                SignalPoll poll;
                return filters::class_moments<T>(X, codes, n_classes, n_threads, std::ref(poll));
            });
        },
        py::arg("X").noconvert(), py::arg("codes").noconvert(), py::arg("n_classes"),
        py::arg("n_threads"));

    m.def(
        "cross_moments",
        [](InMatrix<T> X, Eigen::Ref<const Vector<double>> yc, int n_threads) {
            return run_released([&] {
                SignalPoll poll;
                return filters::cross_moments<T>(X, yc, n_threads, std::ref(poll));
            });
        },
        py::arg("X").noconvert(), py::arg("yc").noconvert(), py::arg("n_threads"));

    m.def(
        "rank_sums",
        [](InMatrix<T> X, InCodes positive, int n_threads) {
            return run_released([&] {
                SignalPoll poll;
                return filters::rank_sums<T>(X, positive, n_threads, std::ref(poll));
            });
        },
        py::arg("X").noconvert(), py::arg("positive").noconvert(), py::arg("n_threads"));

    m.def(
        "table_stats",
        [](InMatrix<T> X, InCodes codes, Index n_classes, const std::string& binning, int bins,
           double alpha, int n_threads) {
            const Binning b = filters::parse_binning(binning);
            return run_released([&] {
                SignalPoll poll;
                return filters::table_stats<T>(X, codes, n_classes, b, bins, alpha, n_threads,
                                               std::ref(poll));
            });
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
            return run_released([&] {
                SignalPoll poll;
                return filters::sparse_moments<T, I>({n_rows, n_cols, csc}, p, ix, v, codes,
                                                     n_classes, wp, n_threads, std::ref(poll));
            });
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
            return run_released([&] {
                SignalPoll poll;
                return filters::table_stats_csc<T, I>(n_rows, n_cols, p, ix, v, codes, n_classes,
                                                      alpha, n_threads, std::ref(poll));
            });
        },
        py::arg("n_rows"), py::arg("indptr").noconvert(), py::arg("indices").noconvert(),
        py::arg("data").noconvert(), py::arg("codes").noconvert(), py::arg("n_classes"),
        py::arg("alpha"), py::arg("n_threads"));
}

}  // namespace

void register_filters(py::module_& m) {
    using filters::ClassMoments, filters::CrossMoments, filters::RankSums, filters::SparseMoments,
        filters::TableStats;
    bind_result<ClassMoments>(
        m, "ClassMoments",
        "Per class and feature: counts, means, M2 (n_classes x n_features) and centred means.",
        {field("counts", &ClassMoments::counts),
         matrix_field("mean", &ClassMoments::mean, &ClassMoments::counts),
         matrix_field("m2", &ClassMoments::m2, &ClassMoments::counts),
         matrix_field("centred", &ClassMoments::centred, &ClassMoments::counts)});
    bind_result<CrossMoments>(
        m, "CrossMoments", "Per feature against a centred target: mean, sxx and sxy.",
        {field("mean", &CrossMoments::mean), field("sxx", &CrossMoments::sxx),
         field("sxy", &CrossMoments::sxy)});
    bind_result<RankSums>(
        m, "RankSums", "Per feature: the positive class's midrank sum and the tie term.",
        {field("positive_rank_sum", &RankSums::positive_rank_sum),
         field("tie_term", &RankSums::tie_term)});
    bind_result<TableStats>(
        m, "TableStats",
        "Per feature contingency table: chi2, mutual information, rows, largest row's count.",
        {field("chi2", &TableStats::chi2), field("mutual_info", &TableStats::mutual_info),
         field("n_rows", &TableStats::n_rows), field("largest_row", &TableStats::largest_row)});
    bind_result<SparseMoments>(
        m, "SparseMoments",
        "Sparse per class sums (n_classes x n_features), weighted sums, minima and maxima.",
        {field("counts", &SparseMoments::counts),
         matrix_field("sum", &SparseMoments::sum, &SparseMoments::counts),
         matrix_field("shift", &SparseMoments::shift, &SparseMoments::counts),
         matrix_field("dsum", &SparseMoments::dsum, &SparseMoments::counts),
         matrix_field("dsumsq", &SparseMoments::dsumsq, &SparseMoments::counts),
         field("col_shift", &SparseMoments::col_shift),
         field("dweighted", &SparseMoments::dweighted), field("min", &SparseMoments::min),
         field("max", &SparseMoments::max)});
    register_dense<double>(m);
    register_dense<float>(m);
    register_sparse<double, std::int32_t>(m);
    register_sparse<double, std::int64_t>(m);
    register_sparse<float, std::int32_t>(m);
    register_sparse<float, std::int64_t>(m);
}

}  // namespace fastfs::bindings
