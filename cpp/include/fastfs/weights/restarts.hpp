// Bookkeeping shared by the gradient searches over feature weights (Simba, RGS): the weights
// they report, w^2 / max(w^2), and the choice of the best restart.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace fastfs {

// 2^-k with 2^k the power of two just above max |w| (1 when w vanished): w * power_of_two_scale
// has its largest entry in [0.5, 1), so its squares can neither overflow nor vanish, and the
// scaling is exact.
inline double power_of_two_scale(const std::vector<double>& w) {
    double top = 0.0;
    for (double x : w) top = std::max(top, std::abs(x));
    if (!(top > 0.0) || !std::isfinite(top)) return 1.0;
    int k = 0;
    std::frexp(top, &k);
    return std::ldexp(1.0, -k);
}

// w^2 / max(w^2), squared after an exact power-of-two scaling (so weights beyond 1e154 work);
// all zero when w vanished.
inline std::vector<double> normalised_squares(const std::vector<double>& w) {
    const double s = power_of_two_scale(w);
    double top = 0.0;
    for (double x : w) top = std::max(top, (x * s) * (x * s));
    std::vector<double> out(w.size(), 0.0);
    if (top > 0.0)
        for (std::size_t f = 0; f < w.size(); ++f) out[f] = (w[f] * s) * (w[f] * s) / top;
    return out;
}

// Restarts are compared in their own order, the first of equal scores winning, so the result
// is the same however they were scheduled. Result has restart_scores, score, best_restart and
// weights. Returns true when restart r became the best.
template <class Result>
bool keep_if_better(Result& best, int r, double score, const std::vector<double>& w) {
    best.restart_scores.push_back(score);
    if (r != 0 && !(score > best.score)) return false;
    best.score = score;
    best.best_restart = r;
    best.weights = normalised_squares(w);
    return true;
}

}  // namespace fastfs
