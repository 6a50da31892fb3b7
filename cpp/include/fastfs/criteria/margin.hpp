// Hypothesis margins (SPEC 2.2) and the evaluation function e(w) = sum u(theta) (SPEC 2.3),
// from nearest hit / miss distances: of the shared distance state (G-flip) or of the shared
// neighbour query (margins, Simba).
#pragma once
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "../state/distance_state.hpp"
#include "../core/errors.hpp"
#include "../neighbours/finder.hpp"
#include "../neighbours/gram_screen.hpp"

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

    // u'(theta), for the gradient methods (zero_one has none and is refused before).
    double derivative(double theta) const {
        if (kind == Utility::sigmoid) {
            const double s = 1.0 / (1.0 + std::exp(-beta * theta));
            return beta * s * (1.0 - s);
        }
        return 1.0;
    }

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

// theta of every sample (caller's order) under weights w (empty = all ones), from the shared
// neighbour query: no m x m matrix, O(n_threads * n_features) memory. `stop` is polled by the
// calling thread; `callback` gets theta after every step (NaN for the samples not reached yet;
// score = the sum of u(theta) over the samples done, with `u`) and may end the pass there.
// `grouped` (optional): the groups of equal rows of (X, codes), for a caller that has them.
template <class T>
inline std::vector<double> margins_by_query(const MatrixRef<T>& X, const Labels& codes,
                                            const std::vector<double>& w, int n_threads,
                                            const StopHook& stop = {},
                                            const ProgressHook& callback = {},
                                            PassStatus* status = nullptr,
                                            const UtilitySpec& u = {},
                                            const GroupedRows<T>* grouped = nullptr) {
    std::vector<double> w2(static_cast<std::size_t>(X.cols()), 1.0);
    for (std::size_t f = 0; f < w.size(); ++f) w2[f] = w[f] * w[f];
    std::vector<HitMiss> hm;
    std::vector<double> theta(static_cast<std::size_t>(X.rows()),
                              std::numeric_limits<double>::quiet_NaN());
    double running = 0.0;
    Index step = 0;
    std::function<bool(Index, Index)> step_done;
    if (callback)
        step_done = [&](Index lo, Index hi) {
            for (Index i = lo; i < hi; ++i) {
                const auto& h = hm[static_cast<std::size_t>(i)];
                const double t = margin_from_squared(h.hit_d, h.miss_d);
                theta[static_cast<std::size_t>(i)] = t;
                if (!std::isnan(t)) running += u(t);
            }
            return callback(Progress::pass(++step, hi, running, &theta)) && hi < X.rows();
        };
    // Without progress reports: every sample at once from blocked Gram products.
    const int threads = resolve_threads(n_threads);
    const bool screened =
        !callback && (grouped ? gram_nearest_hit_miss(*grouped, X, codes, w2.data(), threads, hm, stop)
                              : gram_nearest_hit_miss(X, codes, w2.data(), threads, hm, stop));
    const Index done =
        screened
            ? X.rows()
            : all_nearest_hit_miss(X, codes, w2.data(), threads, hm, stop, step_done);
    for (Index i = 0; i < done; ++i)
        theta[static_cast<std::size_t>(i)] = margin_from_squared(hm[static_cast<std::size_t>(i)].hit_d, hm[static_cast<std::size_t>(i)].miss_d);
    if (status) *status = PassStatus{done, done < X.rows()};
    return theta;
}

// theta of the query samples q0 .. q1-1 only (neighbours among all samples) under weights w
// (empty = all ones): the same values as margins_by_query gives them, for a block of queries.
template <class T>
inline std::vector<double> margins_of_range(const MatrixRef<T>& X, const Labels& codes,
                                            const std::vector<double>& w, Index q0, Index q1,
                                            int n_threads, const StopHook& stop = {}) {
    std::vector<double> w2(static_cast<std::size_t>(X.cols()), 1.0);
    for (std::size_t f = 0; f < w.size(); ++f) w2[f] = w[f] * w[f];
    std::vector<HitMiss> hm;
    if (q0 != 0 || q1 != X.rows() ||
        !gram_nearest_hit_miss(X, codes, w2.data(), resolve_threads(n_threads), hm, stop))
        nearest_hit_miss_range(X, codes, w2.data(), resolve_threads(n_threads), q0, q1, hm, stop);
    std::vector<double> theta(hm.size());
    for (std::size_t i = 0; i < hm.size(); ++i)
        theta[i] = margin_from_squared(hm[i].hit_d, hm[i].miss_d);
    return theta;
}

// e = sum of u(theta) over the samples with a margin (NaN ones add nothing), in sample order.
inline double utility_sum(const std::vector<double>& theta, const UtilitySpec& u) {
    double total = 0.0;
    for (double t : theta)
        if (!std::isnan(t)) total += u(t);
    return total;
}

}  // namespace fastfs
