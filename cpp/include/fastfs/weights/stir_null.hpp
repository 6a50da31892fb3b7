// STIR's variance under the null hypothesis (fastfs.stir; Le, Urbanowicz, Moore and McKinney
// 2019, with the variance of dependent pairs): per feature f, the Hoeffding decomposition
// d(x, z) = theta + g(x) + g(z) + r(x, z) of d = |z_x - z_z| over the ordered pairs of distinct
// samples, z the min-max scaled column (theta the mean of d, g(x) = mean_{z != x} d(x, z) -
// theta), gives
//    v1_f = sum_x a_x^2 g(x)^2   and   s2_f = max(Var d - 2 Var g, 0)  (the variance of r),
// a_x the sample weights of STIR's pair graph. O(m log m) per feature: sorted, the sum of
// |s_r - s_j| over j is s_r r - (cs_r - s_r) + (cs_last - cs_r) - s_r (m - 1 - r) with cs the
// running sum. Features go in parallel, each computed alone in a fixed order, so the values do
// not depend on the thread count. Memory O(threads x m).
#pragma once
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"

namespace fastfs {

template <class T>
void stir_null_components(const MatrixRef<T>& X, const std::vector<double>& a, int n_threads,
                          std::vector<double>& v1, std::vector<double>& s2) {
    const Index m = X.rows(), n = X.cols();
    require(m >= 2, "X: need at least 2 samples");
    require(static_cast<Index>(a.size()) == m, "a: expected one weight per sample");
    v1.assign(static_cast<std::size_t>(n), 0.0);
    s2.assign(static_cast<std::size_t>(n), 0.0);
    std::vector<double> a2(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) a2[i] = a[i] * a[i];
    const double md = static_cast<double>(m), m1 = static_cast<double>(m - 1);
    RegionErrors errors;
#pragma omp parallel num_threads(resolve_threads(n_threads))
    {
        std::vector<double> col, s, g;
        std::vector<Index> order;
        errors.run([&] {
            col.resize(static_cast<std::size_t>(m));
            s.resize(static_cast<std::size_t>(m));
            g.resize(static_cast<std::size_t>(m));
            order.resize(static_cast<std::size_t>(m));
        });
        const bool ready = order.size() == static_cast<std::size_t>(m);
#pragma omp for schedule(dynamic, 16)
        for (Index f = 0; f < n; ++f) {
            if (!ready) continue;
            double lo = static_cast<double>(X(0, f)), hi = lo;
            for (Index i = 1; i < m; ++i) {
                lo = std::min(lo, static_cast<double>(X(i, f)));
                hi = std::max(hi, static_cast<double>(X(i, f)));
            }
            const double range = hi - lo;
            for (Index i = 0; i < m; ++i)
                col[static_cast<std::size_t>(i)] =
                    range > 0 ? (static_cast<double>(X(i, f)) - lo) / range : 0.0;
            std::iota(order.begin(), order.end(), Index{0});
            std::sort(order.begin(), order.end(), [&](Index p, Index q) {
                const double vp = col[static_cast<std::size_t>(p)], vq = col[static_cast<std::size_t>(q)];
                return vp < vq || (vp == vq && p < q);
            });
            double total = 0.0, mean = 0.0;
            for (Index r = 0; r < m; ++r) {
                s[static_cast<std::size_t>(r)] = col[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])];
                total += s[static_cast<std::size_t>(r)];
            }
            mean = total / md;
            // g before centring, then theta = its mean
            double cs = 0.0, theta = 0.0;
            for (Index r = 0; r < m; ++r) {
                const double v = s[static_cast<std::size_t>(r)], rr = static_cast<double>(r);
                cs += v;
                const double tot = v * rr - (cs - v) + (total - cs) - v * (m1 - rr);
                g[static_cast<std::size_t>(r)] = tot / m1;
                theta += g[static_cast<std::size_t>(r)];
            }
            theta /= md;
            double sum_v1 = 0.0, sum_g2 = 0.0, var = 0.0;
            for (Index r = 0; r < m; ++r) {
                const double gr = g[static_cast<std::size_t>(r)] - theta;
                sum_v1 += a2[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])] * gr * gr;
                sum_g2 += gr * gr;
                const double dv = s[static_cast<std::size_t>(r)] - mean;
                var += dv * dv;
            }
            // mean of d^2 over ordered pairs x != z: 2 m / (m - 1) times the population variance
            const double var_d = 2.0 * md / m1 * (var / md) - theta * theta;
            v1[static_cast<std::size_t>(f)] = sum_v1;
            s2[static_cast<std::size_t>(f)] = std::max(var_d - 2.0 * (sum_g2 / md), 0.0);
        }
    }
    errors.rethrow();
}

}  // namespace fastfs
