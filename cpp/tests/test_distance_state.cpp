// The distance state's deferred update (DistanceState::defer_feature): a change applied by the
// next nearest_many() pass as it reads each row must leave the state, and give every candidate
// scored in that pass, bit for bit what add_feature() followed by the same pass gives, for
// every block size, sign, thread count and class layout (groups of 1 to 4 rows, one-sample
// classes), and the state must refuse to be read while a change is pending.
#include <gtest/gtest.h>

#include <vector>

#include "fastfs/search/gflip.hpp"
#include "fastfs/state/distance_state.hpp"
#include "gflip_runs.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

struct Case {
    fastfs::ClassLayout layout;
    Mat<double> cols;  // n x m, class order
};

Case make_case(Family fam, Index m, Index n, int classes, std::uint64_t seed) {
    const Mat<double> X = make_data(fam, m, n, seed);
    const Codes codes = make_codes(m, classes, seed + 1);  // with a class of one sample
    Case c{fastfs::ClassLayout::from_codes(codes), Mat<double>(n, m)};
    for (Index p = 0; p < m; ++p) c.cols.col(p) = X.row(c.layout.order[static_cast<std::size_t>(p)]).transpose();
    return c;
}

void assign(fastfs::DistanceState<double>& st, const Case& c, const std::vector<Index>& S) {
    Mat<double> Z(c.cols.cols(), static_cast<Index>(S.size()));
    for (std::size_t j = 0; j < S.size(); ++j) Z.col(static_cast<Index>(j)) = c.cols.row(S[j]).transpose();
    st.assign(Z);
}

const double* col(const Case& c, Index f) { return c.cols.data() + f * c.cols.cols(); }

}  // namespace

TEST(DistanceState, DeferredUpdateEqualsAddFeatureBitForBit) {
    for (Family fam : {Family::continuous, Family::integers, Family::duplicates}) {
        for (Index m : {Index{37}, Index{600}}) {  // 600: above the threaded-pass threshold
            const Index n = 9;
            const Case c = make_case(fam, m, n, 4, 17);
            for (int threads : {1, 2}) {
                fastfs::DistanceState<double> now(c.layout, threads), later(c.layout, threads);
                assign(now, c, {0, 2, 5});
                assign(later, c, {0, 2, 5});
                // A chain of flips, each followed by a block of candidates of growing size.
                const Index flips[] = {1, 2, 7, 0, 3};
                const double signs[] = {1.0, -1.0, 1.0, -1.0, 1.0};
                for (int step = 0; step < 5; ++step) {
                    now.add_feature(col(c, flips[step]), signs[step]);
                    later.defer_feature(col(c, flips[step]), signs[step]);
                    const int count = 1 + 3 * step;
                    std::vector<const double*> cs;
                    std::vector<double> ss;
                    for (int k = 0; k < count; ++k) {
                        cs.push_back(k == 2 ? nullptr : col(c, (k * 5 + step) % n));
                        ss.push_back(k % 2 ? -1.0 : 1.0);
                    }
                    std::vector<fastfs::Nearest<double>> a(static_cast<std::size_t>(count)),
                        b(static_cast<std::size_t>(count));
                    now.nearest_many(count, cs.data(), ss.data(), a.data());
                    later.nearest_many(count, cs.data(), ss.data(), b.data());
                    for (int k = 0; k < count; ++k) {
                        EXPECT_EQ(a[static_cast<std::size_t>(k)].hit, b[static_cast<std::size_t>(k)].hit);
                        EXPECT_EQ(a[static_cast<std::size_t>(k)].miss, b[static_cast<std::size_t>(k)].miss);
                    }
                }
                for (Index i = 0; i < m; ++i)
                    for (Index j = i + 1; j < m; ++j) ASSERT_EQ(now.at(i, j), later.at(i, j));
            }
        }
    }
}

TEST(DistanceState, PendingUpdateIsFlushedOrDropped) {
    const Case c = make_case(Family::integers, 40, 5, 3, 3);
    fastfs::DistanceState<double> now(c.layout, 1), later(c.layout, 1);
    assign(now, c, {0});
    assign(later, c, {0});
    now.add_feature(col(c, 1), 1.0);
    later.defer_feature(col(c, 1), 1.0);
    EXPECT_THROW(later.at(0, 1), std::exception);  // not readable while pending
    later.flush();
    for (Index i = 0; i < 40; ++i)
        for (Index j = i + 1; j < 40; ++j) ASSERT_EQ(now.at(i, j), later.at(i, j));
    // Two deferred changes in a row: the first is applied before the second is kept.
    now.add_feature(col(c, 2), 1.0);
    now.add_feature(col(c, 3), 1.0);
    later.defer_feature(col(c, 2), 1.0);
    later.defer_feature(col(c, 3), 1.0);
    later.mirror();  // flushes too
    now.mirror();
    for (Index i = 0; i < 40; ++i)
        for (Index j = 0; j < 40; ++j)
            if (i != j) {
                ASSERT_EQ(now.full_row(i)[j], later.full_row(i)[j]);
            }
    // assign() replaces D: a pending change is dropped, not added to the new state.
    later.defer_feature(col(c, 4), 1.0);
    assign(later, c, {0, 1});
    assign(now, c, {0, 1});
    for (Index i = 0; i < 40; ++i)
        for (Index j = i + 1; j < 40; ++j) ASSERT_EQ(now.at(i, j), later.at(i, j));
}

// A state built from scratch (assign, assign_columns) sums the features in their given order
// with add_feature()'s expression: every upper-triangle entry must equal, bit for bit, a plain
// scalar loop adding (x_a - x_b)^2 feature by feature from zero, and the state reached by
// add_feature() calls from zero, for row counts that leave partial groups of four and tiles of
// 256 columns, on 1 and 2 threads, with no features (all zero) and with many.
TEST(DistanceState, RebuildSumsTheFeaturesInOrderBitForBit) {
    for (Family fam : {Family::continuous, Family::near_ties, Family::duplicates}) {
        for (Index m : {Index{3}, Index{7}, Index{263}, Index{610}}) {
            const Index n = 23;
            const Case c = make_case(fam, m, n, 3, 41);
            // 20 features: more than one chunk of the four-row kernel (16 features a chunk).
            const std::vector<Index> S = {5, 0, 22, 7, 3, 11, 19, 2, 8, 14, 1, 21, 4, 17, 9, 12, 20, 6, 13, 16};
            for (int threads : {1, 2}) {
                for (std::size_t k : {std::size_t{0}, std::size_t{1}, S.size()}) {
                    const std::vector<Index> sub(S.begin(), S.begin() + static_cast<long>(k));
                    fastfs::DistanceState<double> built(c.layout, threads), added(c.layout, threads);
                    assign(built, c, sub);
                    for (Index f : sub) added.add_feature(col(c, f), 1.0);
                    for (Index a = 0; a < m; ++a)
                        for (Index b = a + 1; b < m; ++b) {
                            double ref = 0.0;
                            for (Index f : sub) {
                                const double d = c.cols(f, a) - c.cols(f, b);
                                ref = ref + d * d;
                            }
                            ASSERT_EQ(built.at(a, b), ref) << m << " " << a << " " << b;
                            ASSERT_EQ(added.at(a, b), ref);
                        }
                }
            }
        }
    }
}

// G-flip keeps one sample of the state per group of equal rows of a class. Its score after
// every epoch must be, bit for bit, e of that epoch's support computed on the whole state of
// every sample (assign, then the nearest hit and miss, then the utility sum).
TEST(GFlip, MergedEqualRowsScoreAsTheWholeStateBitForBit) {
    for (Family fam : {Family::duplicates, Family::integers, Family::continuous}) {
        const Index m = 90, n = 6;
        Mat<double> X = make_data(fam, m, n, 21);
        Codes codes = make_codes(m, 3, 22);
        for (Index i = 60; i < m; ++i) {  // copies of earlier rows, some in another class
            X.row(i) = X.row(i - 60);
            codes[i] = i % 4 == 0 ? (codes[i - 60] + 1) % 2 : codes[i - 60];
        }
        X.col(4).setConstant(1.5);  // a constant feature, never scored
        const fastfs::ClassLayout L = fastfs::ClassLayout::from_codes(codes);
        for (int start : {0, 1}) {
            fastfs::GFlipOptions opt;
            opt.seed = 5;
            opt.first_restart = start;  // restart 0 starts empty, restart 1 full
            std::vector<std::vector<std::uint8_t>> supports;
            std::vector<double> scores;
            fastfs::GFlip<double> g(X, codes, opt);
            const fastfs::GFlipResult res = g.run({}, [&](const fastfs::Progress& p) {
                supports.push_back(*p.support);
                scores.push_back(p.score);
                return false;
            });
            ASSERT_FALSE(supports.empty());
            EXPECT_EQ(scores.back(), res.score);
            for (std::size_t e = 0; e < supports.size(); ++e) {
                std::vector<Index> S;
                for (Index f = 0; f < n; ++f)
                    if (supports[e][static_cast<std::size_t>(f)]) S.push_back(f);
                Mat<double> Z(m, static_cast<Index>(S.size()));
                for (Index p = 0; p < m; ++p)
                    for (std::size_t k = 0; k < S.size(); ++k)
                        Z(p, static_cast<Index>(k)) = X(L.order[static_cast<std::size_t>(p)], S[k]);
                fastfs::DistanceState<double> whole(L, 1);
                whole.assign(Z);
                fastfs::Nearest<double> nn;
                whole.nearest_with(nullptr, 0.0, nn);
                EXPECT_EQ(fastfs::margin_score(nn, fastfs::UtilitySpec{}), scores[e]);
            }
            EXPECT_EQ(res.support[4], start == 1 ? 1 : 0);  // kept from a full start, never added
        }
    }
}

// G-flip's float32 screen (score bounds from a float32 copy of the state, float64 only for the
// candidates the bounds cannot decide) must take exactly the decisions of the float64 pass:
// the same flips in the same order, the same scores bit for bit, on data where the bounds are
// tight, loose or useless: exact ties (integers), duplicate rows (merged groups), differences
// float32 cannot see (near ties, two clusters), tiny values (float32 underflow), mixed column
// scales (removals that cancel, dominant features), for every utility, from the empty and the
// full set, over several epochs, on 1 and 2 threads.
TEST(GFlip, Float32ScreenTakesTheFloat64DecisionsBitForBit) {
    const GFlipVariant variants[] = {{Family::continuous, 1.0, false}, {Family::integers, 1.0, false},
                                     {Family::duplicates, 1.0, false}, {Family::near_ties, 1.0, false},
                                     {Family::two_clusters, 1.0, false}, {Family::continuous, 1e-21, false},
                                     {Family::integers, 1e-150, false}, {Family::continuous, 1.0, true},
                                     {Family::duplicates, 1e3, true}};
    int compared = 0;
    for_each_gflip_case(variants, 120, 14, 31, 9,
                        [&](const Mat<double>& X, const Codes& codes, fastfs::GFlipOptions opt) {
                            std::vector<std::vector<std::uint8_t>> s64, s32;
                            opt.float32_screen = false;
                            const fastfs::GFlipResult ref = run_gflip(X, codes, opt, s64);
                            opt.float32_screen = true;
                            const fastfs::GFlipResult got = run_gflip(X, codes, opt, s32);
                            expect_same_run(got, ref, s32, s64);
                            ++compared;
                        });
    EXPECT_EQ(compared, 54);
}

// The screen must decide candidates on ordinary data (else it only adds a pass), and be off
// by default.
TEST(GFlip, Float32ScreenDecidesMostCandidates) {
    const Index m = 200, n = 40;
    const Mat<double> X = make_data(Family::continuous, m, n, 41);
    const Codes codes = make_codes(m, 2, 42, false);
    fastfs::GFlipOptions opt;
    opt.seed = 3;
    opt.max_epochs = 4;
    opt.float32_screen = true;
    fastfs::GFlip<double> g(X, codes, opt);
    const fastfs::GFlipResult res = g.run();
    EXPECT_GT(res.screened, 0);
    opt.float32_screen = false;
    fastfs::GFlip<double> off(X, codes, opt);
    EXPECT_EQ(off.run().screened, 0);
}
