// Bindings for fastfs.dask's tiled mode (X in row tiles: the tile reductions of
// neighbours/tiles.hpp and weights/relief_tiles.hpp, each state an array handed in and a new one
// handed back) and for its split distance state: a row block of the m x m state that one
// worker holds (state/distance_block.hpp), the utility sum of per-row margins gathered from the
// blocks, and G-flip's visiting orders, so that a driver on the client runs G-flip and the
// distance-criterion searches over blocks on many workers with the answers of one machine.
#include <optional>
#include <string>

#include "common.hpp"
#include "fastfs/core/random.hpp"
#include "fastfs/criteria/margin.hpp"
#include "fastfs/state/distance_block.hpp"
#include "fastfs/weights/relief.hpp"
#include "fastfs/weights/relief_tiles.hpp"

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


template <class V>
using InArray = py::array_t<V, py::array::c_style | py::array::forcecast>;

// A fresh copy of a state array (the input stays untouched: Dask may hand it to a retried task).
template <class V>
py::array_t<V> fresh(const InArray<V>& a, py::ssize_t expected, const char* what) {
    require(a.size() == expected, std::string(what) + ": wrong number of entries");
    std::vector<py::ssize_t> shape(a.shape(), a.shape() + a.ndim());
    py::array_t<V> out(shape);
    std::copy(a.data(), a.data() + a.size(), out.mutable_data());
    return out;
}

const double* optional_data(const std::optional<InArray<double>>& a, py::ssize_t expected,
                            const char* what) {
    if (!a) return nullptr;
    require(a->size() == expected, std::string(what) + ": wrong number of entries");
    return a->data();
}

// The thresholds of a query tile (far_t None: no far set).
RadiusTiles radius_rule(Index rows, const InArray<double>& near_t,
                        const std::optional<InArray<double>>& far_t) {
    require(near_t.size() == rows, "near_t: wrong number of entries");
    return RadiusTiles{near_t.data(), optional_data(far_t, rows, "far_t")};
}

template <class T>
void register_tiles_of(py::module_& m) {
    // Nearest hit and miss of the query tile's rows among the reference tile's, merged into the
    // state (hit, hit_d, miss, miss_d): global indices (-1: none yet) and squared distances.
    m.def(
        "tile_hit_miss",
        [](InMatrix<T> Q, Index q0, InCodes qcodes, InMatrix<T> R, Index r0, InCodes rcodes,
           std::vector<double> weights, const InArray<Index>& hit, const InArray<double>& hit_d,
           const InArray<Index>& miss, const InArray<double>& miss_d, int n_threads) {
            const py::ssize_t q = Q.rows();
            require(weights.empty() || static_cast<Index>(weights.size()) == Q.cols(),
                    "weights: expected one weight per feature");
            std::vector<double> w2(static_cast<std::size_t>(Q.cols()), 1.0);
            for (std::size_t f = 0; f < weights.size(); ++f) w2[f] = weights[f] * weights[f];
            auto h = fresh(hit, q, "hit");
            auto hd = fresh(hit_d, q, "hit_d");
            auto s = fresh(miss, q, "miss");
            auto sd = fresh(miss_d, q, "miss_d");
            Index* hp = h.mutable_data();
            double* hdp = hd.mutable_data();
            Index* sp = s.mutable_data();
            double* sdp = sd.mutable_data();
            run_released([&] {
                std::vector<HitMiss> hm(static_cast<std::size_t>(q));
                for (py::ssize_t i = 0; i < q; ++i) {
                    hm[static_cast<std::size_t>(i)].hit = hp[i];
                    hm[static_cast<std::size_t>(i)].hit_d = hdp[i];
                    hm[static_cast<std::size_t>(i)].miss = sp[i];
                    hm[static_cast<std::size_t>(i)].miss_d = sdp[i];
                }
                tile_nearest_hit_miss(MatrixRef<T>(Q), q0, qcodes, MatrixRef<T>(R), r0, rcodes,
                                      w2.data(), hm.data(), n_threads);
                for (py::ssize_t i = 0; i < q; ++i) {
                    hp[i] = hm[static_cast<std::size_t>(i)].hit;
                    hdp[i] = hm[static_cast<std::size_t>(i)].hit_d;
                    sp[i] = hm[static_cast<std::size_t>(i)].miss;
                    sdp[i] = hm[static_cast<std::size_t>(i)].miss_d;
                }
                return 0;
            });
            return py::make_tuple(h, hd, s, sd);
        },
        py::arg("Q").noconvert(), py::arg("q0"), py::arg("qcodes").noconvert(),
        py::arg("R").noconvert(), py::arg("r0"), py::arg("rcodes").noconvert(),
        py::arg("weights"), py::arg("hit"), py::arg("hit_d"), py::arg("miss"),
        py::arg("miss_d"), py::arg("n_threads"));

    // Relief's sum over visits t of (x_t - miss_t)^2 - (x_t - hit_t)^2 (rows given in order).
    m.def(
        "relief_rows",
        [](InMatrix<T> Xv, InMatrix<T> H, InMatrix<T> M) {
            require(H.rows() == Xv.rows() && M.rows() == Xv.rows() && H.cols() == Xv.cols() &&
                        M.cols() == Xv.cols(),
                    "relief_rows: the visited, hit and miss rows differ in shape");
            std::vector<double> w(static_cast<std::size_t>(Xv.cols()), 0.0);
            for (Index t = 0; t < Xv.rows(); ++t)
                relief_add(Xv.row(t).data(), H.row(t).data(), M.row(t).data(), Xv.cols(),
                           w.data());
            return to_numpy(w);
        },
        py::arg("X").noconvert(), py::arg("hits").noconvert(), py::arg("misses").noconvert());

    // ReliefF: acc += the contributions of the query tile's chosen neighbours that lie in the
    // reference tile (X rows).
    m.def(
        "tile_relieff_contributions",
        [](InMatrix<T> Q, Index q0, InCodes qcodes, InMatrix<T> R, Index r0,
           const InArray<Index>& idx, const InArray<int>& count, int k, Index n_classes,
           const InArray<double>& inv_range, const InArray<double>& acc) {
            const py::ssize_t slots = Q.rows() * n_classes;
            require(k >= 1 && n_classes >= 1, "n_neighbors and n_classes must be >= 1");
            require(idx.size() == slots * k && count.size() == slots,
                    "idx, count: wrong number of entries");
            require(inv_range.size() == Q.cols() && qcodes.size() == Q.rows(),
                    "inv_range, qcodes: wrong number of entries");
            auto out = fresh(acc, Q.cols(), "acc");
            double* o = out.mutable_data();
            run_released([&] {
                tile_relieff_contributions(MatrixRef<T>(Q), q0, qcodes, MatrixRef<T>(R), r0,
                                           idx.data(), count.data(), k, n_classes,
                                           inv_range.data(), o);
                return 0;
            });
            return out;
        },
        py::arg("Q").noconvert(), py::arg("q0"), py::arg("qcodes").noconvert(),
        py::arg("R").noconvert(), py::arg("r0"), py::arg("idx"), py::arg("count"),
        py::arg("n_neighbors"), py::arg("n_classes"), py::arg("inv_range"), py::arg("acc"));
}

void register_tiles(py::module_& m) {
    register_tiles_of<double>(m);
    register_tiles_of<float>(m);

    // ReliefF: the k nearest of every class (idx, dist: q x C x k; count: q x C) merged with
    // the reference tile, Manhattan distance on min-max scaled rows.
    m.def(
        "tile_k_nearest_per_class",
        [](InMatrix<double> Q, Index q0, InMatrix<double> R, Index r0, InCodes rcodes, int k,
           Index n_classes, const InArray<Index>& idx, const InArray<double>& dist,
           const InArray<int>& count, int n_threads) {
            require(k >= 1 && n_classes >= 1, "n_neighbors and n_classes must be >= 1");
            const py::ssize_t slots = Q.rows() * n_classes;
            auto i = fresh(idx, slots * k, "idx");
            auto d = fresh(dist, slots * k, "dist");
            auto c = fresh(count, slots, "count");
            Index* ip = i.mutable_data();
            double* dp = d.mutable_data();
            int* cp = c.mutable_data();
            for (py::ssize_t s = 0; s < slots; ++s)
                require(cp[s] >= 0 && cp[s] <= k, "count: entries must lie in [0, n_neighbors]");
            run_released([&] {
                tile_k_nearest_per_class(MatrixRef<double>(Q), q0, MatrixRef<double>(R), r0,
                                         rcodes, k, n_classes, ip, dp, cp, n_threads);
                return 0;
            });
            return py::make_tuple(i, d, c);
        },
        py::arg("Q").noconvert(), py::arg("q0"), py::arg("R").noconvert(), py::arg("r0"),
        py::arg("rcodes").noconvert(), py::arg("n_neighbors"), py::arg("n_classes"),
        py::arg("idx"), py::arg("dist"), py::arg("count"), py::arg("n_threads"));

    // SURF's threshold from column blocks of the scaled X (every row of each column): the
    // columns' pair sums and their mean over the pairs, as one machine computes them.
    m.def(
        "column_pair_sums",
        [](InMatrix<double> Z) {
            py::array_t<double> out(static_cast<py::ssize_t>(Z.cols()));
            double* o = out.mutable_data();
            run_released([&] {
                std::vector<double> col(static_cast<std::size_t>(Z.rows()));
                for (Index f = 0; f < Z.cols(); ++f) {
                    for (Index i = 0; i < Z.rows(); ++i)
                        col[static_cast<std::size_t>(i)] = Z(i, f);
                    o[f] = detail::column_pair_sum(col);
                }
                return 0;
            });
            return out;
        },
        py::arg("Z").noconvert());
    m.def(
        "mean_from_column_sums",
        [](const InArray<double>& sums, Index m_rows) {
            std::vector<double> v(sums.data(), sums.data() + sums.size());
            return detail::mean_from_column_sums(v, m_rows);
        },
        py::arg("sums"), py::arg("m"));

    // MultiSURF's running sums: sum += d(i, j) (mean None) or (d(i, j) - mean_i)^2.
    m.def(
        "tile_distance_sums",
        [](InMatrix<double> Q, Index q0, InMatrix<double> R, Index r0,
           std::optional<InArray<double>> mean, const InArray<double>& sum, int n_threads) {
            const double* mp = optional_data(mean, Q.rows(), "mean");
            auto out = fresh(sum, Q.rows(), "sum");
            double* o = out.mutable_data();
            run_released([&] {
                tile_distance_sums(MatrixRef<double>(Q), q0, MatrixRef<double>(R), r0, mp, o,
                                   n_threads);
                return 0;
            });
            return out;
        },
        py::arg("Q").noconvert(), py::arg("q0"), py::arg("R").noconvert(), py::arg("r0"),
        py::arg("mean"), py::arg("sum"), py::arg("n_threads"));

    m.def(
        "tile_radius_counts",
        [](InMatrix<double> Q, Index q0, InMatrix<double> R, Index r0, InCodes rcodes,
           const InArray<double>& near_t, std::optional<InArray<double>> far_t, Index n_classes,
           const InArray<Index>& near_count, const InArray<Index>& far_count, int n_threads) {
            const RadiusTiles rule = radius_rule(Q.rows(), near_t, far_t);
            auto a = fresh(near_count, Q.rows() * n_classes, "near_count");
            auto b = fresh(far_count, Q.rows() * n_classes, "far_count");
            Index* ap = a.mutable_data();
            Index* bp = b.mutable_data();
            run_released([&] {
                tile_radius_counts(MatrixRef<double>(Q), q0, MatrixRef<double>(R), r0, rcodes,
                                   rule, n_classes, ap, bp, n_threads);
                return 0;
            });
            return py::make_tuple(a, b);
        },
        py::arg("Q").noconvert(), py::arg("q0"), py::arg("R").noconvert(), py::arg("r0"),
        py::arg("rcodes").noconvert(), py::arg("near_t"), py::arg("far_t"),
        py::arg("n_classes"), py::arg("near_count"), py::arg("far_count"),
        py::arg("n_threads"));

    // The class coefficients (q x 2 x C: near, far) and constant terms of the query samples.
    m.def(
        "radius_coefficients",
        [](InCodes qcodes, bool with_far, bool far_complement, Index n_classes,
           const InArray<Index>& near_count, const InArray<Index>& far_count) {
            const Index q = qcodes.size();
            require(near_count.size() == q * n_classes && far_count.size() == q * n_classes,
                    "near_count, far_count: wrong number of entries");
            py::array_t<double> coef({static_cast<py::ssize_t>(q), py::ssize_t{2},
                                      static_cast<py::ssize_t>(n_classes)});
            py::array_t<double> constant(static_cast<py::ssize_t>(q));
            radius_coefficients(qcodes, with_far, far_complement, n_classes, near_count.data(),
                                far_count.data(), coef.mutable_data(), constant.mutable_data());
            return py::make_tuple(coef, constant);
        },
        py::arg("qcodes").noconvert(), py::arg("with_far"), py::arg("far_complement"),
        py::arg("n_classes"), py::arg("near_count"), py::arg("far_count"));

    m.def(
        "tile_radius_contributions",
        [](InMatrix<double> Q, Index q0, InMatrix<double> R, Index r0, InCodes rcodes,
           const InArray<double>& near_t, std::optional<InArray<double>> far_t, Index n_classes,
           const InArray<double>& coef, const InArray<double>& acc, int n_threads) {
            require(coef.size() == Q.rows() * 2 * n_classes, "coef: wrong number of entries");
            const RadiusTiles rule = radius_rule(Q.rows(), near_t, far_t);
            auto out = fresh(acc, Q.rows() * Q.cols(), "acc");
            double* o = out.mutable_data();
            run_released([&] {
                tile_radius_contributions(MatrixRef<double>(Q), q0, MatrixRef<double>(R), r0,
                                          rcodes, rule, n_classes, coef.data(), o, n_threads);
                return 0;
            });
            return out;
        },
        py::arg("Q").noconvert(), py::arg("q0"), py::arg("R").noconvert(), py::arg("r0"),
        py::arg("rcodes").noconvert(), py::arg("near_t"), py::arg("far_t"),
        py::arg("n_classes"), py::arg("coef"), py::arg("acc"), py::arg("n_threads"));
}

}  // namespace

void register_distributed(py::module_& m) {
    register_tiles(m);
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
