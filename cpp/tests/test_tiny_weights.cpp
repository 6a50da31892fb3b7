// Both float32 screens (NeighbourFinder, KnnQuery) under squared weights spread over
// 1e-50 .. 1e-10, the regime of Simba's decaying weights and of user weights, where float32
// holds the weights as subnormal numbers or flushes them to 0: many small random problems,
// every answer against the long double brute force. (Before NeighbourFinder's bound allowed
// for the absolute conversion error of such weights, about one problem in ten failed here.)
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "fastfs/neighbours/knn_query.hpp"
#include "fastfs/neighbours/finder.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

struct Problem {
    Mat<double> X;
    Codes codes;
    std::vector<double> w2;
};

// A quarter of the features share the largest weight, the others are spread over two decades
// below a random level; data are small integers times a random scale (the top-weight features
// 1000 times smaller), a third of them zero.
Problem make_problem(std::uint64_t seed) {
    Gen g(seed);
    const Index m = 8 + g.below(24), n = 64 + g.below(10);
    Problem p{Mat<double>(m, n), Codes(m), std::vector<double>(static_cast<std::size_t>(n))};
    const double level = -50.0 + 30.0 * g.uniform();
    const double top = std::pow(10.0, level + 20.0 * g.uniform());
    const double scale = std::pow(10.0, 8.0 * g.uniform());
    for (auto& v : p.w2) v = g.below(4) == 0 ? top : std::pow(10.0, level + 2.0 * g.uniform());
    for (Index i = 0; i < m; ++i) {
        p.codes[i] = static_cast<std::int64_t>(g.below(2));
        for (Index f = 0; f < n; ++f)
            p.X(i, f) = g.below(3) == 0 ? 0.0
                                        : (p.w2[static_cast<std::size_t>(f)] == top ? 1e-3 : 1.0) * scale *
                                              static_cast<double>(g.below(8));
    }
    return p;
}

// Equal distances in long double can be unequal in float64 (other rounding): an index that
// differs from the reference only counts when its distance differs clearly.
template <class T>
bool clearly_other(const Mat<T>& X, const std::vector<double>& w2, Index i, Index got, Index want) {
    if (got == want) return false;
    if (got < 0 || want < 0) return true;
    const long double a = sq_distance(X, w2, i, got), b = sq_distance(X, w2, i, want);
    return std::fabs(a - b) > 1e-10L * b;
}

template <class T>
void run(int trials) {
    int bad_hit_miss = 0, bad_k = 0;
    for (int t = 0; t < trials; ++t) {
        const Problem p = make_problem(static_cast<std::uint64_t>(t));
        const Mat<T> X = p.X.cast<T>();
        const Index m = X.rows();
        for (int threads : {1, 2}) {
            const auto got = fastfs::all_nearest_hit_miss<T>(X, p.codes, p.w2.data(), threads);
            for (Index i = 0; i < m; ++i) {
                const auto r = ref_hit_miss(X, p.codes, p.w2, i);
                if (clearly_other(X, p.w2, i, got[static_cast<std::size_t>(i)].hit, r.hit) ||
                    clearly_other(X, p.w2, i, got[static_cast<std::size_t>(i)].miss, r.miss)) {
                    if (++bad_hit_miss <= 3)
                        ADD_FAILURE() << "problem " << t << ", sample " << i << ", " << threads
                                      << " threads: hit " << got[static_cast<std::size_t>(i)].hit << " miss "
                                      << got[static_cast<std::size_t>(i)].miss << ", expected hit " << r.hit
                                      << " miss " << r.miss;
                }
            }
        }
        const fastfs::KnnQuery<T> q(X);
        typename fastfs::KnnQuery<T>::Scratch s;
        q.prepare(p.w2.data(), s);
        for (Index i = 0; i < m; ++i) {
            Index idx[3];
            double d[3];
            const int count = q.query(i, p.w2.data(), 3, s, 1, idx, d);
            const auto ref = ref_k_nearest(m, i, 3, [&](Index j) { return sq_distance(X, p.w2, i, j); });
            ASSERT_EQ(count, static_cast<int>(ref.size()));
            for (int r = 0; r < count; ++r)
                if (clearly_other(X, p.w2, i, idx[r], ref[static_cast<std::size_t>(r)].second)) {
                    if (++bad_k <= 3)
                        ADD_FAILURE() << "problem " << t << ", sample " << i << ", rank " << r << ": "
                                      << idx[r] << ", expected " << ref[static_cast<std::size_t>(r)].second;
                    break;
                }
        }
    }
    EXPECT_EQ(bad_hit_miss, 0);
    EXPECT_EQ(bad_k, 0);
}

}  // namespace

TEST(TinyWeights, ScreensStayExactFloat64Data) { run<double>(400); }
TEST(TinyWeights, ScreensStayExactFloat32Data) { run<float>(400); }
