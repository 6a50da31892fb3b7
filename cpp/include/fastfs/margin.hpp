// Hypothesis margins (SPEC 2.2) and the evaluation function e(w) = sum u(theta) (SPEC 2.3),
// computed from nearest hit / miss distances of the shared distance state.
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "distance_state.hpp"
#include "errors.hpp"

namespace fastfs {

enum class Utility { linear, zero_one, sigmoid };

inline Utility parse_utility(const std::string& name) {
    if (name == "linear") return Utility::linear;
    if (name == "zero_one") return Utility::zero_one;
    if (name == "sigmoid") return Utility::sigmoid;
    throw std::invalid_argument("utility: unknown value '" + name +
                                "'; valid options are 'linear', 'zero_one', 'sigmoid'");
}

struct UtilitySpec {
    Utility kind = Utility::linear;
    double beta = 1.0;

    double operator()(double theta) const {
        switch (kind) {
            case Utility::linear: return theta;
            case Utility::zero_one: return theta > 0.0 ? 1.0 : 0.0;
            case Utility::sigmoid: return 1.0 / (1.0 + std::exp(-beta * theta));
        }
        return theta;
    }
};

// theta from squared distances; NaN when the sample has no hit or no miss (SPEC 1.4).
// Rounding in D - delta can leave tiny negatives where the true distance is 0: clamp them.
template <class T>
inline double margin_from_squared(T hit2, T miss2) {
    const double h = static_cast<double>(hit2), s = static_cast<double>(miss2);
    if (std::isinf(h) || std::isinf(s)) return std::numeric_limits<double>::quiet_NaN();
    return 0.5 * (std::sqrt(std::max(s, 0.0)) - std::sqrt(std::max(h, 0.0)));
}

// e = sum of u(theta) over samples that have both a hit and a miss. Summed serially in class
// order so the value does not depend on the thread count.
template <class T>
inline double margin_score(const Nearest<T>& nn, const UtilitySpec& u) {
    double total = 0.0;
    const std::size_t m = nn.hit.size();
    for (std::size_t p = 0; p < m; ++p) {
        const double theta = margin_from_squared(nn.hit[p], nn.miss[p]);
        if (!std::isnan(theta)) total += u(theta);
    }
    return total;
}

// Margins in the caller's original sample order.
template <class T>
inline std::vector<double> margins_original_order(const Nearest<T>& nn, const ClassLayout& L) {
    std::vector<double> theta(nn.hit.size());
    for (std::size_t p = 0; p < theta.size(); ++p)
        theta[static_cast<std::size_t>(L.order[p])] = margin_from_squared(nn.hit[p], nn.miss[p]);
    return theta;
}

// Rows of X (original order) scaled by w and regrouped in class order: the input of
// DistanceState::assign for a weighted distance. Empty w = all ones.
template <class T>
inline RowMatrix<T> weighted_rows_in_class_order(const MatrixRef<T>& X, const std::vector<T>& w,
                                                 const ClassLayout& L) {
    RowMatrix<T> Z(X.rows(), X.cols());
    for (Index p = 0; p < X.rows(); ++p) {
        Z.row(p) = X.row(L.order[p]);
        if (!w.empty())
            for (Index j = 0; j < X.cols(); ++j) Z(p, j) *= w[static_cast<std::size_t>(j)];
    }
    return Z;
}

}  // namespace fastfs
