// Simba's neighbour search stays the exhaustive float64 scan's: the prefix screen for
// concentrated weights (NeighbourFinder::query_prefix) against a plain float64 scan on data
// with ties, duplicate rows and near-ties; whole Simba passes (which switch between the prefix
// screen and the full one as the weights concentrate) against the algorithm written out with
// that scan; and the exact shortcuts of the step (max_entry, the power-of-two scaling of the
// screen weights) against their plain definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "fastfs/weights/simba.hpp"
#include "reference.hpp"

namespace {

using fastfs::HitMiss;
using fastfs::Index;
using fastfs_test::Codes;
using fastfs_test::Family;
using fastfs_test::Gen;
using fastfs_test::Mat;

// The exhaustive float64 scan: every other sample's distance from the exact kernel, the lower
// index winning among equal distances.
template <class T>
HitMiss scan(const Mat<T>& X, const Codes& codes, const std::vector<double>& w2, Index i) {
    HitMiss best;
    const Index n = X.cols();
    for (Index j = 0; j < X.rows(); ++j) {
        if (j == i) continue;
        double d[4];
        const T* z = X.row(j).data();
        fastfs::WeightedL2<T>::exact4(X.row(i).data(), z, z, z, z, w2.data(), n, d);
        best.offer(d[0], j, codes[j] == codes[i]);
    }
    return best;
}

// Weights concentrated on a few features (most of the weight in the first ~n/16), the rest
// decaying, some exactly zero.
std::vector<double> concentrated(Index n, std::uint64_t seed) {
    Gen g(seed);
    std::vector<double> w2(static_cast<std::size_t>(n));
    for (Index f = 0; f < n; ++f) {
        const double v = std::exp(-static_cast<double>((f * 7) % n) / 6.0) * (0.5 + g.uniform());
        w2[static_cast<std::size_t>(f)] = f % 11 == 5 ? 0.0 : v;
    }
    return w2;
}

// Sample i's query_prefix() answer (which must apply; the scratch prepared for w2) equals the
// scan's.
template <class T>
void prefix_query_matches(const fastfs::NeighbourFinder<T>& finder, const Mat<T>& X,
                          const Codes& codes, const std::vector<double>& w2, Index i,
                          typename fastfs::NeighbourFinder<T>::Scratch& s,
                          typename fastfs::NeighbourFinder<T>::PrefixState& st) {
    HitMiss got;
    ASSERT_TRUE(finder.query_prefix(i, w2.data(), s, st, 1, got)) << "sample " << i;
    const HitMiss want = scan(X, codes, w2, i);
    EXPECT_EQ(got.hit, want.hit) << "sample " << i;
    EXPECT_EQ(got.miss, want.miss) << "sample " << i;
    EXPECT_EQ(got.hit_d, want.hit_d);
    EXPECT_EQ(got.miss_d, want.miss_d);
}

// Every sample's query_prefix() answer equals the scan's.
template <class T>
void prefix_queries_match(const fastfs::NeighbourFinder<T>& finder, const Mat<T>& X,
                          const Codes& codes, const std::vector<double>& w2) {
    typename fastfs::NeighbourFinder<T>::Scratch s;
    typename fastfs::NeighbourFinder<T>::PrefixState st;
    finder.prepare(w2.data(), s);
    for (Index i = 0; i < X.rows(); ++i) prefix_query_matches(finder, X, codes, w2, i, s, st);
}

// fn(X, codes, finder) on each of four data families (ties, duplicate rows, near-ties), m x n,
// in two classes.
template <class T, class Fn>
void on_families(Index m, Index n, std::uint64_t seed, Fn&& fn) {
    for (Family fam : {Family::continuous, Family::integers, Family::duplicates,
                       Family::near_ties}) {
        const Mat<T> X = fastfs_test::make_data(fam, m, n, seed).template cast<T>();
        const Codes codes = fastfs_test::make_codes(m, 2, seed + 1);
        fastfs::MatrixRef<T> Xr(X);
        fastfs::NeighbourFinder<T> finder(Xr, codes);
        fn(X, codes, finder);
    }
}

template <class T>
void prefix_queries_match_the_scan() {
    const Index m = 150, n = 160;
    for (Family fam : {Family::continuous, Family::integers, Family::duplicates,
                       Family::near_ties, Family::two_clusters}) {
        const Mat<T> X = fastfs_test::make_data(fam, m, n, 3).template cast<T>();
        const Codes codes = fastfs_test::make_codes(m, 3, 4);
        fastfs::MatrixRef<T> Xr(X);
        fastfs::NeighbourFinder<T> finder(Xr, codes);
        for (std::uint64_t seed : {1u, 2u}) {
            const std::vector<double> w2 = concentrated(n, seed);
            prefix_queries_match(finder, X, codes, w2);
        }
        // Weights on every feature alike: the prefix screen declines.
        const std::vector<double> flat(static_cast<std::size_t>(n), 1.0);
        typename fastfs::NeighbourFinder<T>::Scratch s;
        typename fastfs::NeighbourFinder<T>::PrefixState st;
        finder.prepare(flat.data(), s);
        HitMiss out;
        EXPECT_FALSE(finder.query_prefix(0, flat.data(), s, st, 1, out));
    }
}

// The prefix copy holds twice the prefix of the weights at its rebuild; weights that spread
// before the next rebuild ask for a longer prefix, which is cut to the copy (more samples go
// on to their full value). Query 0 under weights on about 4 features builds the copy, then the
// others come under weights on about 60 (still concentrated), and under weights on one
// feature, each against the scan.
template <class T>
void prefix_longer_than_the_copy_matches_the_scan() {
    const Index m = 150, n = 160;
    auto decaying = [&](double reach) {
        std::vector<double> w2(static_cast<std::size_t>(n));
        for (Index f = 0; f < n; ++f)
            w2[static_cast<std::size_t>(f)] = std::exp(-static_cast<double>((f * 37) % n) / reach);
        return w2;
    };
    on_families<T>(m, n, 13, [&](const Mat<T>& X, const Codes& codes,
                                 const fastfs::NeighbourFinder<T>& finder) {
        typename fastfs::NeighbourFinder<T>::Scratch s;
        typename fastfs::NeighbourFinder<T>::PrefixState st;
        const std::vector<double> narrow = decaying(1.5), wide = decaying(20.0),
                                  one = decaying(0.05);
        for (Index i = 0; i < 16; ++i) {  // queries 1 .. 16: one copy (rebuilt at the 17th)
            const std::vector<double>& w2 = i == 0 ? narrow : (i < 10 ? wide : one);
            finder.prepare(w2.data(), s);
            prefix_query_matches(finder, X, codes, w2, i, s, st);
        }
        EXPECT_LT(st.P.cols(), 32) << "the copy should hold a short prefix";
    });
}

// Few samples and classes of every size: a query alone in its class (no hit: no seed, no
// bound for that class), every sample its own class (no hit anywhere), two to four classes;
// m from 2 up.
template <class T>
void prefix_few_samples_match_the_scan() {
    const Index n = 160;
    for (Index m : {2, 3, 5, 9, 33}) {
        const Mat<T> X = fastfs_test::make_data(Family::integers, m, n, 40 + static_cast<std::uint64_t>(m))
                             .template cast<T>();
        fastfs::MatrixRef<T> Xr(X);
        for (int kind = 0; kind < 3; ++kind) {
            Codes codes(m);
            for (Index j = 0; j < m; ++j)
                codes[j] = kind == 0 ? (j == m / 2 ? 1 : 0) : kind == 1 ? j : j % 4;
            fastfs::NeighbourFinder<T> finder(Xr, codes);
            SCOPED_TRACE("m " + std::to_string(m) + ", kind " + std::to_string(kind));
            prefix_queries_match(finder, X, codes, concentrated(n, 3));
        }
    }
}

TEST(SimbaStep, PrefixWithFewSamplesMatchesTheScanFloat64Data) {
    prefix_few_samples_match_the_scan<double>();
}
TEST(SimbaStep, PrefixWithFewSamplesMatchesTheScanFloat32Data) {
    prefix_few_samples_match_the_scan<float>();
}

// Rows far from the origin with small differences (4096 + 0.001 k): converting them to
// float32 moves a distance by as much as the distances themselves, so the bounds lean on each
// pair's conversion radius (the norms of both rows), in the prefix screen and in halves.
template <class T>
void offset_rows_match_the_scan() {
    for (const Index n : {Index{160}, Index{2100}}) {
        const Index m = n > 1000 ? 48 : 150;
        const Mat<double> base = fastfs_test::make_data(Family::integers, m, n, 21);
        const Mat<T> X = (base.array() * 1e-3 + 4096.0).matrix().template cast<T>();
        const Codes codes = fastfs_test::make_codes(m, 2, 22);
        fastfs::MatrixRef<T> Xr(X);
        fastfs::NeighbourFinder<T> finder(Xr, codes);
        for (std::uint64_t seed : {1u, 2u}) {
            const std::vector<double> w2 =
                n > 1000 ? std::vector<double>(static_cast<std::size_t>(n), 1.0) : concentrated(n, seed);
            prefix_queries_match(finder, X, codes, w2);
        }
    }
}

TEST(SimbaStep, OffsetRowsMatchTheScanFloat64Data) { offset_rows_match_the_scan<double>(); }
TEST(SimbaStep, OffsetRowsMatchTheScanFloat32Data) { offset_rows_match_the_scan<float>(); }

TEST(SimbaStep, PrefixLongerThanTheCopyMatchesTheScanFloat64Data) {
    prefix_longer_than_the_copy_matches_the_scan<double>();
}
TEST(SimbaStep, PrefixLongerThanTheCopyMatchesTheScanFloat32Data) {
    prefix_longer_than_the_copy_matches_the_scan<float>();
}

// Spread weights on wide data (at least 2048 features): the screen splits the features in
// halves in their own order; the answers stay the scan's (ties, duplicate rows, near-ties, zero
// weights, mixed magnitudes of the weights).
template <class T>
void halves_match_the_scan() {
    const Index m = 48, n = 2100;
    on_families<T>(m, n, 5, [&](const Mat<T>& X, const Codes& codes,
                                const fastfs::NeighbourFinder<T>& finder) {
        Gen g(9);
        std::vector<double> spread(static_cast<std::size_t>(n));
        for (Index f = 0; f < n; ++f)
            spread[static_cast<std::size_t>(f)] = f % 13 == 3 ? 0.0 : (f % 7 == 1 ? 1e-30 : 0.5 + g.uniform());
        for (const std::vector<double>& w2 :
             {std::vector<double>(static_cast<std::size_t>(n), 1.0), spread}) {
            prefix_queries_match(finder, X, codes, w2);
        }
    });
}

TEST(SimbaStep, HalvesOfWideDataMatchTheFloat64ScanFloat64Data) { halves_match_the_scan<double>(); }
TEST(SimbaStep, HalvesOfWideDataMatchTheFloat64ScanFloat32Data) { halves_match_the_scan<float>(); }

TEST(SimbaStep, PrefixScreenMatchesTheFloat64ScanFloat64Data) { prefix_queries_match_the_scan<double>(); }
TEST(SimbaStep, PrefixScreenMatchesTheFloat64ScanFloat32Data) { prefix_queries_match_the_scan<float>(); }

// Simba written from its definition (SPEC 2.5) with the exhaustive scan.
template <class T>
std::vector<double> simba_by_hand(const Mat<T>& X, const Codes& codes,
                                  const std::vector<Index>& order) {
    const Index n = X.cols();
    std::vector<double> w(static_cast<std::size_t>(n), 1.0), w2(w.size());
    for (Index s : order) {
        double top = 0.0;
        for (double x : w) top = std::max(top, std::abs(x));
        int k = 0;
        std::frexp(top, &k);
        const double down = std::ldexp(1.0, -k), up = 1.0 / down;
        for (std::size_t f = 0; f < w.size(); ++f) w2[f] = (w[f] * down) * (w[f] * down);
        const HitMiss hm = scan(X, codes, w2, s);
        if (hm.hit < 0 || hm.miss < 0) continue;
        const double dh = std::sqrt(hm.hit_d), dm = std::sqrt(hm.miss_d);
        const double half_slope = 0.5 * 1.0;  // linear utility
        (void)up;
        const double inv_m = dm > 0.0 ? 1.0 / dm : 0.0, inv_h = dh > 0.0 ? 1.0 / dh : 0.0;
        for (Index f = 0; f < n; ++f) {
            const double a = static_cast<double>(X(s, f)) - static_cast<double>(X(hm.miss, f));
            const double b = static_cast<double>(X(s, f)) - static_cast<double>(X(hm.hit, f));
            auto& wf = w[static_cast<std::size_t>(f)];
            wf += half_slope * (a * a * inv_m - b * b * inv_h) * (wf * down);
        }
    }
    return w;
}

template <class T>
void passes_match_the_definition() {
    const Index m = 240, n = 96;
    for (Family fam : {Family::continuous, Family::integers, Family::duplicates}) {
        Mat<double> X = fastfs_test::make_data(fam, m, n, 9);
        Codes codes(m);
        // Labels from the first three features: Simba's weights concentrate on them.
        for (Index i = 0; i < m; ++i) codes[i] = X(i, 0) + X(i, 1) - X(i, 2) > 0.0 ? 1 : 0;
        const Mat<T> Xt = X.template cast<T>();
        fastfs::MatrixRef<T> Xr(Xt);
        fastfs::SimbaOptions opt;
        opt.n_threads = 1;
        Gen g(17);
        for (int pass = 0; pass < 3; ++pass)
            for (Index t = 0; t < m; ++t) opt.sample_order.push_back(g.below(m));
        fastfs::Simba<T> simba(Xr, codes, opt);
        const std::vector<double> got = simba.run().raw;
        const std::vector<double> want = simba_by_hand(Xt, codes, opt.sample_order);
        ASSERT_EQ(got.size(), want.size());
        for (std::size_t f = 0; f < got.size(); ++f) EXPECT_EQ(got[f], want[f]) << "feature " << f;
    }
}

TEST(SimbaStep, PassesMatchTheDefinitionWithTheFloat64ScanFloat64Data) { passes_match_the_definition<double>(); }
TEST(SimbaStep, PassesMatchTheDefinitionWithTheFloat64ScanFloat32Data) { passes_match_the_definition<float>(); }

// Steps that leave w unchanged (data so small that the linear step is below the rounding of
// w, or a sample without a hit) let the following steps share one pass over X: four queries
// at once, then every sample from one blocked Gram pass while the weights stand still. The
// answers must be the exhaustive scan's, also when the weights move again after a shared pass
// (a scale where some steps round to no change and others do not, a class of one sample).
template <class T>
void still_weights_share_passes() {
    const Index m = 120, n = 72;
    for (double scale : {1.0, 0x1.0p-56, 1e-30}) {
        for (Family fam : {Family::continuous, Family::duplicates}) {
            const Mat<double> X = fastfs_test::make_data(fam, m, n, 5) * scale;
            Codes codes(m);
            for (Index i = 0; i < m; ++i) codes[i] = X(i, 0) + X(i, 1) > 0.0 ? 1 : 0;
            codes[7] = 2;  // no hit: its steps change nothing
            const Mat<T> Xt = X.template cast<T>();
            fastfs::MatrixRef<T> Xr(Xt);
            fastfs::SimbaOptions opt;
            opt.n_threads = 1;
            Gen g(23);
            for (int pass = 0; pass < 3; ++pass)
                for (Index t = 0; t < m; ++t) opt.sample_order.push_back(t % 9 == 0 ? 7 : g.below(m));
            fastfs::Simba<T> simba(Xr, codes, opt);
            const std::vector<double> got = simba.run().raw;
            const std::vector<double> want = simba_by_hand(Xt, codes, opt.sample_order);
            ASSERT_EQ(got.size(), want.size());
            for (std::size_t f = 0; f < got.size(); ++f)
                EXPECT_EQ(got[f], want[f]) << "scale " << scale << ", feature " << f;
        }
    }
}

TEST(SimbaStep, StillWeightsSharePassesFloat64Data) { still_weights_share_passes<double>(); }
TEST(SimbaStep, StillWeightsSharePassesFloat32Data) { still_weights_share_passes<float>(); }

TEST(SimbaStep, MaxEntryIsTheLoopOfStdMax) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> x = {-3.0, 1.0, nan, 2.5, -0.0, 1e-320, -7.0, 4.0, nan, 0.5, 6.0, -6.5, 1.0};
    for (std::size_t len = 0; len <= x.size(); ++len) {
        double top = 0.0, abs_top = 0.0;
        for (std::size_t f = 0; f < len; ++f) {
            top = std::max(top, x[f]);
            abs_top = std::max(abs_top, std::abs(x[f]));
        }
        EXPECT_EQ(fastfs::kernels::max_entry<false>(x.data(), static_cast<Index>(len)), top);
        EXPECT_EQ(fastfs::kernels::max_entry<true>(x.data(), static_cast<Index>(len)), abs_top);
    }
    x.push_back(-inf);
    EXPECT_EQ(fastfs::kernels::max_entry<true>(x.data(), static_cast<Index>(x.size())), inf);
}

// The screen weights are w2 * 2^-e (e the exponent of the largest), flushed below 2^-100: the
// product with an exact power of two gives ldexp's bits, at every scale.
TEST(SimbaStep, ScreenWeightsAreTheLdexpScaling) {
    const Index m = 4, n = 80;
    Mat<double> X = fastfs_test::make_data(Family::continuous, m, n, 1);
    fastfs::MatrixRef<double> Xr(X);
    fastfs::NeighbourIndex<double> index(Xr, 64, 1e15, true);
    for (int top_exp : {-1074, -1060, -1022, -900, -3, 0, 5, 900, 1022, 1023}) {
        std::vector<double> w2(static_cast<std::size_t>(n));
        Gen g(static_cast<std::uint64_t>(top_exp + 2000));
        for (Index f = 0; f < n; ++f)
            w2[static_cast<std::size_t>(f)] = std::ldexp(g.uniform(), top_exp - static_cast<int>(f % 40));
        w2[0] = std::ldexp(1.5, top_exp);
        if (top_exp == 1023) w2[0] = std::ldexp(1.0, 1023);
        fastfs::WeightedL2<double> metric;
        metric.prepare(index, w2.data());
        ASSERT_TRUE(metric.on);
        const int e = std::ilogb(w2[0]);
        for (Index f = 0; f < n; ++f) {
            const double v = std::ldexp(w2[static_cast<std::size_t>(f)], -e);
            const float want = v < fastfs::WeightedL2<double>::kFlush ? 0.0f : static_cast<float>(v);
            EXPECT_EQ(metric.w2s[static_cast<std::size_t>(f)], want) << top_exp << " " << f;
        }
    }
}

}  // namespace
