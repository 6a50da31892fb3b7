// Small building blocks: ClassLayout, the deterministic random streams, and the OpenMP error
// plumbing (no exception may leave a parallel region; it is rethrown after it).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <set>
#include <stdexcept>
#include <vector>

#include "fastfs/data/class_layout.hpp"
#include "fastfs/core/parallel.hpp"
#include "fastfs/core/random.hpp"
#include "reference.hpp"

using fastfs::Index;
using fastfs_test::Codes;

TEST(ClassLayout, GroupsClassesContiguouslyKeepingIndexOrderInsideEach) {
    Codes codes(9);
    codes << 2, 0, 1, 0, 2, 2, 0, 1, 0;
    const auto L = fastfs::ClassLayout::from_codes(codes);
    ASSERT_EQ(L.n_samples(), 9);
    ASSERT_EQ(L.n_classes(), 3);
    // Expected from the definition: class 0's samples in index order, then class 1's, ...
    std::vector<Index> expected;
    for (std::int64_t c = 0; c < 3; ++c)
        for (Index i = 0; i < 9; ++i)
            if (codes[i] == c) expected.push_back(i);
    EXPECT_EQ(L.order, expected);
    EXPECT_EQ(L.begin, (std::vector<Index>{0, 4, 6, 9}));
    for (Index p = 0; p < 9; ++p) {
        EXPECT_EQ(L.position[static_cast<std::size_t>(L.order[static_cast<std::size_t>(p)])], p);
        EXPECT_EQ(L.cls[static_cast<std::size_t>(p)], codes[L.order[static_cast<std::size_t>(p)]]);
        EXPECT_EQ(L.class_end_of(p), L.begin[static_cast<std::size_t>(L.cls[static_cast<std::size_t>(p)]) + 1]);
    }
}

TEST(ClassLayout, EmptyClassCodeLeavesAnEmptyRange) {
    Codes codes(4);
    codes << 0, 2, 0, 2;  // no sample of class 1
    const auto L = fastfs::ClassLayout::from_codes(codes);
    EXPECT_EQ(L.begin, (std::vector<Index>{0, 2, 2, 4}));
}

TEST(ClassLayout, RejectsTooFewSamplesAndNegativeCodes) {
    Codes one(1);
    one << 0;
    EXPECT_THROW(fastfs::ClassLayout::from_codes(one), std::invalid_argument);
    Codes negative(3);
    negative << 0, -1, 1;
    EXPECT_THROW(fastfs::ClassLayout::from_codes(negative), std::invalid_argument);
}

namespace {
std::vector<std::uint64_t> draw(std::uint64_t seed, std::uint64_t stream, int count) {
    fastfs::Rng rng(seed, stream);
    std::vector<std::uint64_t> out(static_cast<std::size_t>(count));
    for (auto& v : out) v = rng.next();
    return out;
}

// Every stream's first numbers, the streams generated side by side on `threads` threads.
std::vector<std::vector<std::uint64_t>> streams_on(int threads, int n_streams) {
    std::vector<std::vector<std::uint64_t>> out(static_cast<std::size_t>(n_streams));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int s = 0; s < n_streams; ++s) out[static_cast<std::size_t>(s)] = draw(42, static_cast<std::uint64_t>(s), 64);
    return out;
}
}  // namespace

TEST(Random, SameSeedAndStreamGiveTheSameNumbers) {
    EXPECT_EQ(draw(7, 3, 100), draw(7, 3, 100));
    EXPECT_NE(draw(7, 3, 100), draw(7, 4, 100));
    EXPECT_NE(draw(7, 3, 100), draw(8, 3, 100));
}

TEST(Random, StreamsDoNotDependOnTheThreadCount) {
    const auto one = streams_on(1, 16);
    EXPECT_EQ(one, streams_on(2, 16));
    EXPECT_EQ(one, streams_on(3, 16));
    // Distinct streams are distinct sequences.
    std::set<std::vector<std::uint64_t>> distinct(one.begin(), one.end());
    EXPECT_EQ(distinct.size(), one.size());
}

TEST(Random, BelowAndUniformStayInRangeAndCoverIt) {
    fastfs::Rng rng(1, 0);
    std::vector<int> count(7, 0);
    for (int t = 0; t < 70000; ++t) {
        const auto v = rng.below(7);
        ASSERT_LT(v, 7u);
        ++count[static_cast<std::size_t>(v)];
    }
    // 10000 expected per value; 6 standard deviations is about 600.
    for (int c : count) EXPECT_NEAR(c, 10000, 600);
    double sum = 0.0;
    for (int t = 0; t < 10000; ++t) {
        const double u = rng.uniform();
        ASSERT_GE(u, 0.0);
        ASSERT_LT(u, 1.0);
        sum += u;
    }
    EXPECT_NEAR(sum / 10000, 0.5, 0.02);
    EXPECT_EQ(rng.below(1), 0u);
}

TEST(Random, PermutationsAndVisitingOrderVisitEverySampleOncePerPass) {
    fastfs::Rng rng(5, 1);
    const auto p = rng.permutation<Index>(50);
    std::vector<Index> sorted = p, ids(50);
    std::sort(sorted.begin(), sorted.end());
    std::iota(ids.begin(), ids.end(), Index{0});
    EXPECT_EQ(sorted, ids);
    EXPECT_NE(p, ids);

    fastfs::Rng a(9, 2), b(9, 2);
    const auto order = fastfs::visiting_order<Index>(a, 10, 25);
    ASSERT_EQ(order.size(), 25u);
    EXPECT_EQ(order, fastfs::visiting_order<Index>(b, 10, 25));
    for (int pass = 0; pass < 2; ++pass) {
        std::vector<Index> block(order.begin() + 10 * pass, order.begin() + 10 * (pass + 1));
        std::sort(block.begin(), block.end());
        EXPECT_EQ(block, std::vector<Index>(ids.begin(), ids.begin() + 10));
    }
}

TEST(RegionErrors, AnExceptionInsideARegionIsRethrownAfterIt) {
    for (int threads : {1, 2, 4}) {
        fastfs::RegionErrors errors;
        std::atomic<int> done{0};
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (int t = 0; t < 200; ++t) {
            errors.run([&] {
                if (t == 17) throw std::out_of_range("item 17");
                ++done;
            });
        }
        EXPECT_TRUE(errors.failed());
        EXPECT_LT(done.load(), 200);
        try {
            errors.rethrow();
            FAIL() << "no exception rethrown with " << threads << " threads";
        } catch (const std::out_of_range& e) {
            EXPECT_STREQ(e.what(), "item 17");
        }
    }
}

TEST(RegionErrors, NothingToRethrowWhenNoWorkFailed) {
    fastfs::RegionErrors errors;
    int sum = 0;
#pragma omp parallel for reduction(+ : sum) num_threads(2)
    for (int t = 0; t < 10; ++t) errors.run([&] { sum += t; });
    EXPECT_FALSE(errors.failed());
    EXPECT_NO_THROW(errors.rethrow());
    EXPECT_EQ(sum, 45);
}

TEST(RegionErrors, RestartsSideBySideRethrowTheFailureOfOneRestart) {
    auto run = [](int r, auto&& keep_going, std::vector<double>& w) -> double {
        for (int step = 0; step < 50; ++step) {
            if (!keep_going()) return 0.0;
            if (r == 2 && step == 3) throw std::runtime_error("restart 2 failed");
        }
        w.assign(3, static_cast<double>(r));
        return static_cast<double>(r);
    };
    EXPECT_THROW(fastfs::restarts_side_by_side(4, 2, {}, run), std::runtime_error);
    // Without a failure every restart's score and weights arrive, whatever the thread count.
    auto ok = [](int r, auto&&, std::vector<double>& w) -> double {
        w.assign(2, r * 0.5);
        return r;
    };
    const auto out = fastfs::restarts_side_by_side(5, 2, {}, ok);
    EXPECT_EQ(out.scores, (std::vector<double>{0, 1, 2, 3, 4}));
    EXPECT_EQ(out.finals[3], (std::vector<double>{1.5, 1.5}));
}

TEST(StopPoll, AStopRequestEndsTheLoopWithInterruptedAfterTheRegion) {
    int calls = 0;
    const fastfs::StopHook hook = [&] { return ++calls >= 3; };
    fastfs::StopPoll poll(hook);
    std::atomic<int> done{0};
#pragma omp parallel for schedule(static, 1) num_threads(2)
    for (int t = 0; t < 1000; ++t) {
        if (poll.stopped()) continue;
        ++done;
    }
    EXPECT_THROW(poll.check(), fastfs::Interrupted);
    EXPECT_LT(done.load(), 1000);
}
