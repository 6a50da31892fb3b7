// The float32 screen of the distance criteria (criteria/distance.hpp): leave-one-out 1-NN
// accuracy of every candidate addition S + x, decided in float32 where a rigorous bound allows
// and exactly otherwise, must be the float64 answer; here against a brute-force 1-NN in long
// double (nearest other sample, lowest index among equal distances, right when its class is the
// sample's).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fastfs/criteria/distance.hpp"
#include "reference.hpp"

using namespace fastfs_test;

namespace {

template <class T>
double ref_accuracy(const Mat<T>& X, const Codes& codes, const std::vector<Index>& S) {
    return static_cast<double>(ref_loo_1nn_correct(X, codes, S)) / static_cast<double>(X.rows());
}

template <class T>
void check(const Mat<T>& X, const Codes& codes, const std::vector<Index>& S, const std::string& label) {
    SCOPED_TRACE(label);
    const Index n = X.cols();
    std::vector<Index> cands;
    for (Index f = 0; f < n; ++f)
        if (std::find(S.begin(), S.end(), f) == S.end()) cands.push_back(f);
    std::vector<double> want(cands.size());
    for (std::size_t c = 0; c < cands.size(); ++c) {
        std::vector<Index> T2 = S;
        T2.push_back(cands[c]);
        want[c] = ref_accuracy(X, codes, T2);
    }
    for (int threads : {1, 2}) {
        fastfs::DistanceCriterion crit(X, codes, fastfs::DistanceKind::knn_accuracy, fastfs::UtilitySpec{}, 1,
                                       threads);
        crit.reset(S);
        EXPECT_EQ(crit.current(), ref_accuracy(X, codes, S)) << threads << " threads";
        std::vector<double> got(cands.size());
        crit.score_additions(cands, got.data());
        for (std::size_t c = 0; c < cands.size(); ++c)
            EXPECT_EQ(got[c], want[c]) << "candidate " << cands[c] << ", " << threads << " threads";
        // The same subsets from scratch, and after committing an addition.
        EXPECT_EQ(crit.evaluate({cands[0]}), ref_accuracy(X, codes, {cands[0]}));
        crit.add(cands[0]);
        std::vector<Index> S1 = S;
        S1.push_back(cands[0]);
        std::vector<double> next(cands.size() - 1);
        crit.score_additions(std::vector<Index>(cands.begin() + 1, cands.end()), next.data());
        for (std::size_t c = 1; c < cands.size(); ++c) {
            std::vector<Index> T2 = S1;
            T2.push_back(cands[c]);
            EXPECT_EQ(next[c - 1], ref_accuracy(X, codes, T2)) << "after adding " << cands[0] << ", candidate "
                                                               << cands[c] << ", " << threads << " threads";
        }
    }
}

}  // namespace

template <class T>
class DistanceScreenTest : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DistanceScreenTest, Scalars);

TYPED_TEST(DistanceScreenTest, OneNnAccuracyOfAdditionsEqualsBruteForce) {
    using T = TypeParam;
    std::uint64_t seed = 600;
    for (Family family : kAllFamilies) {
        for (Index m : {60, 300}) {
            const Mat<T> X = make_data(family, m, 12, ++seed).cast<T>();
            for (int classes : {2, 4}) {
                const Codes codes = make_codes(m, classes, ++seed);
                check(X, codes, {0, 3, 5}, "family " + std::to_string(static_cast<int>(family)) + ", m " +
                                               std::to_string(m) + ", " + std::to_string(classes) + " classes");
            }
        }
    }
}

// Extreme scales within the rescaling contract (the screen is off beyond 1e15), and tie-ridden
// integer columns whose ties only columns 2^-edge smaller break (invisible to float32).
TYPED_TEST(DistanceScreenTest, ExtremeAndMixedScales) {
    using T = TypeParam;
    const int edge = std::is_same<T, float>::value ? 40 : 200;
    const Index m = 80, n = 10;
    for (int e : exponents<T>()) {
        Mat<double> X = make_data(Family::continuous, m, n, 700 + static_cast<std::uint64_t>(e + 1000));
        X *= std::ldexp(1.0, e);
        check<T>(X.cast<T>(), make_codes(m, 3, 701), {1, 2}, "scale 2^" + std::to_string(e));
    }
    Mat<double> X = make_data(Family::integers, m, n, 702);
    const Mat<double> small = make_data(Family::continuous, m, n, 703);
    for (Index f = 5; f < n; ++f) X.col(f) = small.col(f) * std::ldexp(1.0, -edge);
    check<T>(X.cast<T>(), make_codes(m, 3, 704), {0, 1}, "mixed column scales");
}
