// Bindings for fastfs.dask's split distance state: a row block of the m x m state that one
// worker holds (state/distance_block.hpp), the utility sum of per-row margins gathered from the
// blocks, and G-flip's visiting orders, so that a driver on the client runs G-flip and the
// distance-criterion searches over blocks on many workers with the answers of one machine.
#include "common.hpp"
#include "fastfs/core/random.hpp"
#include "fastfs/criteria/margin.hpp"
#include "fastfs/state/distance_block.hpp"

namespace fastfs::bindings {
namespace {

template <class T>
std::unique_ptr<DistanceRowBlock> make_block(InMatrix<T> X, InCodes codes, Index r0, Index r1,
                                             int n_threads) {
    require(X.rows() == codes.size(), "X and y have different numbers of samples");
    ClassLayout layout = ClassLayout::from_codes(codes);
    RowMatrix<double> cols(X.cols(), X.rows());
    for (Index p = 0; p < X.rows(); ++p)
        cols.col(p) = X.row(layout.order[static_cast<std::size_t>(p)]).transpose().template cast<double>();
    return std::make_unique<DistanceRowBlock>(std::move(cols), std::move(layout), r0, r1,
                                              n_threads);
}

// theta of the block rows (count x n_rows) from their nearest hit and miss.
py::array_t<double> thetas(const DistanceRowBlock& b, const std::vector<Index>& feats,
                           const std::vector<double>& signs) {
    const Index n = b.n_rows();
    const std::size_t count = feats.size();
    std::vector<double> hit(count * static_cast<std::size_t>(n)), miss(hit.size());
    run_released([&] {
        b.nearest(feats, signs, hit.data(), miss.data());
        return 0;
    });
    py::array_t<double> out({static_cast<py::ssize_t>(count), static_cast<py::ssize_t>(n)});
    double* o = out.mutable_data();
    for (std::size_t i = 0; i < hit.size(); ++i) o[i] = margin_from_squared(hit[i], miss[i]);
    return out;
}

}  // namespace

void register_distributed(py::module_& m) {
    py::class_<DistanceRowBlock>(m, "DistanceRowBlock")
        .def(py::init(&make_block<double>), py::arg("X").noconvert(),
             py::arg("codes").noconvert(), py::arg("r0"), py::arg("r1"), py::arg("n_threads"))
        .def(py::init(&make_block<float>), py::arg("X").noconvert(),
             py::arg("codes").noconvert(), py::arg("r0"), py::arg("r1"), py::arg("n_threads"))
        .def_property_readonly("first_row", &DistanceRowBlock::first_row)
        .def_property_readonly("n_rows", &DistanceRowBlock::n_rows)
        .def("assign",
             [](DistanceRowBlock& b, std::vector<Index> S) {
                 run_released([&] {
                     b.assign(S);
                     return 0;
                 });
             },
             py::arg("subset"))
        .def("add_feature",
             [](DistanceRowBlock& b, Index f, double sign) {
                 run_released([&] {
                     b.add_feature(f, sign);
                     return 0;
                 });
             },
             py::arg("feature"), py::arg("sign"))
        .def("margins", &thetas, py::arg("features"), py::arg("signs"))
        .def("margins_of_subset",
             [](const DistanceRowBlock& b, std::vector<Index> S) {
                 std::vector<double> hit(static_cast<std::size_t>(b.n_rows())), miss(hit.size());
                 run_released([&] {
                     b.nearest_of_subset(S, hit.data(), miss.data());
                     return 0;
                 });
                 std::vector<double> theta(hit.size());
                 for (std::size_t i = 0; i < hit.size(); ++i)
                     theta[i] = margin_from_squared(hit[i], miss[i]);
                 return to_numpy(theta);
             },
             py::arg("subset"))
        .def("knn_correct",
             [](const DistanceRowBlock& b, std::vector<Index> feats, std::vector<double> signs,
                int k) {
                 return to_numpy(run_released([&] { return b.knn_correct(feats, signs, k); }));
             },
             py::arg("features"), py::arg("signs"), py::arg("n_neighbors"))
        .def("knn_correct_of_subset",
             [](const DistanceRowBlock& b, std::vector<Index> S, int k) {
                 return run_released([&] { return b.knn_correct_of_subset(S, k); });
             },
             py::arg("subset"), py::arg("n_neighbors"));

    // e = sum of u(theta) over the samples with a margin, serially in the given order (class
    // order: the sum of one machine's margin_score, bit for bit).
    m.def(
        "utility_sum",
        [](Eigen::Ref<const Vector<double>> theta, const std::string& utility, double beta) {
            const UtilitySpec u{parse_utility(utility), beta};
            double total = 0.0;
            for (Index p = 0; p < theta.size(); ++p)
                if (!std::isnan(theta[p])) total += u(theta[p]);
            return total;
        },
        py::arg("theta").noconvert(), py::arg("utility"), py::arg("beta"));

    // The feature visiting orders of G-flip's restart `number`, epochs 0 .. n_epochs-1.
    m.def(
        "gflip_orders",
        [](std::uint64_t seed, int number, Index n_features, int n_epochs) {
            Rng rng(seed, static_cast<std::uint64_t>(number));
            py::array_t<std::int64_t> out(
                {static_cast<py::ssize_t>(n_epochs), static_cast<py::ssize_t>(n_features)});
            std::int64_t* o = out.mutable_data();
            for (int e = 0; e < n_epochs; ++e) {
                const std::vector<Index> p = rng.permutation(n_features);
                std::copy(p.begin(), p.end(), o + static_cast<std::size_t>(e) * p.size());
            }
            return out;
        },
        py::arg("seed"), py::arg("number"), py::arg("n_features"), py::arg("n_epochs"));
}

}  // namespace fastfs::bindings
