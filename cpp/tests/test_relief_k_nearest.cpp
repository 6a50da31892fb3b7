// exact_k_nearest (relief.hpp), ReliefF's neighbour screen: from float32 Manhattan distances on
// min-max scaled data Z (every value in [0, 1]), it sets the exact float64 distance of every
// sample that can be among the k nearest of its class or of any other class, and +inf for the
// rest. Checked here: selecting the k nearest of each class from its output (by distance, then
// index, the sample itself excluded, as relieff_contribution does) gives the brute-force
// answer, and every finite entry is the exact distance.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fastfs/weights/relief.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

// Values in [0, 1], dyadic where the family is discrete, so that every Manhattan sum of the
// discrete families is exact in float64 and ties are real ties.
Mat<double> make_unit_data(Family family, Index m, Index n, std::uint64_t seed) {
    Mat<double> X = make_data(family, m, n, seed);
    switch (family) {
        case Family::integers:
        case Family::duplicates: return X * 0.25;  // {0, 1/4, 1/2, 3/4}
        case Family::near_ties:
        case Family::two_clusters: return X;  // already in (0, 1)
        case Family::continuous:
            for (Index i = 0; i < m; ++i)
                for (Index f = 0; f < n; ++f)
                    X(i, f) = static_cast<double>(static_cast<float>(std::min(1.0, std::max(0.0, X(i, f) / 12.0 + 0.5))));
            return X;
    }
    return X;
}

void check(const Mat<double>& Z, const Codes& codes, Index k, const std::string& label) {
    SCOPED_TRACE(label + ", k " + std::to_string(k));
    const Index m = Z.rows(), n = Z.cols();
    const auto L = fastfs::ClassLayout::from_codes(codes);
    const Mat<float> Z32 = Z.cast<float>();
    std::vector<float> approx(static_cast<std::size_t>(m));
    std::vector<double> dist(static_cast<std::size_t>(m)), upper;
    std::vector<Index> pending;
    int failures = 0;
    for (Index i = 0; i < m && failures < 3; ++i) {
        // float32 Manhattan distances, summed in feature order (the bound allows any order).
        for (Index j = 0; j < m; ++j) {
            float a = 0.0f;
            for (Index f = 0; f < n; ++f) a += std::fabs(Z32(i, f) - Z32(j, f));
            approx[static_cast<std::size_t>(j)] = a;
        }
        fastfs::exact_k_nearest(Z, L, k, i, approx.data(), dist.data(), upper, pending);
        for (Index c = 0; c < L.n_classes(); ++c) {
            std::vector<Index> members;
            for (Index j = 0; j < m; ++j)
                if (codes[j] == c) members.push_back(j);
            const auto ref = ref_k_nearest(m, i, k, [&](Index j) { return l1_distance(Z, i, j); }, members);
            const auto got = ref_k_nearest(m, i, k, [&](Index j) {
                return static_cast<long double>(dist[static_cast<std::size_t>(j)]); }, members);
            bool ok = got.size() == ref.size();
            for (std::size_t r = 0; ok && r < got.size(); ++r) {
                ok = got[r].second == ref[r].second &&
                     std::fabs(got[r].first - ref[r].first) <= 1e-12L * ref[r].first;
            }
            if (!ok) {
                ++failures;
                std::string g, e;
                for (const auto& p : got) g += std::to_string(p.second) + " ";
                for (const auto& p : ref) e += std::to_string(p.second) + " ";
                ADD_FAILURE() << "sample " << i << ", class " << c << ": got " << g << ", expected " << e;
            }
        }
        // Every finite entry is an exact distance; the sample's own entry is +inf.
        EXPECT_TRUE(std::isinf(dist[static_cast<std::size_t>(i)]));
        for (Index j = 0; j < m; ++j) {
            const double d = dist[static_cast<std::size_t>(j)];
            if (std::isfinite(d)) {
                const long double want = l1_distance(Z, i, j);
                EXPECT_LE(std::fabs(d - want), 1e-12L * want) << "sample " << i << ", other " << j;
            }
        }
    }
}

}  // namespace

TEST(ExactKNearest, PerClassKNearestEqualBruteForce) {
    const Index m = 103;
    std::uint64_t seed = 500;
    for (Family family : {Family::continuous, Family::integers, Family::duplicates, Family::near_ties,
                          Family::two_clusters}) {
        for (Index n : {8, 70}) {
            const Mat<double> Z = make_unit_data(family, m, n, ++seed);
            // classes 0: odd and even rows (for two_clusters, the misses lie in the other cluster)
            for (int classes : {3, 1, 0}) {
                Codes codes = make_codes(m, classes == 0 ? 2 : classes, ++seed);
                if (classes == 0)
                    for (Index i = 0; i < m; ++i) codes[i] = i % 2;
                for (Index k : {1, 3, 10})
                    check(Z, codes, k, "family " + std::to_string(static_cast<int>(family)) + ", n " +
                                           std::to_string(n) + ", " + std::to_string(classes) + " classes");
            }
        }
    }
}

// Columns at the bottom of the scale (their float32 copies are subnormal or 0) next to
// ordinary ones, and k above every class size.
TEST(ExactKNearest, TinyColumnsAndLargeK) {
    const Index m = 60, n = 66;
    Mat<double> Z = make_unit_data(Family::integers, m, n, 9);
    const Mat<double> small = make_unit_data(Family::continuous, m, n, 10);
    for (Index f = 0; f < n; f += 3) Z.col(f) = small.col(f) * 1e-45;
    const Codes codes = make_codes(m, 3, 11);
    check(Z, codes, 1, "tiny columns");
    check(Z, codes, 70, "k > m");
}
