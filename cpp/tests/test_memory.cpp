// core/memory.hpp's RecycleBin and RecycledMatrix: a finished buffer is handed back only to a
// request of exactly its size and scalar type, never more than kMaxBytes are kept (the oldest
// dropped first), small buffers are not kept, and (this test build defines
// FASTFS_POISON_RECYCLED, as the sanitized build does) a reused buffer starts as NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <thread>
#include <vector>

#include "fastfs/core/memory.hpp"

using fastfs::Index;
using fastfs::RecycleBin;
using fastfs::RecycledMatrix;

namespace {

constexpr Index kCols = 1024;
// Rows of a double matrix of `mib` MiB with kCols columns.
Index rows_of(Index mib) { return mib * (Index{1} << 20) / (kCols * Index{sizeof(double)}); }

struct BinTest : ::testing::Test {
    void SetUp() override { RecycleBin::instance().clear(); }
    void TearDown() override {
        RecycleBin::instance().set_capacity(RecycleBin::kDefaultBytes);
        RecycleBin::instance().clear();
    }
};

TEST_F(BinTest, SameSizeReusesTheBufferPoisoned) {
    const double* first = nullptr;
    {
        RecycledMatrix<double> a(rows_of(2), kCols);
        a.setOnes();
        first = a.data();
    }
    EXPECT_EQ(RecycleBin::instance().bytes(), std::size_t{2} << 20);
    // The same number of values in another shape: the same buffer, every value NaN.
    RecycledMatrix<double> b(kCols, rows_of(2));
    EXPECT_EQ(b.data(), first);
    EXPECT_EQ(b.rows(), kCols);
    EXPECT_EQ(b.cols(), rows_of(2));
    EXPECT_EQ(RecycleBin::instance().bytes(), 0u);
    EXPECT_TRUE(b.array().isNaN().all());  // this build defines FASTFS_POISON_RECYCLED
}

TEST_F(BinTest, OtherSizeOrScalarGetsANewBuffer) {
    { RecycledMatrix<double> a(rows_of(2), kCols); }
    {
        RecycledMatrix<double> b(rows_of(2) + 1, kCols);
        EXPECT_EQ(RecycleBin::instance().bytes(), std::size_t{2} << 20);  // still kept
        // Same bytes as float: 2 * rows floats of kCols.
        RecycledMatrix<float> c(2 * rows_of(2), kCols);
        EXPECT_EQ(RecycleBin::instance().bytes(), std::size_t{2} << 20);
    }
    // b and c kept too (c dies first): a's 2 MiB, c's 2 MiB and b's 2 MiB and one row.
    EXPECT_EQ(RecycleBin::instance().bytes(),
              (std::size_t{6} << 20) + std::size_t{kCols} * sizeof(double));
}

TEST_F(BinTest, SmallBuffersAreNotKept) {
    { RecycledMatrix<double> a(16, kCols); }  // 128 KiB
    EXPECT_EQ(RecycleBin::instance().bytes(), 0u);
}

TEST_F(BinTest, NeverMoreThanTheCapTheOldestDroppedFirst) {
    const Index rows = rows_of(24);
    const double* oldest = nullptr;
    {
        RecycledMatrix<double> a(rows, kCols), b(rows + 1, kCols), c(rows + 2, kCols);
        oldest = a.data();
        (void)b;
        (void)c;
    }  // c, b, a die in that order: a is the last kept, c the first dropped
    EXPECT_LE(RecycleBin::instance().bytes(), RecycleBin::kDefaultBytes);
    RecycledMatrix<double> again(rows, kCols);
    EXPECT_EQ(again.data(), oldest);
    RecycledMatrix<double> dropped(rows + 2, kCols);  // c was dropped: a new buffer
    EXPECT_LE(RecycleBin::instance().bytes(), RecycleBin::kDefaultBytes);
    // Larger than the cap: never kept.
    { RecycledMatrix<float> huge(rows_of(40), 2 * kCols); }
    EXPECT_LE(RecycleBin::instance().bytes(), RecycleBin::kDefaultBytes);
}

TEST_F(BinTest, CapacitySetLowerFreesTheOldest) {
    {
        RecycledMatrix<double> a(rows_of(2), kCols), b(rows_of(3), kCols);
    }  // b then a kept: 5 MiB
    EXPECT_EQ(RecycleBin::instance().bytes(), std::size_t{5} << 20);
    RecycleBin::instance().set_capacity(std::size_t{2} << 20);  // b (the oldest) goes
    EXPECT_EQ(RecycleBin::instance().bytes(), std::size_t{2} << 20);
    { RecycledMatrix<double> c(rows_of(3), kCols); }  // larger than the capacity: not kept
    EXPECT_EQ(RecycleBin::instance().bytes(), std::size_t{2} << 20);
    RecycleBin::instance().set_capacity(0);
    EXPECT_EQ(RecycleBin::instance().bytes(), 0u);
    { RecycledMatrix<double> d(rows_of(2), kCols); }
    EXPECT_EQ(RecycleBin::instance().bytes(), 0u);
}

TEST_F(BinTest, AssignmentAndMoveKeepTheValues) {
    fastfs::RowMatrix<double> src = fastfs::RowMatrix<double>::Random(rows_of(1) * 2, kCols);
    { RecycledMatrix<double> warm(kCols, rows_of(1) * 2); }
    RecycledMatrix<double> t;
    t = src.transpose();
    EXPECT_TRUE(t.isApprox(src.transpose(), 0.0));
    RecycledMatrix<double> moved = std::move(t);
    EXPECT_TRUE(moved == src.transpose());
    EXPECT_EQ(t.size(), 0);
}

TEST_F(BinTest, ThreadsTakeAndGiveAtOnce) {
    std::vector<std::thread> team;
    for (int t = 0; t < 4; ++t)
        team.emplace_back([t] {
            for (int r = 0; r < 50; ++r) {
                RecycledMatrix<double> a(rows_of(1) + (r + t) % 3, kCols);
                a.setConstant(t);
                ASSERT_TRUE((a.array() == t).all());
            }
        });
    for (auto& th : team) th.join();
    EXPECT_LE(RecycleBin::instance().bytes(), RecycleBin::kDefaultBytes);
}

}  // namespace
