// Orthogonal matching pursuit for many signals against one dictionary, on the Gram matrix
// (sparse coding, Shalev-Shwartz and Ben-David section 25.3). Every signal costs O(k s^2) given
// G = D D^T (k x k) and its correlations D x (one row of XY): the atom of largest |correlation|
// with the residual enters, the coefficients on the chosen atoms are the least-squares ones
// (Cholesky factor of G on the chosen atoms, grown by one row per step), and the residual
// correlations are updated from G. Parallel over signals; no exception leaves the region.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/types.hpp"

namespace fastfs {

namespace detail {
// Codes one signal; `out` (k values) must be zero. Stops early when the best atom is already
// chosen, its correlation vanishes, or it is (numerically) a combination of the chosen ones.
// Both tests are relative (to the signal's largest correlation, to the atom's squared norm),
// so the codes of c x are c times those of x at any scale (scikit-learn's orthogonal_mp_gram
// compares with machine epsilon itself, which agrees for unit atoms and signals of unit
// scale and codes nothing below about 1e-8).
inline void omp_gram_one(const double* G, Index k, const double* xy, int s, double* out,
                         double* L, double* alpha, double* gamma, double* z, Index* idx) {
    const double tiny = std::numeric_limits<double>::epsilon();
    double top = 0.0;
    for (Index j = 0; j < k; ++j) top = std::max(top, std::abs(xy[j]));
    if (!(top > 0.0)) return;  // a zero signal: the zero code
    // best^2 < eps top^2, without squaring top (no overflow or underflow at extreme scales)
    const double vanish = std::sqrt(tiny) * top;
    for (Index j = 0; j < k; ++j) alpha[j] = xy[j];
    int na = 0;
    for (int t = 0; t < s; ++t) {
        Index lam = 0;
        double best = -1.0;
        for (Index j = 0; j < k; ++j) {
            const double a = std::abs(alpha[j]);
            if (a > best) {
                best = a;
                lam = j;
            }
        }
        bool chosen = false;
        for (int r = 0; r < na; ++r) chosen = chosen || idx[r] == lam;
        if (chosen || best < vanish) break;
        // New row of the Cholesky factor: L[na, :na] = L^{-1} G[chosen, lam].
        double norm2 = 0.0;
        for (int r = 0; r < na; ++r) {
            double v = G[idx[r] * k + lam];
            for (int c = 0; c < r; ++c) v -= L[r * s + c] * L[na * s + c];
            v /= L[r * s + r];
            L[na * s + r] = v;
            norm2 += v * v;
        }
        const double diag = G[lam * k + lam] - norm2;
        if (!(diag > tiny * G[lam * k + lam])) break;
        L[na * s + na] = std::sqrt(diag);
        idx[na++] = lam;
        // gamma = (L L^T)^{-1} xy[chosen].
        for (int r = 0; r < na; ++r) {
            double v = xy[idx[r]];
            for (int c = 0; c < r; ++c) v -= L[r * s + c] * z[c];
            z[r] = v / L[r * s + r];
        }
        for (int r = na - 1; r >= 0; --r) {
            double v = z[r];
            for (int c = r + 1; c < na; ++c) v -= L[c * s + r] * gamma[c];
            gamma[r] = v / L[r * s + r];
        }
        // Residual correlations alpha = xy - G[:, chosen] gamma (rows of the symmetric G).
        for (Index j = 0; j < k; ++j) alpha[j] = xy[j];
        for (int r = 0; r < na; ++r) {
            const double g = gamma[r];
            const double* row = G + idx[r] * k;
            for (Index j = 0; j < k; ++j) alpha[j] -= g * row[j];
        }
    }
    for (int r = 0; r < na; ++r) out[idx[r]] = gamma[r];
}
}  // namespace detail

// G: (k, k) row-major Gram matrix of the atoms; XY: (n, k) row-major correlations of every
// signal with every atom; codes: (n, k) row-major output, at most s nonzero per row.
inline void batch_omp_gram(const double* G, Index k, const double* XY, Index n, int s,
                           double* codes, int threads, const StopHook& stop = {}) {
    require(k >= 1, "dictionary: needs at least one atom");
    require(s >= 1 && s <= k, "n_nonzero_coefs: must lie in 1..n_components");
    for (Index i = 0; i < n * k; ++i) codes[i] = 0.0;
    RegionErrors errors;
    StopPoll poll(stop);
    const auto ss = static_cast<std::size_t>(s);
#pragma omp parallel num_threads(resolve_threads(threads))
    {
        std::vector<double> L, alpha, gamma, z;
        std::vector<Index> idx;
        errors.run([&] {
            L.assign(ss * ss, 0.0);
            alpha.resize(static_cast<std::size_t>(k));
            gamma.resize(ss);
            z.resize(ss);
            idx.resize(ss);
        });
#pragma omp for schedule(dynamic, 64)
        for (Index i = 0; i < n; ++i) {
            if (errors.failed() || poll.stopped()) continue;
            detail::omp_gram_one(G, k, XY + i * k, s, codes + i * k, L.data(), alpha.data(),
                                 gamma.data(), z.data(), idx.data());
        }
    }
    errors.rethrow();
    poll.check();
}

}  // namespace fastfs
