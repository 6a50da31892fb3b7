// The kept nearest pairs of a distance state (state/kept_neighbours.hpp): for every candidate,
// sign, accepted flip, class layout (a one-sample class, classes of at most
// K members) and kind of data (exact ties, copies, near ties), the nearest hits and misses must
// be the full pass's (DistanceState::nearest_with on a state given the same flips) bit for bit;
// and G-flip must take the same decisions with the lists as without, on 1 and 2 threads.
#include <gtest/gtest.h>

#include <vector>

#include "fastfs/search/gflip.hpp"
#include "fastfs/state/distance_state.hpp"
#include "fastfs/state/kept_neighbours.hpp"
#include "gflip_runs.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

struct Case {
    fastfs::ClassLayout layout;
    Mat<double> cols;  // n x m, class order
};

Case make_case(Family fam, Index m, Index n, int classes, std::uint64_t seed, double scale) {
    const Mat<double> X = make_data(fam, m, n, seed) * scale;
    const Codes codes = make_codes(m, classes, seed + 1);  // with a class of one sample
    Case c{fastfs::ClassLayout::from_codes(codes), Mat<double>(n, m)};
    for (Index p = 0; p < m; ++p) c.cols.col(p) = X.row(c.layout.order[static_cast<std::size_t>(p)]).transpose();
    return c;
}

void expect_same(const fastfs::Nearest<double>& got, const fastfs::Nearest<double>& ref) {
    ASSERT_EQ(got.hit.size(), ref.hit.size());
    for (std::size_t a = 0; a < ref.hit.size(); ++a) {
        EXPECT_EQ(got.hit[a], ref.hit[a]) << "hit of " << a;
        EXPECT_EQ(got.miss[a], ref.miss[a]) << "miss of " << a;
    }
}

}  // namespace

// Lists built from a state of the first features, then every other feature scored as an
// addition and every feature of the state as a removal, before and after each accepted flip of
// either sign, against the full pass of a state that took the same flips with add_feature().
TEST(KeptNeighbours, GiveTheFullPassMinimaBitForBit) {
    struct Variant {
        Family fam;
        double scale;
        int classes;
    };
    const Variant variants[] = {{Family::continuous, 1.0, 2},  {Family::integers, 1.0, 3},
                                {Family::duplicates, 1.0, 2},  {Family::near_ties, 1.0, 2},
                                {Family::two_clusters, 1.0, 4}, {Family::continuous, 1e-150, 2},
                                {Family::integers, 1.0, 40}};  // classes of a few members
    int compared = 0;
    for (const Variant& v : variants)
        for (Index m : {Index{30}, Index{150}}) {
            const Index n = 24, in = 8;
            const Case c = make_case(v.fam, m, n, v.classes, 71 + static_cast<std::uint64_t>(m), v.scale);
            SCOPED_TRACE(::testing::Message() << "family " << static_cast<int>(v.fam) << " m " << m
                                              << " classes " << v.classes);
            auto col = [&](Index f) { return c.cols.row(f).data(); };
            fastfs::DistanceState<double> kept_state(c.layout, 1), ref(c.layout, 1);
            std::vector<const double*> first;
            for (Index f = 0; f < in; ++f) first.push_back(col(f));
            kept_state.assign_columns(static_cast<int>(in), first.data());
            ref.assign_columns(static_cast<int>(in), first.data());
            kept_state.mirror();
            fastfs::KeptNeighbours<double> kept(c.layout);
            kept.build(kept_state);
            std::vector<char> member(static_cast<std::size_t>(n), 0);
            for (Index f = 0; f < in; ++f) member[static_cast<std::size_t>(f)] = 1;
            auto check_all = [&] {
                for (Index f = 0; f < n; ++f) {
                    const double sign = member[static_cast<std::size_t>(f)] ? -1.0 : 1.0;
                    const double lo = c.cols.row(f).minCoeff(), hi = c.cols.row(f).maxCoeff();
                    fastfs::Nearest<double> got, want;
                    kept.nearest_with(kept_state, col(f), sign, lo, hi, got);
                    ref.nearest_with(col(f), sign, want);
                    expect_same(got, want);
                    ++compared;
                }
            };
            check_all();
            // Flips: add 8, 9, remove 2, add 10, remove 8: the kept entries drift from the nearest
            // ones, the bounds must still hold; then lists built afresh from the updated state.
            const std::pair<Index, double> flips[] = {{8, 1.0}, {9, 1.0}, {2, -1.0}, {10, 1.0}, {8, -1.0}};
            for (const auto& [f, sign] : flips) {
                kept.accept(kept_state, col(f), sign, c.cols.row(f).minCoeff(), c.cols.row(f).maxCoeff());
                ref.add_feature(col(f), sign);
                member[static_cast<std::size_t>(f)] = sign > 0;
                EXPECT_TRUE(kept_state.mirrored());
                check_all();
            }
            // The state is the other one, entry for entry, in both triangles.
            for (Index a = 0; a < m; ++a)
                for (Index b = 0; b < m; ++b) {
                    if (a == b) continue;
                    ASSERT_EQ(kept_state.full_row(a)[b], ref.at(a, b));
                }
            kept.build(kept_state);
            check_all();
        }
    EXPECT_EQ(compared, 7 * 2 * 24 * 7);
}

// On continuous data with a dozen features in the state, the lists decide the additions for
// almost every sample (otherwise they only add work).
TEST(KeptNeighbours, DecideMostSamplesOfAnAddition) {
    const Index m = 400, n = 40, in = 12;
    const Case c = make_case(Family::continuous, m, n, 2, 5, 1.0);
    fastfs::DistanceState<double> state(c.layout, 1);
    std::vector<const double*> first;
    for (Index f = 0; f < in; ++f) first.push_back(c.cols.row(f).data());
    state.assign_columns(static_cast<int>(in), first.data());
    state.mirror();
    fastfs::KeptNeighbours<double> kept(c.layout);
    kept.build(state);
    Index rows = 0;
    for (Index f = in; f < n; ++f) {
        fastfs::Nearest<double> out;
        rows += kept.nearest_with(state, c.cols.row(f).data(), 1.0, c.cols.row(f).minCoeff(),
                                  c.cols.row(f).maxCoeff(), out);
    }
    EXPECT_LT(rows, (n - in) * m / 20);  // fewer than 5% of the samples scan their rows
}

// G-flip with and without the lists (as by default, and on every addition they can score): the
// same flips, scores and histories, bit for bit, for every utility, from the empty and the full
// set, on 1 and 2 threads.
TEST(GFlip, KeptNeighboursTakeTheFullPassDecisionsBitForBit) {
    const GFlipVariant variants[] = {{Family::continuous, 1.0, false}, {Family::integers, 1.0, false},
                                     {Family::duplicates, 1.0, false}, {Family::near_ties, 1.0, false},
                                     {Family::two_clusters, 1.0, false}, {Family::continuous, 1e-21, false},
                                     {Family::continuous, 1.0, true}};
    int compared = 0;
    long kept_scored = 0, total = 0;
    for_each_gflip_case(variants, 300, 40, 41, 11,
                        [&](const Mat<double>& X, const Codes& codes, fastfs::GFlipOptions opt) {
                            opt.kept_neighbours = false;
                            std::vector<std::vector<std::uint8_t>> s_full;
                            const fastfs::GFlipResult ref = run_gflip(X, codes, opt, s_full);
                            EXPECT_EQ(ref.kept, 0);
                            // 1: the lists as by default, 2: on every addition they can score.
                            for (int lists : {1, 2}) {
                                opt.kept_neighbours = true;
                                opt.kept_always = lists == 2;
                                std::vector<std::vector<std::uint8_t>> s_kept;
                                const fastfs::GFlipResult got = run_gflip(X, codes, opt, s_kept);
                                SCOPED_TRACE(::testing::Message() << "lists " << lists);
                                expect_same_run(got, ref, s_kept, s_full);
                                if (lists == 2) {
                                    kept_scored += got.kept;
                                    total += got.exact;
                                }
                                ++compared;
                            }
                        });
    EXPECT_EQ(compared, 84);
    EXPECT_GT(kept_scored * 3, total);  // every addition they could: a third of the candidates
}
