// gram_nearest_hit_miss (gram_screen.hpp): nearest hit and miss of every sample from blocked
// float32 Gram products with rigorous bounds, then exact float64 distances of the candidates.
// It must give the exhaustive float64 scan's answer exactly: the same neighbour indices (a
// sample is never its own neighbour, equal distances go to the lowest index) and the same
// distance bits as all_nearest_hit_miss, and the indices of a long double brute force, for 1
// and 2 threads; on ties, duplicate rows, extreme scales, tiny weights, data far from the origin
// and data where the bounds are too loose to decide (those samples go to the row scan).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fastfs/neighbours/finder.hpp"
#include "fastfs/neighbours/gram_screen.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Runs the screen with 1 and 2 threads and compares with the row-scan finder (itself tested
// against the brute force in test_neighbours.cpp) and with the long double brute force.
// Returns the samples the screen sent to the row scan (1 thread).
template <class T>
Index check(const Mat<double>& X64, const Codes& codes, const std::vector<double>& w2,
            const std::string& label, bool against_reference = true) {
    const Mat<T> X = X64.cast<T>();
    const auto want = fastfs::all_nearest_hit_miss<T>(X, codes, w2.data(), 1);
    std::vector<RefHitMiss> ref;
    if (against_reference)
        for (Index i = 0; i < X.rows(); ++i) ref.push_back(ref_hit_miss(X, codes, w2, i));
    Index rescanned = -1;
    using fastfs::gram::TileProduct;
    // Dense tiles, sparse tiles (forced even on dense data: the bounds are the same), 16-bit
    // tiles (forced past their guard; float32 tiles on CPUs without AVX-512 VNNI) and the
    // automatic choice.
    for (TileProduct product : {TileProduct::automatic, TileProduct::dense, TileProduct::sparse,
                                TileProduct::dense16})
    for (int threads : {1, 2}) {
        const std::string tiles = product == TileProduct::sparse    ? ", sparse tiles"
                                  : product == TileProduct::dense   ? ", dense tiles"
                                  : product == TileProduct::dense16 ? ", 16-bit tiles"
                                                                    : "";
        std::vector<fastfs::HitMiss> got;
        Index r = 0;
        const bool used = fastfs::gram_nearest_hit_miss<T>(X, codes, w2.data(), threads, got, {},
                                                           &r, true, product);
        EXPECT_TRUE(used) << label << tiles << ": the screen declined";
        if (!used) return -1;
        if (threads == 1 && product == TileProduct::automatic) rescanned = r;
        EXPECT_EQ(got.size(), want.size());
        // Neighbours only (Relief): the same neighbours; a distance is either the exhaustive
        // scan's or NaN (a class the bounds decided alone), never anything else.
        std::vector<fastfs::HitMiss> ids;
        EXPECT_TRUE(fastfs::gram_nearest_hit_miss<T>(X, codes, w2.data(), threads, ids, {},
                                                     nullptr, false, product));
        EXPECT_EQ(ids.size(), want.size());
        for (std::size_t i = 0; i < ids.size() && i < want.size(); ++i) {
            EXPECT_EQ(ids[i].hit, want[i].hit) << label << tiles << ", neighbours only, sample " << i;
            EXPECT_EQ(ids[i].miss, want[i].miss) << label << tiles << ", neighbours only, sample " << i;
            EXPECT_TRUE(std::isnan(ids[i].hit_d) || same_bits(ids[i].hit_d, want[i].hit_d));
            EXPECT_TRUE(std::isnan(ids[i].miss_d) || same_bits(ids[i].miss_d, want[i].miss_d));
        }
        int reported = 0;
        for (std::size_t i = 0; i < got.size() && reported < 5; ++i) {
            const auto& g = got[i];
            const auto& w = want[i];
            bool ok = g.hit == w.hit && g.miss == w.miss && same_bits(g.hit_d, w.hit_d) &&
                      same_bits(g.miss_d, w.miss_d) && g.hit != static_cast<Index>(i) &&
                      g.miss != static_cast<Index>(i);
            if (against_reference) ok = ok && g.hit == ref[i].hit && g.miss == ref[i].miss;
            if (!ok) {
                ++reported;
                ADD_FAILURE() << label << tiles << ", " << threads << " thread(s), sample " << i << ": hit "
                              << g.hit << " (d " << g.hit_d << "), miss " << g.miss << " (d "
                              << g.miss_d << "); exhaustive scan: hit " << w.hit << " (d " << w.hit_d
                              << "), miss " << w.miss << " (d " << w.miss_d << ")";
            }
        }
    }
    return rescanned;
}


}  // namespace

template <class T>
class GramScreenTest : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GramScreenTest, Scalars);

// Every data family (exact ties, duplicate rows, near ties invisible to float32, two far
// clusters) x weights (ones, zeros, tiny, all tiny, dyadic) x class layouts (a singleton class
// without a hit, one class without misses, two classes), m = 150: three tile rows, the last
// one short, so both the diagonal and the off-diagonal (transposed) tiles are exercised.
TYPED_TEST(GramScreenTest, EqualsTheExhaustiveScanOnEveryFamily) {
    using T = TypeParam;
    const Index m = 150;
    std::uint64_t seed = 1;
    for (Family family : kAllFamilies) {
        for (Index n : {17, 70}) {
            const Mat<double> X = make_data(family, m, n, ++seed);
            for (Weights weights : kAllWeights) {
                for (int classes : {3, 1, 0}) {
                    Codes codes = make_codes(m, classes == 0 ? 2 : classes, ++seed);
                    if (classes == 0)
                        for (Index i = 0; i < m; ++i) codes[i] = i % 2;
                    std::ostringstream name;
                    name << family_name(family) << ", n " << n << ", weights "
                         << static_cast<int>(weights) << ", " << classes << " class(es)";
                    // The long double brute force for one layout (it costs the most); the
                    // exhaustive scan, itself checked against it elsewhere, for all.
                    check<T>(X, codes, make_w2(weights, n, ++seed), name.str(), classes == 3);
                }
            }
        }
    }
}

// Values of 2^-100 (~1e-30) and 2^100 (~1e30) (2^-90, 2^90 for float32 data), far from the
// origin (every value plus 10^6: the Gram form's cancellation without centring), and integer
// data shifted by 2^20 (ties that a float32 Gram product of uncentred data could not see).
TYPED_TEST(GramScreenTest, ExtremeScalesAndDataFarFromTheOrigin) {
    using T = TypeParam;
    const Index m = 140, n = 40;
    const int big = std::is_same<T, float>::value ? 90 : 100;
    std::uint64_t seed = 50;
    for (int e : {-big, -30, 30, big}) {
        Mat<double> X = make_data(Family::continuous, m, n, ++seed);
        X *= std::ldexp(1.0, e);
        seed += 4;
        check<T>(X, make_codes(m, 3, seed), make_w2(Weights::ones, n, seed + 1),
                 "scale 2^" + std::to_string(e));
        check<T>(X, make_codes(m, 3, seed + 2), make_w2(Weights::with_tiny, n, seed + 3),
                 "scale 2^" + std::to_string(e) + ", tiny weights");
    }
    Mat<double> far = make_data(Family::continuous, m, n, ++seed);
    far.array() += 1e6;
    check<T>(far, make_codes(m, 3, seed + 1), make_w2(Weights::ones, n, seed + 2), "x + 1e6");
    seed += 3;
    Mat<double> ties = make_data(Family::integers, m, n, ++seed);
    ties.array() += std::ldexp(1.0, 20);
    check<T>(ties, make_codes(m, 2, seed + 1), make_w2(Weights::dyadic, n, seed + 2),
             "integers + 2^20");
}

// Many samples at distance 0 from each other (5 rows repeated, each sample told apart only by
// its value of a feature of weight 0, so no two rows are equal and every sample is screened):
// each sample has dozens of candidates at distance 0, more than its candidate list holds; they
// go to the spill area, and the answer is unchanged.
TYPED_TEST(GramScreenTest, ManyDuplicatesSpillPastTheCandidateLists) {
    using T = TypeParam;
    const Index m = 200, n = 24;
    const Mat<double> base = make_data(Family::integers, 5, n, 7);
    Mat<double> X(m, n);
    for (Index i = 0; i < m; ++i) {
        X.row(i) = base.row(i % 5);
        X(i, 0) = static_cast<double>(i);
    }
    std::vector<double> w2 = make_w2(Weights::ones, n, 9);
    w2[0] = 0.0;
    const Codes codes = make_codes(m, 2, 8, false);
    EXPECT_EQ(fastfs::equal_row_groups<T>(X.cast<T>(), codes).n_groups(), m);
    const Index rescanned = check<T>(X, codes, w2, "5 distinct rows under the weights");
    EXPECT_EQ(rescanned, 0);
}

// Equal rows (copies) of one class are screened once (data/row_groups.hpp) and their answers
// spread over the group: the hit of a copy is its lowest other member at distance 0, unless a
// group of the class that differs only in features of weight 0 has a lower index. Rows are 20
// patterns, each with a flag in a feature of weight 0 or 1, in 3 classes (so equal rows also
// sit in different classes, which are different groups), a singleton class, 1 and 2 threads,
// with and without distances.
TYPED_TEST(GramScreenTest, EqualRowsAreScreenedOncePerGroup) {
    using T = TypeParam;
    const Index m = 240, n = 30;
    for (std::uint64_t seed : {31u, 41u, 51u}) {
        const Mat<double> base = make_data(Family::continuous, 20, n, seed);
        Gen g(seed + 1);
        Mat<double> X(m, n);
        for (Index i = 0; i < m; ++i) {
            X.row(i) = base.row(static_cast<Index>(g.below(20)));
            X(i, 3) = static_cast<double>(g.below(2));
        }
        const Codes codes = make_codes(m, 4, seed + 2);
        const auto groups = fastfs::equal_row_groups<T>(X.cast<T>(), codes);
        EXPECT_LE(groups.n_groups(), m - m / 8) << "the grouped path is not taken";
        EXPECT_GE(groups.n_groups(), 32) << "too few groups to screen";
        for (Weights weights : {Weights::ones, Weights::with_zeros, Weights::dyadic}) {
            std::vector<double> w2 = make_w2(weights, n, seed + 3);
            for (double flag : {0.0, 1.0}) {
                w2[3] = flag;
                check<T>(X, codes, w2,
                         std::string("copies, ") + weights_name(weights) + ", flag weight " +
                             std::to_string(flag) + ", seed " + std::to_string(seed));
            }
        }
    }
}

// Where the screen declines the groups' rows (here fewer than 32 groups, weights all 0, or a
// single group), the row scan runs over one row per group and the answer is still the
// exhaustive scan's.
TYPED_TEST(GramScreenTest, FewGroupsGoToTheRowScanOfTheGroups) {
    using T = TypeParam;
    const Index m = 200, n = 24;
    const Mat<double> base = make_data(Family::integers, 5, n, 7);
    Mat<double> X(m, n);
    for (Index i = 0; i < m; ++i) X.row(i) = base.row(i % 5);
    const Codes codes = make_codes(m, 2, 8, false);
    const Index groups = fastfs::equal_row_groups<T>(X.cast<T>(), codes).n_groups();
    EXPECT_LE(groups, 10);
    EXPECT_EQ(check<T>(X, codes, make_w2(Weights::ones, n, 9), "5 distinct rows"), groups);
    EXPECT_EQ(check<T>(X, codes, std::vector<double>(static_cast<std::size_t>(n), 0.0),
                       "5 distinct rows, weights 0"),
              groups);
    Mat<double> same(m, n);
    same.rowwise() = base.row(0);
    EXPECT_EQ(check<T>(same, Codes::Zero(m), make_w2(Weights::ones, n, 9), "one row, one class"), 1);
}

// Two clusters 2^40 apart (centring cannot help: the centre lies between them) with distances
// of order 1 inside each: the bounds, which scale with the norms, cannot order the samples of a
// cluster, so every sample of its cluster is a candidate, more than the spill area holds (32
// per sample): samples go to the row scan, and the answer is still exact.
TYPED_TEST(GramScreenTest, LooseBoundsFallBackToTheRowScan) {
    using T = TypeParam;
    const Index m = 400, n = 20;
    Mat<double> X = make_data(Family::continuous, m, n, 21);
    for (Index i = 0; i < m; i += 2) X.row(i).array() += std::ldexp(1.0, 40);
    const Index rescanned = check<T>(X, make_codes(m, 2, 22, false),
                                     make_w2(Weights::ones, n, 23), "far clusters", false);
    EXPECT_GT(rescanned, 0);
}

// Word counts: 3 % nonzeros in most columns and 40 % in nine frequent ones (the automatic
// choice takes sparse tiles with a dense panel of the frequent columns), small integers (many
// exact ties), duplicated documents, empty documents (all zeros), a column that is never used,
// and four blocks with a short last one; every weight kind.
TYPED_TEST(GramScreenTest, SparseCountData) {
    using T = TypeParam;
    const Index m = 230, n = 300;
    Gen g(61);
    Mat<double> X = Mat<double>::Zero(m, n);
    for (Index i = 0; i < m; ++i)
        for (Index f = 1; f < n; ++f)
            if (g.uniform() < (f < 10 ? 0.4 : 0.03)) X(i, f) = std::floor(1.0 + 3.0 * g.uniform());
    for (Index i = 0; i < m; i += 7) X.row(i + 1) = X.row(i);  // duplicates
    X.row(5).setZero();
    X.row(150).setZero();
    std::uint64_t seed = 62;
    for (Weights weights : kAllWeights) {
        seed += 2;
        check<T>(X, make_codes(m, 3, seed), make_w2(weights, n, seed + 1),
                 "word counts, weights " + std::to_string(static_cast<int>(weights)));
    }
}

// The row kernels of the screen, whose minima and maxima are kept in lanes: class_minima gives
// the smallest P - 2 g of the query's class and of the others (NaN skipped, +inf for an empty
// side) and convert_row the float32 row bit for bit, its largest magnitude exactly and its
// squared norm to the rounding of some order of the additions; lengths around the lanes.
TEST(GramScreen, RowKernelsTakeEveryEntry) {
    std::mt19937_64 gen(71);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    std::uniform_int_distribution<int> cls(0, 2), kind(0, 9);
    const float nanf = std::numeric_limits<float>::quiet_NaN();
    const float inff = std::numeric_limits<float>::infinity();
    for (Index n = 0; n <= 70; ++n) {
        std::vector<float> P(static_cast<std::size_t>(n)), g(P.size());
        std::vector<std::int32_t> code(P.size());
        for (std::size_t q = 0; q < P.size(); ++q) {
            const int k = kind(gen);
            P[q] = k == 0 ? nanf : k == 1 ? inff : static_cast<float>(u(gen) + 4.0);
            g[q] = static_cast<float>(u(gen));
            code[q] = cls(gen);
        }
        for (std::int32_t c : {0, 2, 7}) {
            float want_hit = inff, want_miss = inff;
            for (std::size_t q = 0; q < P.size(); ++q) {
                const float v = P[q] - 2.0f * g[q];
                float& w = code[q] == c ? want_hit : want_miss;
                if (v < w) w = v;
            }
            float hit = 0.0f, miss = 0.0f;
            fastfs::gram::class_minima(P.data(), g.data(), code.data(), c, n, &hit, &miss);
            EXPECT_EQ(hit, want_hit) << "n " << n << " class " << c;
            EXPECT_EQ(miss, want_miss) << "n " << n << " class " << c;
        }

        std::vector<double> x(P.size()), centre(P.size()), sw(P.size());
        for (std::size_t f = 0; f < x.size(); ++f) {
            x[f] = u(gen) * std::ldexp(1.0, static_cast<int>(u(gen) * 10.0));
            centre[f] = u(gen);
            sw[f] = kind(gen) == 0 ? 0.0 : std::abs(u(gen));
        }
        std::vector<float> y(x.size()), want_y(x.size());
        double want_top = 0.0, want_sq = 0.0;
        for (std::size_t f = 0; f < x.size(); ++f) {
            want_y[f] = static_cast<float>(sw[f] * (x[f] - centre[f]));
            const double d = want_y[f];
            want_top = std::max(want_top, std::abs(d));
            want_sq += d * d;
        }
        double y2 = -1.0, top = -1.0;
        fastfs::gram::convert_row(x.data(), centre.data(), sw.data(), n, y.data(), &y2, &top);
        EXPECT_EQ(std::memcmp(y.data(), want_y.data(), y.size() * sizeof(float)), 0) << "n " << n;
        EXPECT_EQ(top, want_top) << "n " << n;
        EXPECT_LE(std::abs(y2 - want_sq), 2.0 * static_cast<double>(n) * 1.2e-16 * want_sq) << "n " << n;
    }
}

// Where the screen does not apply it says so and leaves the output alone.
TEST(GramScreen, DeclinesSmallProblemsZeroWeightsAndNonFiniteValues) {
    const Index m = 100, n = 20;
    const Mat<double> X = make_data(Family::continuous, m, n, 31);
    const Codes codes = make_codes(m, 2, 32, false);
    std::vector<fastfs::HitMiss> out;
    const std::vector<double> zero(static_cast<std::size_t>(n), 0.0);
    EXPECT_FALSE(fastfs::gram_nearest_hit_miss<double>(X, codes, zero.data(), 1, out));
    const Mat<double> narrow = X.leftCols(8);
    const std::vector<double> ones(static_cast<std::size_t>(n), 1.0);
    EXPECT_FALSE(fastfs::gram_nearest_hit_miss<double>(narrow, codes, ones.data(), 1, out));
    Mat<double> bad = X;
    bad(3, 4) = std::numeric_limits<double>::infinity();
    EXPECT_FALSE(fastfs::gram_nearest_hit_miss<double>(bad, codes, ones.data(), 1, out));
    EXPECT_TRUE(out.empty());
}

// The product kernels (FMA and plain) against a float64 product, within gamma_{n+8} of the
// sum of absolute products: the bound the screen relies on.
TEST(GramScreen, TileProductWithinItsBound) {
    const Index ra = 13, rb = 11, n = 1037;
    const Index kp = (n + 7) / 8 * 8;
    Gen g(5);
    std::vector<float> A(static_cast<std::size_t>(ra * kp), 0.0f), B(static_cast<std::size_t>(rb * kp), 0.0f);
    for (Index i = 0; i < ra; ++i)
        for (Index k = 0; k < n; ++k) A[static_cast<std::size_t>(i * kp + k)] = static_cast<float>(g.normal());
    for (Index j = 0; j < rb; ++j)
        for (Index k = 0; k < n; ++k) B[static_cast<std::size_t>(j * kp + k)] = static_cast<float>(g.normal());
    std::vector<float> C(static_cast<std::size_t>(ra * rb)), P(C.size());
    fastfs::gram::tile_product(A.data(), kp, ra, B.data(), kp, rb, kp, C.data(), rb);
    fastfs::gram::tile_product_plain(A.data(), kp, ra, B.data(), kp, rb, kp, P.data(), rb);
    const double u = 0x1.0p-24, gamma = (n + 8) * u / (1.0 - (n + 8) * u);
    for (Index i = 0; i < ra; ++i)
        for (Index j = 0; j < rb; ++j) {
            double exact = 0.0, absum = 0.0;
            for (Index k = 0; k < n; ++k) {
                const double p = static_cast<double>(A[static_cast<std::size_t>(i * kp + k)]) *
                                 static_cast<double>(B[static_cast<std::size_t>(j * kp + k)]);
                exact += p;
                absum += std::abs(p);
            }
            EXPECT_LE(std::abs(C[static_cast<std::size_t>(i * rb + j)] - exact), gamma * absum);
            EXPECT_LE(std::abs(P[static_cast<std::size_t>(i * rb + j)] - exact), gamma * absum);
            // A real product is far inside the worst case: a kernel summing wrongly is not.
            EXPECT_LE(std::abs(C[static_cast<std::size_t>(i * rb + j)] - exact), 1e-3 * absum);
        }
}

// Large enough for the screen to use two threads (m^2 n >= 2^26): each thread keeps its own
// bounds and lists, merged at the end; the answer is the exhaustive scan's.
TYPED_TEST(GramScreenTest, TwoThreadsOnALargeProblem) {
    using T = TypeParam;
    const Index m = 1100, n = 64;
    for (Family family : {Family::continuous, Family::duplicates}) {
        check<T>(make_data(family, m, n, 41), make_codes(m, 3, 42),
                 make_w2(Weights::with_zeros, n, 43),
                 std::string("large, ") + family_name(family), false);
    }
}

// A diagonal tile (A and B the same rows) computed as its upper triangle and mirrored: every
// entry, below the diagonal too, within the bound of the float64 product, and symmetric.
TEST(GramScreen, DiagonalTileProductIsFullAndSymmetric) {
    const Index n = 523, kp = (n + 7) / 8 * 8;
    for (Index r : {Index{1}, Index{2}, Index{5}, Index{13}, Index{64}}) {
        Gen g(7 + static_cast<std::uint64_t>(r));
        std::vector<float> A(static_cast<std::size_t>(r * kp), 0.0f);
        for (Index i = 0; i < r; ++i)
            for (Index k = 0; k < n; ++k) A[static_cast<std::size_t>(i * kp + k)] = static_cast<float>(g.normal());
        const float junk = 12345.0f;  // C is overwritten, not added to
        std::vector<float> C(static_cast<std::size_t>(r * r), junk), P(C.size(), junk);
        fastfs::gram::tile_product(A.data(), kp, r, A.data(), kp, r, kp, C.data(), r, true);
        fastfs::gram::tile_product_plain(A.data(), kp, r, A.data(), kp, r, kp, P.data(), r, true);
        const double u = 0x1.0p-24, gamma = (n + 8) * u / (1.0 - (n + 8) * u);
        for (Index i = 0; i < r; ++i)
            for (Index j = 0; j < r; ++j) {
                double exact = 0.0, absum = 0.0;
                for (Index k = 0; k < n; ++k) {
                    const double p = static_cast<double>(A[static_cast<std::size_t>(i * kp + k)]) *
                                     static_cast<double>(A[static_cast<std::size_t>(j * kp + k)]);
                    exact += p;
                    absum += std::abs(p);
                }
                const std::size_t at = static_cast<std::size_t>(i * r + j);
                const std::size_t mirror = static_cast<std::size_t>(j * r + i);
                EXPECT_LE(std::abs(C[at] - exact), gamma * absum) << r << " " << i << " " << j;
                EXPECT_EQ(C[at], C[mirror]);
                if (i <= j) {  // the plain kernel leaves the lower triangle to tile_product
                    EXPECT_LE(std::abs(P[at] - exact), gamma * absum) << r << " " << i << " " << j;
                }
            }
    }
}

// Columns of negligible weight leave the tiles (choose_columns) and each row's left-out part
// goes into its radius. Here the rows come in threes that are equal on the 8 heavy columns and
// differ only on the 56 light ones (squared weight 2^-30), so the tiles see each three as one
// point and only the radii keep the nearest hit and miss, which the light columns decide; one
// row has a light value of 1e6. The answers must be the exhaustive scan's, and the light
// columns must actually have left Y.
TYPED_TEST(GramScreenTest, LightColumnsLeaveTheTilesAndTheRadiiCoverThem) {
    using T = TypeParam;
    const Index m = 150, n = 64, heavy = 8;
    Gen g(61);
    Mat<double> X(m, n);
    for (Index i = 0; i < m; ++i)
        for (Index f = 0; f < n; ++f)
            X(i, f) = f < heavy ? (i % 3 == 0 ? g.normal() : X(i - i % 3, f)) : g.normal();
    X(7, 20) = 1e6;
    std::vector<double> w2(static_cast<std::size_t>(n), 1.0);
    for (Index f = heavy; f < n; ++f) w2[static_cast<std::size_t>(f)] = 0x1.0p-30;
    for (int classes : {2, 3}) {
        Codes codes(m);
        for (Index i = 0; i < m; ++i) codes[i] = i % classes;
        fastfs::gram::Screen s;
        ASSERT_TRUE(fastfs::gram::build_screen(fastfs::MatrixRef<T>(X.cast<T>()), codes, w2.data(), s,
                                               fastfs::gram::TileProduct::dense));
        EXPECT_LT(s.kp, n);
        fastfs::gram::release_storage();
        check<T>(X, codes, w2, "light columns, " + std::to_string(classes) + " classes");
    }
}

#if defined(FASTFS_HAVE_VNNI)
// The 16-bit tiles' product (AVX-512 VNNI) against exact int64 sums: its integer sums are
// exact, so only the float32 conversion and reduction round, far inside gamma_{n+8}. With
// every value at +-kQuantTop and blocks of kDepth features an int32 lane holds its largest
// sums (2^31 - 1 - 1,048,447 at most): a kernel whose lanes overflow or whose blocks are longer
// fails by 2^32 in a sum. Diagonal tiles are full and symmetric. Skipped on other CPUs.
TEST(GramScreen, Int16TileProductIsExactBeforeItsFloat32Reduction) {
    if (!fastfs::kernels::cpu_has_avx512_vnni()) GTEST_SKIP() << "no AVX-512 VNNI here";
    using fastfs::gram::kQuantTop;
    for (Index n : {Index{7}, Index{300}, Index{1024}, Index{2100}}) {
        const Index kq = (n + 15) / 16 * 16;
        for (int extreme : {0, 1, 2}) {
            const Index ra = 13, rb = 11;
            Gen g(90 + static_cast<std::uint64_t>(n + extreme));
            std::vector<std::int16_t> A(static_cast<std::size_t>(ra * kq), 0), B(static_cast<std::size_t>(rb * kq), 0);
            auto value = [&](Index i, Index k) -> std::int16_t {
                if (extreme == 1) return static_cast<std::int16_t>(kQuantTop);  // every sum at its largest
                if (extreme == 2) return static_cast<std::int16_t>((i + k) % 2 ? kQuantTop : -kQuantTop);
                return static_cast<std::int16_t>(std::lround(std::clamp(g.normal() * 1500.0, -4095.0, 4095.0)));
            };
            for (Index i = 0; i < ra; ++i)
                for (Index k = 0; k < n; ++k) A[static_cast<std::size_t>(i * kq + k)] = value(i, k);
            for (Index j = 0; j < rb; ++j)
                for (Index k = 0; k < n; ++k) B[static_cast<std::size_t>(j * kq + k)] = value(j + 1, k);
            std::vector<float> C(static_cast<std::size_t>(ra * rb), 12345.0f);
            fastfs::gram::tile_product16(A.data(), kq, ra, B.data(), kq, rb, kq, C.data(), rb, false);
            const double u = 0x1.0p-24, gamma = (n + 8) * u / (1.0 - (n + 8) * u);
            for (Index i = 0; i < ra; ++i)
                for (Index j = 0; j < rb; ++j) {
                    std::int64_t exact = 0;
                    double absum = 0.0;
                    for (Index k = 0; k < n; ++k) {
                        const std::int64_t p = std::int64_t{A[static_cast<std::size_t>(i * kq + k)]} *
                                               B[static_cast<std::size_t>(j * kq + k)];
                        exact += p;
                        absum += std::abs(static_cast<double>(p));
                    }
                    const double err = std::abs(static_cast<double>(C[static_cast<std::size_t>(i * rb + j)]) -
                                                static_cast<double>(exact));
                    EXPECT_LE(err, gamma * absum) << n << " " << extreme << " " << i << " " << j;
                    // Exact sums, then a few float32 roundings of sums at most absum.
                    EXPECT_LE(err, 8.0 * u * absum) << n << " " << extreme << " " << i << " " << j;
                }
            // A diagonal tile: A against itself, upper triangle mirrored.
            std::vector<float> D(static_cast<std::size_t>(ra * ra), 12345.0f);
            fastfs::gram::tile_product16(A.data(), kq, ra, A.data(), kq, ra, kq, D.data(), ra, true);
            for (Index i = 0; i < ra; ++i)
                for (Index j = 0; j < ra; ++j) {
                    std::int64_t exact = 0;
                    for (Index k = 0; k < n; ++k)
                        exact += std::int64_t{A[static_cast<std::size_t>(i * kq + k)]} * A[static_cast<std::size_t>(j * kq + k)];
                    EXPECT_LE(std::abs(static_cast<double>(D[static_cast<std::size_t>(i * ra + j)]) - static_cast<double>(exact)),
                              8.0 * u * static_cast<double>(kQuantTop) * kQuantTop * static_cast<double>(n));
                    EXPECT_EQ(D[static_cast<std::size_t>(i * ra + j)], D[static_cast<std::size_t>(j * ra + i)]);
                }
        }
    }
}
#endif

// Which tiles the automatic choice takes: 16-bit ones on CPUs with AVX-512 VNNI for Gaussian
// data with enough samples, float32 ones below kMinInt16Rows samples and where one column's
// scale sets the rounding of all while the others decide the neighbours (most samples would
// stay candidates). The rounded screen's radii cover the rounding: each r_i is at least
// the distance from q_i to the exact scaled row, checked here in float64 against Y.
TEST(GramScreen, AutomaticTilesAreSixteenBitOnlyWhereTheRoundingIsNarrow) {
    const Index n = 40;
    const std::vector<double> w2(static_cast<std::size_t>(n), 1.0);
    const bool vnni = fastfs::kernels::cpu_has_avx512_vnni();
    for (Index m : {Index{100}, Index{400}}) {
        const Mat<double> X = make_data(Family::continuous, m, n, 70 + static_cast<std::uint64_t>(m));
        const Codes codes = make_codes(m, 2, 71);
        fastfs::gram::Screen s;
        ASSERT_TRUE(fastfs::gram::build_screen(fastfs::MatrixRef<double>(X), codes, w2.data(), s));
        EXPECT_EQ(s.Q != nullptr, vnni && m >= fastfs::gram::kMinInt16Rows) << m;
        if (s.Q) {
            // q_i against y_i (float32 Y, still held): |2^k y_i - q_i| <= r_i, with 2^k max |y|
            // in [2048, 4096).
            double top = 0.0;
            for (Index k = 0; k < m; ++k)
                for (Index f = 0; f < s.kp; ++f) top = std::max(top, std::abs(static_cast<double>(s.row(k)[f])));
            const double sc = std::ldexp(1.0, 11 - std::ilogb(top));
            for (Index i = 0; i < 5; ++i) {
                double e2 = 0.0, q2 = 0.0;
                for (Index f = 0; f < s.kp; ++f) {
                    const double q = s.row16(i)[f];
                    EXPECT_LE(std::abs(q), fastfs::gram::kQuantTop);
                    const double d = static_cast<double>(s.row(i)[f]) * sc - q;
                    EXPECT_LE(std::abs(d), 0.5) << "rounds to nearest";
                    e2 += d * d;
                    q2 += q * q;
                }
                EXPECT_LE(std::sqrt(e2), s.r[static_cast<std::size_t>(i)]) << i;
                EXPECT_EQ(q2, s.N[static_cast<std::size_t>(i)]) << i;
            }
        }
        fastfs::gram::release_storage();
        // One column of two values 10^5 apart (a group code on another scale): it sets the
        // rounding step, the other columns, which decide the neighbours, round to zero, and
        // the automatic choice keeps float32 tiles.
        Mat<double> mixed = X;
        for (Index i = 0; i < m; ++i) mixed(i, 0) = 1e5 * static_cast<double>(i % 2);
        fastfs::gram::Screen t;
        ASSERT_TRUE(fastfs::gram::build_screen(fastfs::MatrixRef<double>(mixed), codes, w2.data(), t));
        EXPECT_EQ(t.Q, nullptr) << m;
        fastfs::gram::release_storage();
        check<double>(mixed, codes, w2, "a column of two values 10^5 apart, m " + std::to_string(m));
    }
}

// Data with a fifth of its values nonzero: sparse tiles below kSparseDensity, but dense 16-bit
// tiles where the CPU has them; where the rounding is too coarse (a column of two values 10^5
// apart, the others deciding the neighbours), sparse tiles after all. Exact either way.
TEST(GramScreen, SemiSparseDataTakesSixteenBitTilesOrSparseOnes) {
    const Index m = 400, n = 40;
    const std::vector<double> w2(static_cast<std::size_t>(n), 1.0);
    const bool vnni = fastfs::kernels::cpu_has_avx512_vnni();
    Gen g(81);
    Mat<double> X(m, n);
    for (Index i = 0; i < m; ++i)
        for (Index f = 0; f < n; ++f) X(i, f) = g.uniform() < 0.2 ? g.normal() : 0.0;
    const Codes codes = make_codes(m, 3, 82);
    Mat<double> coarse = X;
    for (Index i = 0; i < m; ++i) coarse(i, 0) = 1e5 * static_cast<double>(i % 2);
    for (int c = 0; c < 2; ++c) {
        const Mat<double>& Z = c == 0 ? X : coarse;
        fastfs::gram::Screen s;
        ASSERT_TRUE(fastfs::gram::build_screen(fastfs::MatrixRef<double>(Z), codes, w2.data(), s));
        const bool want16 = vnni && c == 0;
        EXPECT_EQ(s.Q != nullptr, want16) << c;
        EXPECT_EQ(s.sparse, !want16) << c;
        fastfs::gram::release_storage();
        check<double>(Z, codes, w2, c == 0 ? "a fifth nonzero" : "a fifth nonzero, one coarse column");
    }
}

// A tight group of 12% of the samples (within 0.01 of each other, far from the rest) that the
// probe's 8 samples miss: every sample meets the group in its first tiles, and with 16-bit
// tiles the whole group stays within the rounding radii, filling every list and the spill area
// (1920 of 2048 samples rescanned when nothing stops it). The screen then gives up the 16-bit
// tiles and runs in float32: no more samples rescanned than with float32 tiles, and the
// exhaustive scan's answers.
TEST(GramScreen, SixteenBitTilesThatOverflowGiveWayToFloat32) {
    const Index m = 2048, n = 256, group = 245;
    Gen g(91);
    Mat<double> X(m, n);
    for (Index i = 0; i < m; ++i)
        for (Index f = 0; f < n; ++f)
            X(i, f) = i >= 1 && i <= group ? (f % 2 ? 2.0 : -2.0) + 0.01 * g.normal() : g.normal();
    Codes codes(m);
    for (Index i = 0; i < m; ++i) codes[i] = g.below(2);
    const std::vector<double> w2(static_cast<std::size_t>(n), 1.0);
    const auto want = fastfs::all_nearest_hit_miss<double>(X, codes, w2.data(), 1);
    using fastfs::gram::TileProduct;
    Index r32 = -1;
    std::vector<fastfs::HitMiss> f32;
    ASSERT_TRUE(fastfs::gram_nearest_hit_miss<double>(X, codes, w2.data(), 1, f32, {}, &r32, true,
                                                      TileProduct::dense));
    for (TileProduct product : {TileProduct::automatic, TileProduct::dense16})
        for (int threads : {1, 2}) {
            std::vector<fastfs::HitMiss> got;
            Index r = -1;
            ASSERT_TRUE(fastfs::gram_nearest_hit_miss<double>(X, codes, w2.data(), threads, got, {},
                                                              &r, true, product));
            EXPECT_LE(r, r32) << threads;
            for (Index i = 0; i < m; ++i) {
                EXPECT_EQ(got[static_cast<std::size_t>(i)].hit, want[static_cast<std::size_t>(i)].hit) << i;
                EXPECT_EQ(got[static_cast<std::size_t>(i)].miss, want[static_cast<std::size_t>(i)].miss) << i;
                EXPECT_TRUE(same_bits(got[static_cast<std::size_t>(i)].hit_d, want[static_cast<std::size_t>(i)].hit_d)) << i;
            }
        }
}
