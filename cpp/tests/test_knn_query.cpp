// KnnQuery (neighbours/knn_query.hpp): the k nearest other samples of a sample under a weighted
// squared distance, exact (float32 screen of an expanded distance plus float64 refinement),
// nearest first, equal distances to the lower index, never the sample itself; against a brute
// force scan in long double. Also the reweighting path RGS takes (one scratch prepared again
// under new weights: features refreshed or carried within bounds). Each with both copies of X
// the screen can read: half precision (on CPUs with F16C) and float32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "fastfs/neighbours/knn_query.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

// The screen's copies of X: the default (half precision where the CPU converts it) and float32.
constexpr fastfs::GramCopy kCopies[] = {fastfs::GramCopy::kAuto, fastfs::GramCopy::kFloat32};
std::string copy_name(fastfs::GramCopy c) { return c == fastfs::GramCopy::kAuto ? "default copy" : "float32 copy"; }

template <class T>
::testing::AssertionResult same_k_nearest(const Mat<T>& X, const std::vector<double>& w2, Index i,
                                          int k, int count, const Index* idx, const double* dist) {
    const auto ref = ref_k_nearest(X.rows(), i, k, [&](Index j) { return sq_distance(X, w2, i, j); });
    if (count != static_cast<int>(ref.size()))
        return ::testing::AssertionFailure() << "sample " << i << ": " << count << " neighbours, expected " << ref.size();
    for (int r = 0; r < count; ++r) {
        const long double want = ref[static_cast<std::size_t>(r)].first;
        const long double err = std::fabs(static_cast<long double>(dist[r]) - want);
        if (idx[r] != ref[static_cast<std::size_t>(r)].second || err > 1e-12L * want + 1e-300L) {
            std::ostringstream got, exp;
            for (int q = 0; q < count; ++q) {
                got << idx[q] << " ";
                exp << ref[static_cast<std::size_t>(q)].second << " ";
            }
            return ::testing::AssertionFailure()
                   << "sample " << i << ", rank " << r << ": neighbour " << idx[r] << " at " << dist[r]
                   << ", expected " << ref[static_cast<std::size_t>(r)].second << " at "
                   << static_cast<double>(want) << "\n  got      " << got.str() << "\n  expected " << exp.str();
        }
    }
    return ::testing::AssertionSuccess();
}

// Every sample's k nearest through all_k_nearest (1 and 2 threads) and through single
// queries, with both copies of X, checked against the reference; at most a few failures
// reported per copy.
template <class T>
void check_all(const Mat<T>& X, const std::vector<double>& w2, int k, const std::string& label) {
    for (fastfs::GramCopy copy : kCopies) {
    SCOPED_TRACE(label + ", k " + std::to_string(k) + ", " + copy_name(copy));
    const fastfs::KnnQuery<T> q(X, copy);
    const Index m = X.rows();
    const int kk = static_cast<int>(std::min<Index>(k, m - 1));
    std::vector<Index> idx;
    std::vector<double> dist;
    for (int threads : {1, 2}) {
        fastfs::all_k_nearest(q, w2.data(), kk, threads, idx, dist);
        int failures = 0;
        for (Index i = 0; i < m && failures < 3; ++i) {
            const auto ok = same_k_nearest(X, w2, i, kk, kk, idx.data() + i * kk, dist.data() + i * kk);
            if (!ok) {
                ++failures;
                ADD_FAILURE() << "all_k_nearest, " << threads << " threads: " << ok.message();
            }
        }
    }
    typename fastfs::KnnQuery<T>::Scratch s;
    q.prepare(w2.data(), s);
    std::vector<Index> one(static_cast<std::size_t>(k) + 1);
    std::vector<double> d(static_cast<std::size_t>(k) + 1);
    int failures = 0;
    for (Index i = 0; i < m && failures < 3; ++i) {
        const int count = q.query(i, w2.data(), k, s, 2, one.data(), d.data());
        const auto ok = same_k_nearest(X, w2, i, k, count, one.data(), d.data());
        if (!ok) {
            ++failures;
            ADD_FAILURE() << "query: " << ok.message();
        }
    }
    }
}

// Sample 0's k nearest through query(), with both copies, against the reference.
void expect_first_queries_exact(const Mat<double>& X, const std::vector<double>& w2, int k,
                                const std::string& label) {
    for (fastfs::GramCopy copy : kCopies) {
        const fastfs::KnnQuery<double> q(X, copy);
        typename fastfs::KnnQuery<double>::Scratch s;
        q.prepare(w2.data(), s);
        std::vector<Index> idx(static_cast<std::size_t>(k));
        std::vector<double> dist(static_cast<std::size_t>(k));
        const int count = q.query(0, w2.data(), k, s, 1, idx.data(), dist.data());
        EXPECT_TRUE(same_k_nearest(X, w2, 0, k, count, idx.data(), dist.data()))
            << label << ", " << copy_name(copy);
    }
}

}  // namespace

template <class T>
class KnnQueryTest : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(KnnQueryTest, Scalars);

// Data family x feature count (4: exhaustive path; 12 and 70: float32 screen) x weights x k.
TYPED_TEST(KnnQueryTest, KNearestEqualBruteForce) {
    using T = TypeParam;
    const Index m = 97;
    std::uint64_t seed = 200;
    for (Family family : kAllFamilies) {
        for (Index n : {4, 12, 70}) {
            const Mat<T> X = make_data(family, m, n, ++seed).cast<T>();
            for (Weights weights : kAllWeights) {
                const auto w2 = make_w2(weights, n, ++seed);
                for (int k : {1, 5}) {
                    std::ostringstream name;
                    name << "family " << static_cast<int>(family) << ", n " << n << ", weights "
                         << static_cast<int>(weights);
                    check_all(X, w2, k, name.str());
                }
            }
        }
    }
}

// Four queries screened in one sweep (query4(), which all_k_nearest uses): the same neighbours
// and exact distances, bit for bit, as one query() per sample, on sample counts that leave
// blocks of sixteen, of eight and single samples in the sweep, with ties and duplicate rows.
TYPED_TEST(KnnQueryTest, FourQueriesInOneSweepEqualOneAtATime) {
    using T = TypeParam;
    std::uint64_t seed = 900;
    for (Index m : {45, 64, 29}) {
        for (Family family : {Family::continuous, Family::integers, Family::duplicates}) {
            const Mat<T> X = make_data(family, m, 40, ++seed).cast<T>();
            const auto w2 = make_w2(Weights::with_zeros, 40, ++seed);
            const fastfs::MatrixRef<T> Xr(X);
            for (fastfs::GramCopy copy : kCopies) {
            const fastfs::KnnQuery<T> q(Xr, copy);
            const int k = 5;
            typename fastfs::KnnQuery<T>::Scratch s1, s4;
            q.prepare(w2.data(), s1);
            q.prepare(w2.data(), s4);
            for (Index i0 = 0; i0 + 4 <= m; i0 += 4) {
                Index ids[4], idx4[4][k], idx1[k];
                double dist4[4][k], dist1[k];
                Index* ip[4];
                double* dp[4];
                for (int r = 0; r < 4; ++r) {
                    ids[r] = (i0 * 7 + r * 5) % m;
                    ip[r] = idx4[r];
                    dp[r] = dist4[r];
                }
                q.query4(ids, 4, w2.data(), k, s4, ip, dp);
                for (int r = 0; r < 4; ++r) {
                    const int c = q.query(ids[r], w2.data(), k, s1, 1, idx1, dist1);
                    ASSERT_EQ(c, k);
                    EXPECT_TRUE(same_k_nearest(X, w2, ids[r], k, c, idx4[r], dist4[r]))
                        << "m " << m << ", family " << static_cast<int>(family);
                    for (int j = 0; j < k; ++j) {
                        EXPECT_EQ(idx4[r][j], idx1[j]) << "m " << m << ", sample " << ids[r];
                        EXPECT_EQ(dist4[r][j], dist1[j]) << "m " << m << ", sample " << ids[r];
                    }
                }
            }
            }
        }
    }
}

// k at least the number of other samples: every other sample, sorted.
TYPED_TEST(KnnQueryTest, KAboveTheSampleCountReturnsEveryOtherSample) {
    using T = TypeParam;
    const Mat<T> X = make_data(Family::duplicates, 20, 16, 5).cast<T>();
    check_all(X, make_w2(Weights::ones, 16, 6), 40, "k > m - 1");
}

// Enough samples for all_k_nearest to use two threads (m^2 64 >= 1e7).
TYPED_TEST(KnnQueryTest, ManySamplesOnTwoThreads) {
    using T = TypeParam;
    const Mat<T> X = make_data(Family::duplicates, 420, 24, 9).cast<T>();
    check_all(X, make_w2(Weights::with_zeros, 24, 10), 3, "420 samples");
}

// Extreme scales within the Python layer's rescaling contract, and mixed column scales.
TYPED_TEST(KnnQueryTest, ExtremeScalesWithinTheRescalingContract) {
    using T = TypeParam;
    const int edge = std::is_same<T, float>::value ? 40 : 200;
    const Index m = 80;
    std::uint64_t seed = 300;
    for (Index n : {4, 40}) {
        for (int e : exponents<T>()) {
            Mat<double> X = make_data(Family::continuous, m, n, ++seed);
            X *= std::ldexp(1.0, e);
            for (Weights weights : {Weights::ones, Weights::with_tiny})
                if (weights_fit(e, weights))
                    check_all<T>(X.cast<T>(), make_w2(weights, n, ++seed), 3, "scale 2^" + std::to_string(e));
        }
        Mat<double> X = make_data(Family::integers, m, n, ++seed);
        const Mat<double> small = make_data(Family::continuous, m, n, ++seed);
        for (Index f = 0; f < n; f += 2) X.col(f) = small.col(f) * std::ldexp(1.0, -edge);
        for (Weights weights : {Weights::ones, Weights::dyadic})
            check_all<T>(X.cast<T>(), make_w2(weights, n, ++seed), 3, "mixed column scales");
    }
}

// The blocked Gram screen (gram_knn.hpp), which all_k_nearest tries first: taken wherever it
// applies (two tiles, every family, weights with zeros and dyadic spreads, k from 1 to
// gram::kMaxK), each list the exhaustive scan's, with the automatic tiles and the 16-bit ones
// forced; k above kMaxK and fewer than gram::min_features() features decline.
template <class T>
void check_gram_lists(const Mat<T>& X, const std::vector<double>& w2, int k, int threads,
                      const std::string& label, Index* left = nullptr,
                      fastfs::gram::TileProduct product = fastfs::gram::TileProduct::automatic) {
    SCOPED_TRACE(label + ", k " + std::to_string(k) + ", " + std::to_string(threads) + " threads" +
                 (product == fastfs::gram::TileProduct::dense16 ? ", 16-bit tiles" : ""));
    const Index m = X.rows();
    std::vector<Index> idx(static_cast<std::size_t>(m * k));
    std::vector<double> dist(static_cast<std::size_t>(m * k));
    std::vector<Index> rest;
    ASSERT_TRUE(fastfs::gram_k_nearest(fastfs::MatrixRef<T>(X), w2.data(), k, threads, idx.data(),
                                       dist.data(), rest, {}, product));
    if (left) *left = static_cast<Index>(rest.size());
    int failures = 0;
    for (Index i = 0; i < m && failures < 3; ++i) {
        if (std::find(rest.begin(), rest.end(), i) != rest.end()) continue;
        const auto ok = same_k_nearest(X, w2, i, k, k, idx.data() + i * k, dist.data() + i * k);
        if (!ok) {
            ++failures;
            ADD_FAILURE() << ok.message();
        }
    }
}

TYPED_TEST(KnnQueryTest, GramScreenListsEqualBruteForce) {
    using T = TypeParam;
    const Index m = 100, n = fastfs::gram::kMinFeatures;
    std::uint64_t seed = 900;
    for (Family family : kAllFamilies) {
        const Mat<T> X = make_data(family, m, n, ++seed).cast<T>();
        for (Weights weights : {Weights::ones, Weights::with_zeros, Weights::dyadic}) {
            const auto w2 = make_w2(weights, n, ++seed);
            for (int k : {1, 4, 17, fastfs::gram::kMaxK}) {
                std::ostringstream name;
                name << family_name(family) << ", " << weights_name(weights);
                check_gram_lists(X, w2, k, 1, name.str());
                // The 16-bit tiles forced (float32 ones on CPUs without AVX-512 VNNI).
                check_gram_lists(X, w2, k, 1, name.str(), nullptr,
                                 fastfs::gram::TileProduct::dense16);
            }
        }
    }
    // Scales far from 1 (the screen rescales by powers of two), and weights spread over
    // twenty orders of magnitude.
    const int edge = std::is_same<T, float>::value ? 40 : 300;
    for (int e : {-edge, edge}) {
        const Mat<T> X = (make_data(Family::near_ties, m, n, 11) * std::ldexp(1.0, e)).cast<T>();
        check_gram_lists(X, make_w2(Weights::with_tiny, n, 12), 6, 1,
                         "scale 2^" + std::to_string(e));
    }
    const Mat<T> X = make_data(Family::continuous, m, n, 7).cast<T>();
    const auto w2 = make_w2(Weights::ones, n, 8);
    std::vector<Index> idx(static_cast<std::size_t>(m * 40)), rest;
    std::vector<double> dist(idx.size());
    EXPECT_FALSE(fastfs::gram_k_nearest(fastfs::MatrixRef<T>(X), w2.data(),
                                        fastfs::gram::kMaxK + 1, 1, idx.data(), dist.data(),
                                        rest));
    // Below the feature counts where the row query wins: kMinFeatures, or with one thread on
    // a CPU with the 16-bit tiles kMinFeaturesOneThread16.
    const Mat<T> narrow = make_data(Family::continuous, m, n - 1, 9).cast<T>();
    EXPECT_FALSE(fastfs::gram_k_nearest(fastfs::MatrixRef<T>(narrow), w2.data(), 3, 2, idx.data(),
                                        dist.data(), rest));
    const Index one = fastfs::gram::min_features(1);
    EXPECT_EQ(one, fastfs::kernels::cpu_has_avx512_vnni() ? fastfs::gram::kMinFeaturesOneThread16
                                                           : fastfs::gram::kMinFeatures);
    const Mat<T> narrow1 = make_data(Family::continuous, m, one - 1, 9).cast<T>();
    EXPECT_FALSE(fastfs::gram_k_nearest(fastfs::MatrixRef<T>(narrow1), w2.data(), 3, 1,
                                        idx.data(), dist.data(), rest));
    const Mat<T> wide1 = make_data(Family::continuous, m, one, 9).cast<T>();
    EXPECT_TRUE(fastfs::gram_k_nearest(fastfs::MatrixRef<T>(wide1), w2.data(), 3, 1,
                                       idx.data(), dist.data(), rest));
}

// A tight group of 12% of the samples that the 16-bit tiles' probe misses (see the test of the
// same name in test_gram_screen.cpp): the 16-bit screen overflows (652 of 1024 samples left to
// the row query when nothing stops it) and gives way to float32 tiles, leaving no more samples
// than they do; the lists are the exhaustive scan's.
TEST(KnnQueryGram, SixteenBitTilesThatOverflowGiveWayToFloat32) {
    const Index m = 1024, n = 400, group = 122;  // n = kMinFeatures: any CPU, one thread
    Gen g(93);
    Mat<double> X(m, n);
    for (Index i = 0; i < m; ++i)
        for (Index f = 0; f < n; ++f)
            X(i, f) = i >= 1 && i <= group ? (f % 2 ? 2.0 : -2.0) + 0.01 * g.normal() : g.normal();
    const std::vector<double> w2(static_cast<std::size_t>(n), 1.0);
    Index left32 = -1;
    check_gram_lists(X, w2, 10, 1, "tight group, float32 tiles", &left32,
                     fastfs::gram::TileProduct::dense);
    for (auto product : {fastfs::gram::TileProduct::automatic, fastfs::gram::TileProduct::dense16}) {
        Index left = -1;
        check_gram_lists(X, w2, 10, 1, "tight group", &left, product);
        EXPECT_LE(left, left32);
    }
}

// Enough work for two threads in the Gram screen (m^2 n >= 2^26): the same lists as one thread,
// bit for bit, and the exhaustive scan's.
TEST(KnnQueryGram, TwoThreadsEqualOneAndBruteForce) {
    const Index m = 420, n = 400;
    for (Family family : {Family::continuous, Family::duplicates}) {
        const Mat<double> X = make_data(family, m, n, 31 + static_cast<int>(family));
        const auto w2 = make_w2(Weights::with_zeros, n, 32);
        const int k = 10;
        std::vector<Index> i1(static_cast<std::size_t>(m * k)), i2(i1.size()), r1, r2;
        std::vector<double> d1(i1.size()), d2(i1.size());
        const fastfs::MatrixRef<double> Xr(X);
        ASSERT_TRUE(fastfs::gram_k_nearest(Xr, w2.data(), k, 1, i1.data(), d1.data(), r1));
        ASSERT_TRUE(fastfs::gram_k_nearest(Xr, w2.data(), k, 2, i2.data(), d2.data(), r2));
        ASSERT_TRUE(r1.empty() && r2.empty());
        EXPECT_EQ(i1, i2);
        EXPECT_EQ(d1, d2);
        check_gram_lists(X, w2, k, 2, family_name(family));
    }
}

// Rows that are copies of three distinct rows: every sample has about m / 3 samples at
// distance 0, so the candidate lists and the spill area overflow; those samples go back to
// the row query (all_k_nearest then answers them), and the rest stay exact.
TEST(KnnQueryGram, OverflowingListsGoToTheRowQuery) {
    const Index m = 600, n = fastfs::gram::kMinFeatures;
    const Mat<double> base = make_data(Family::continuous, 3, n, 41);
    Mat<double> X(m, n);
    for (Index i = 0; i < m; ++i) X.row(i) = base.row(i % 3);
    const auto w2 = make_w2(Weights::ones, n, 42);
    Index left = 0;
    check_gram_lists(X, w2, 5, 1, "three distinct rows", &left);
    EXPECT_GT(left, 0);
    check_all(X, w2, 5, "three distinct rows");
}

// RGS's pattern: one scratch prepared again and again under changing weights. Small moves
// are carried within the bounds, large ones refresh a feature, weights go to 0 and back, and
// down to 1e-20.
TYPED_TEST(KnnQueryTest, ReweightingOneScratchStaysExact) {
    using T = TypeParam;
    const Index m = 150, n = 40;
    for (Family family : {Family::continuous, Family::integers, Family::near_ties, Family::two_clusters}) {
        const Mat<T> X = make_data(family, m, n, 400 + static_cast<int>(family)).cast<T>();
        for (fastfs::GramCopy copy : kCopies) {
        const fastfs::KnnQuery<T> q(X, copy);
        typename fastfs::KnnQuery<T>::Scratch s;
        Gen g(17);
        std::vector<double> w(static_cast<std::size_t>(n));
        for (auto& v : w) v = 0.5 + g.uniform();
        const int k = 4;
        Index idx[k];
        double dist[k];
        for (int step = 0; step < 40; ++step) {
            // Move a few weights: tiny drift, large factors, to zero, back, to 1e-20.
            for (int moves = 0; moves < 5; ++moves) {
                auto& v = w[static_cast<std::size_t>(g.below(n))];
                switch (g.below(6)) {
                    case 0: v *= 1.0 + 0.005 * (g.uniform() - 0.5); break;
                    case 1: v *= 1.5; break;
                    case 2: v *= 0.3; break;
                    case 3: v = 0.0; break;
                    case 4: v = 0.5 + g.uniform(); break;
                    case 5: v = 1e-20; break;
                }
            }
            std::vector<double> w2(w.size());
            for (std::size_t f = 0; f < w.size(); ++f) w2[f] = w[f] * w[f];
            q.prepare(w2.data(), s);
            for (Index i = step % 3; i < m; i += 7) {
                const int count = q.query(i, w2.data(), k, s, 1, idx, dist);
                ASSERT_TRUE(same_k_nearest(X, w2, i, k, count, idx, dist))
                    << "family " << static_cast<int>(family) << ", step " << step << ", "
                    << copy_name(copy);
            }
        }
        }
    }
}

// A row long enough (m n >= 2^22) for query() to split its float32 pass over threads.
TEST(KnnQueryLongRow, RowSplitOverThreadsEqualsBruteForce) {
    const Index m = 32771, n = 128;
    const Mat<float> X = make_data(Family::integers, m, n, 21).cast<float>();
    const auto w2 = make_w2(Weights::with_zeros, n, 22);
    const fastfs::KnnQuery<float> q(X);
    typename fastfs::KnnQuery<float>::Scratch s;
    q.prepare(w2.data(), s);
    const int k = 3;
    Index idx[k];
    double dist[k];
    for (Index i : {Index{0}, Index{16384}, Index{32770}}) {
        for (int threads : {1, 2, 3}) {
            const int count = q.query(i, w2.data(), k, s, threads, idx, dist);
            EXPECT_TRUE(same_k_nearest(X, w2, i, k, count, idx, dist)) << threads << " threads";
        }
    }
}

// The construction that defeated NeighbourFinder's bound (squared weights below float32's
// normal range, rounded by a third when converted), for this screen: sample 2 is truly
// nearest, float32 sees it 1.2 times farther than sample 1.
TEST(KnnQueryBounds, SubnormalFloat32WeightsKeepTheTrueNearest) {
    const Index m = 6, n = 64;
    Mat<double> X = Mat<double>::Zero(m, n);
    const double E = 1e6, w2_tiny = 1.05e-45, w2_top = 1e-34;
    X(1, 0) = std::sqrt(1.1 * static_cast<double>(n - 1) * w2_tiny * E * E / w2_top);
    for (Index f = 1; f < n; ++f) X(2, f) = E;
    for (Index i = 3; i < m; ++i) X.row(i).setConstant(1e8);
    std::vector<double> w2(static_cast<std::size_t>(n), w2_tiny);
    w2[0] = w2_top;
    // (1e8 exceeds nothing here: the screen runs up to max |x| = 1e9.)
    expect_first_queries_exact(X, w2, 2, "subnormal float32 weights");
}

// The distance KnnQuery documents, bit for bit: sum_f w2[f] (x_if - x_jf)^2 in float64, added
// in feature order; the k nearest by (that value, index).
template <class T>
std::vector<std::pair<double, Index>> feature_order_k_nearest(const Mat<T>& X, const std::vector<double>& w2,
                                                              Index i, int k) {
    std::vector<std::pair<double, Index>> all;
    for (Index j = 0; j < X.rows(); ++j) {
        if (j == i) continue;
        double d = 0.0;
        for (Index f = 0; f < X.cols(); ++f) {
            const double t = static_cast<double>(X(i, f)) - static_cast<double>(X(j, f));
            d += w2[static_cast<std::size_t>(f)] * (t * t);
        }
        all.emplace_back(d, j);
    }
    std::sort(all.begin(), all.end());
    all.resize(static_cast<std::size_t>(std::min<Index>(k, X.rows() - 1)));
    return all;
}

// RGS's weights as they drift (small multiplicative steps, now and then a large one, features
// dropping to 0 and coming back, three weights of 1e-10 at the start), on data that moves the
// screen's centres and bounds: uniform, ties, a large common offset, feature scales from 1e-3
// to 1e3, heavy tails, one outlying row. Every query must return the neighbours and the exact
// distances (bit for bit) of an exhaustive scan; the bounds must also be used (features
// refreshed, the shortlist usually far shorter than the data).
TYPED_TEST(KnnQueryTest, DriftingWeightsExactBitForBit) {
    using T = TypeParam;
    const Index m = 300, n = 23;
    const int steps = 150;
    for (int data = 0; data < 6; ++data) {
        Gen g(1000 + static_cast<std::uint64_t>(data));
        Mat<double> X64(m, n);
        for (Index i = 0; i < m; ++i)
            for (Index f = 0; f < n; ++f) {
                const double u = 2.0 * g.uniform() - 1.0;
                switch (data) {
                    case 0: X64(i, f) = u; break;
                    case 1: X64(i, f) = static_cast<double>(g.below(3)); break;
                    case 2: X64(i, f) = 1e4 + u; break;
                    case 3: X64(i, f) = u * std::pow(10.0, static_cast<double>(f % 7) - 3.0); break;
                    case 4: X64(i, f) = g.normal() / std::pow(g.uniform() + 1e-3, 0.7); break;
                    case 5: X64(i, f) = i == m - 1 ? 1e3 : u; break;
                }
            }
        const Mat<T> X = X64.cast<T>();
        std::vector<double> w(static_cast<std::size_t>(n), 1.0);
        for (int f = 0; f < 3; ++f) w[static_cast<std::size_t>(f)] = 1e-10;
        for (int k : {1, 9, 20})
        for (fastfs::GramCopy copy : kCopies) {
            SCOPED_TRACE(copy_name(copy));
            const fastfs::KnnQuery<T> q(X, copy);
            typename fastfs::KnnQuery<T>::Scratch s;
            std::vector<Index> kept;
            std::vector<Index> idx(static_cast<std::size_t>(k));
            std::vector<double> dist(static_cast<std::size_t>(k));
            for (int t = 0; t < steps; ++t) {
                const double scale = t % 10 == 0 ? 0.3 : 0.02;
                for (auto& v : w) {
                    v *= (1.0 + scale * (2.0 * g.uniform() - 1.0)) * (1.0 + scale * (2.0 * g.uniform() - 1.0));
                    if (g.uniform() > 0.995) v = 0.0;
                    else if (v == 0.0 && g.uniform() > 0.9) v = 0.7;
                }
                std::vector<double> w2(w.size());
                for (std::size_t f = 0; f < w.size(); ++f) w2[f] = w[f] * w[f];
                const Index i = g.below(m);
                q.prepare(w2.data(), s);
                const int count = q.query(i, w2.data(), k, s, 1, idx.data(), dist.data());
                kept.push_back(s.kept);
                const auto want = feature_order_k_nearest(X, w2, i, k);
                ASSERT_EQ(count, static_cast<int>(want.size()));
                for (int r = 0; r < count; ++r) {
                    ASSERT_EQ(idx[static_cast<std::size_t>(r)], want[static_cast<std::size_t>(r)].second)
                        << "data " << data << ", k " << k << ", step " << t << ", rank " << r;
                    ASSERT_EQ(dist[static_cast<std::size_t>(r)], want[static_cast<std::size_t>(r)].first)
                        << "data " << data << ", k " << k << ", step " << t << ", rank " << r;
                }
            }
            EXPECT_GT(s.n_refreshed, 0) << "data " << data << ", k " << k;
            EXPECT_GE(s.n_rebuilt, 1) << "data " << data << ", k " << k;
            std::nth_element(kept.begin(), kept.begin() + steps / 2, kept.end());
            EXPECT_LT(kept[static_cast<std::size_t>(steps / 2)], m / 3) << "data " << data << ", k " << k;
        }
    }
}

// Spreads so small that the half copy's power of two would leave float64's range (values of
// 1e-306 and below beside a constant column of 1, which Python's rescaling by the largest |x|
// does not move): the scale stops at 2^1000, and the answers stay the float64 scan's (whose
// squared differences underflow to 0 here, so the lower indices win).
TEST(KnnQueryScale, SpreadsNearTheBottomOfFloat64StayExact) {
    const Index m = 30, n = 9;
    Mat<double> X(m, n);
    Gen g(5);
    for (Index i = 0; i < m; ++i)
        for (Index f = 0; f < n; ++f)
            X(i, f) = f == 0 ? 1.0 : static_cast<double>(g.below(5)) * (f % 2 ? 1e-306 : 1e-310);
    const auto w2 = make_w2(Weights::ones, n, 6);
    const int k = 3;
    for (fastfs::GramCopy copy : kCopies) {
        const fastfs::KnnQuery<double> q(X, copy);
        typename fastfs::KnnQuery<double>::Scratch s;
        q.prepare(w2.data(), s);
        for (Index i = 0; i < m; ++i) {
            Index idx[k];
            double dist[k];
            const int count = q.query(i, w2.data(), k, s, 1, idx, dist);
            const auto want = feature_order_k_nearest(X, w2, i, k);
            ASSERT_EQ(count, k);
            for (int r = 0; r < k; ++r) {
                EXPECT_EQ(idx[r], want[static_cast<std::size_t>(r)].second) << copy_name(copy) << ", sample " << i;
                EXPECT_EQ(dist[r], want[static_cast<std::size_t>(r)].first) << copy_name(copy) << ", sample " << i;
            }
        }
    }
}

// The screen works in units of a power of two of the largest weight, so weights 2^-140 times
// smaller (squared weights of about 1e-42, below float32's normal range) give the same
// neighbours, the same distances times 2^-140, and a shortlist as short as with weights of 1:
// before, the absolute allowances for subnormal arithmetic swamped such distances and every
// sample went onto the shortlist (five times slower on RGS's benchmark).
TEST(KnnQueryScale, TinyWeightsKeepTheScreenEffective) {
    const Index m = 400, n = 80;
    const Mat<double> X = make_data(Family::continuous, m, n, 7);
    std::vector<double> w2(static_cast<std::size_t>(n)), tiny(static_cast<std::size_t>(n));
    Gen g(3);
    for (Index f = 0; f < n; ++f) {
        w2[static_cast<std::size_t>(f)] = 0.25 + g.uniform();
        tiny[static_cast<std::size_t>(f)] = std::ldexp(w2[static_cast<std::size_t>(f)], -140);
    }
    for (fastfs::GramCopy copy : kCopies) {
    SCOPED_TRACE(copy_name(copy));
    const fastfs::KnnQuery<double> q(X, copy);
    typename fastfs::KnnQuery<double>::Scratch s1, s2;
    q.prepare(w2.data(), s1);
    q.prepare(tiny.data(), s2);
    Index kept1 = 0, kept2 = 0;
    for (Index i = 0; i < m; ++i) {
        Index i1[5], i2[5];
        double d1[5], d2[5];
        const int c1 = q.query(i, w2.data(), 5, s1, 1, i1, d1);
        const int c2 = q.query(i, tiny.data(), 5, s2, 1, i2, d2);
        ASSERT_EQ(c1, c2);
        for (int r = 0; r < c1; ++r) {
            ASSERT_EQ(i1[r], i2[r]) << "sample " << i << ", rank " << r;
            ASSERT_EQ(std::ldexp(d1[r], -140), d2[r]) << "sample " << i << ", rank " << r;
        }
        kept1 += s1.kept;
        kept2 += s2.kept;
    }
    EXPECT_EQ(kept1, kept2);
    EXPECT_LT(kept2, m * m / 4);  // the screen decides most samples
    }
}

// The half-precision copy rounds the truly nearest sample A away from the query and a farther
// sample B towards it: in each of 64 features the query's value lies just below a midpoint
// between two halves (rounded down), A's just above another (rounded up), B's just below it
// (rounded down), and one coordinate of B is larger so that B is truly farther than A. The
// copy sees A farther than B by 2^-8 of the distance with normal halves and by twice with
// subnormal ones; only the conversion radius (relative, then absolute) keeps A. A last feature
// of weight 0 holds +-far on the other samples, which sets the copy's scale (and pushes the
// first case's values into the subnormal halves) without widening the other allowances; the
// rows' negatives are there too, so every centre is 0 and the copy's values are as designed.
TEST(KnnQueryBounds, HalfCopyRoundingAwayFromTheNearestKeepsIt) {
    const Index n = 65, m = 46;
    struct Trap {
        double far, q, a, spacing;  // +-far; midpoints of the query and of A, B; copy units
    };
    for (const Trap& t : {Trap{0x1.0p12, 2049.0, 3073.0, 2.0},
                          Trap{0x1.0p20, 3.5 * 0x1.0p-24, 5.5 * 0x1.0p-24, 0x1.0p-24}}) {
        // The copy's unit 2^E for M = far: E = ilogb(far) + 1 - 15.
        const double unit = std::ldexp(1.0, std::ilogb(t.far) + 1 - 15);
        const double d = t.spacing / 64;
        Mat<double> X = Mat<double>::Zero(m, n);
        for (Index f = 0; f + 1 < n; ++f) {
            X(0, f) = (t.q - d) * unit;
            X(1, f) = (t.a + d) * unit;
            X(2, f) = (t.a - d) * unit;
        }
        const double da = (t.a - t.q + 2 * d) * unit, db = (t.a - t.q) * unit;
        X(2, 0) = X(0, 0) + std::sqrt(64.0 * da * da - 63.0 * db * db) * (1.0 + 1e-6);
        for (Index i = 0; i < 3; ++i) X.row(3 + i) = -X.row(i);
        for (Index i = 6; i < m; ++i) X(i, n - 1) = i % 2 ? t.far : -t.far;
        std::vector<double> w2(static_cast<std::size_t>(n), 1.0);
        w2.back() = 0.0;
        ASSERT_LT(sq_distance(X, w2, 0, 1), sq_distance(X, w2, 0, 2));
        expect_first_queries_exact(X, w2, 1, "far " + std::to_string(t.far));
    }
}
