// Generated features of binarised images (Navot's thesis, section 5.3.2): a feature is the
// AND of 1..8 pixels, each possibly negated, OR-ed over every shift (dy, dx) with
// |dy|, |dx| <= shift that keeps all its inputs inside the image.
//
// Images are bit-packed across images: bit (i % 64) of word i / 64 of pixel p's row is pixel p
// of image i. A feature's value on every image is then a few word operations per shift and
// input, over n_images / 64 words: one pass over the images for all of them.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/random.hpp"
#include "../core/types.hpp"

namespace fastfs::generated {

constexpr int kMaxInputs = 8;
constexpr int kMaxShift = 8;

inline Index words_for(Index n_images) { return (n_images + 63) / 64; }

// images: (n_images, n_pixels) row-major, nonzero = on. out: (n_pixels, words_for(n_images)).
inline void pack_images(const std::uint8_t* images, Index n_images, Index n_pixels,
                        std::uint64_t* out, int threads) {
    const Index nw = words_for(n_images);
    const Index total = n_pixels * nw;
#pragma omp parallel for num_threads(resolve_threads(threads)) schedule(static)
    for (Index k = 0; k < total; ++k) {
        const Index p = k / nw, word = k % nw;
        const Index first = word * 64, last = std::min<Index>(first + 64, n_images);
        std::uint64_t bits = 0;
        for (Index i = first; i < last; ++i)
            bits |= static_cast<std::uint64_t>(images[i * n_pixels + p] != 0) << (i - first);
        out[k] = bits;
    }
}

// One feature's description: input pixel indices (row * width + col), negation flags, number
// of inputs, shift. Arrays of n_features * kMaxInputs (unused slots ignored).
struct FeatureSet {
    const std::int32_t* inputs;
    const std::uint8_t* negated;
    const std::int32_t* n_inputs;
    const std::int32_t* shift;
    Index n_features;
};

inline void validate(const FeatureSet& fs, Index height, Index width) {
    const Index n_pixels = height * width;
    for (Index f = 0; f < fs.n_features; ++f) {
        const int n = fs.n_inputs[f];
        require(n >= 1 && n <= kMaxInputs, "features: every feature needs 1 to 8 inputs");
        require(fs.shift[f] >= 0 && fs.shift[f] <= kMaxShift,
                "features: shiftInvLen must lie in 0..8");
        for (int i = 0; i < n; ++i) {
            const std::int32_t p = fs.inputs[f * kMaxInputs + i];
            require(p >= 0 && p < n_pixels, "features: an input pixel lies outside the image");
        }
    }
}

// out: (n_features, words) packed values; bits past n_images are zero.
inline void evaluate_packed(const std::uint64_t* bits, Index n_images, Index height, Index width,
                            const FeatureSet& fs, std::uint64_t* out, int threads,
                            const StopHook& stop = {}) {
    validate(fs, height, width);
    const Index nw = words_for(n_images);
    const std::uint64_t tail =
        (n_images % 64) ? ((std::uint64_t{1} << (n_images % 64)) - 1) : ~std::uint64_t{0};
    StopPoll poll(stop);
    constexpr Index kBlock = 32;  // words per block: 2048 images, accumulated on the stack
#pragma omp parallel for num_threads(resolve_threads(threads)) schedule(dynamic, 16)
    for (Index f = 0; f < fs.n_features; ++f) {
        if (poll.stopped()) continue;
        const int n = fs.n_inputs[f];
        const int a = fs.shift[f];
        Index rows[kMaxInputs], cols[kMaxInputs];
        std::uint64_t flip[kMaxInputs];
        Index rmin = height, rmax = -1, cmin = width, cmax = -1;
        for (int i = 0; i < n; ++i) {
            const Index p = fs.inputs[f * kMaxInputs + i];
            rows[i] = p / width;
            cols[i] = p % width;
            flip[i] = fs.negated[f * kMaxInputs + i] ? ~std::uint64_t{0} : 0;
            rmin = std::min(rmin, rows[i]);
            rmax = std::max(rmax, rows[i]);
            cmin = std::min(cmin, cols[i]);
            cmax = std::max(cmax, cols[i]);
        }
        const Index dy0 = std::max<Index>(-a, -rmin), dy1 = std::min<Index>(a, height - 1 - rmax);
        const Index dx0 = std::max<Index>(-a, -cmin), dx1 = std::min<Index>(a, width - 1 - cmax);
        std::uint64_t* res = out + f * nw;
        for (Index kb = 0; kb < nw; kb += kBlock) {
            const Index len = std::min(kBlock, nw - kb);
            std::uint64_t acc[kBlock], orr[kBlock];
            std::fill(orr, orr + len, std::uint64_t{0});
            for (Index dy = dy0; dy <= dy1; ++dy) {
                for (Index dx = dx0; dx <= dx1; ++dx) {
                    const std::uint64_t* src0 =
                        bits + ((rows[0] + dy) * width + cols[0] + dx) * nw + kb;
                    for (Index k = 0; k < len; ++k) acc[k] = src0[k] ^ flip[0];
                    for (int i = 1; i < n; ++i) {
                        const std::uint64_t* src =
                            bits + ((rows[i] + dy) * width + cols[i] + dx) * nw + kb;
                        const std::uint64_t fl = flip[i];
                        for (Index k = 0; k < len; ++k) acc[k] &= src[k] ^ fl;
                    }
                    for (Index k = 0; k < len; ++k) orr[k] |= acc[k];
                }
            }
            std::copy(orr, orr + len, res + kb);
        }
        res[nw - 1] &= tail;
    }
    poll.check();
}

// Unpacks (n_features, words) into (n_features, n_images) bytes 0/1.
inline void unpack(const std::uint64_t* packed, Index n_features, Index n_images,
                   std::uint8_t* out, int threads) {
    const Index nw = words_for(n_images);
#pragma omp parallel for num_threads(resolve_threads(threads)) schedule(static)
    for (Index f = 0; f < n_features; ++f) {
        const std::uint64_t* src = packed + f * nw;
        std::uint8_t* dst = out + f * n_images;
        for (Index i = 0; i < n_images; ++i)
            dst[i] = static_cast<std::uint8_t>((src[i >> 6] >> (i & 63)) & 1U);
    }
}

inline double scatter_of(const Index* rows, const Index* cols, int n) {
    double cy = 0, cx = 0;
    for (int i = 0; i < n; ++i) {
        cy += static_cast<double>(rows[i]);
        cx += static_cast<double>(cols[i]);
    }
    cy /= n;
    cx /= n;
    double s = 0;
    for (int i = 0; i < n; ++i)
        s += std::hypot(static_cast<double>(rows[i]) - cy, static_cast<double>(cols[i]) - cx);
    return s / n;
}

// Draws one feature per row of u = (numInputs, percentPos, shiftInvLen, scatter), rounded and
// clipped to their ranges. Feature f uses the random stream (seed, f), so the result does not
// depend on the thread count. The inputs lie around a centre drawn uniformly over the image,
// at Gaussian offsets scaled to the wanted scatter; of up to 64 candidate placements the first
// within 10% (+0.1 px) of the wanted scatter is taken, else the closest one.
inline void draw(const double* u, Index n_features, Index height, Index width,
                 std::uint64_t seed, std::int32_t* inputs, std::uint8_t* negated,
                 std::int32_t* n_inputs, std::int32_t* shift, int threads) {
    const Index n_pixels = height * width;
    for (Index f = 0; f < n_features; ++f)
        for (int r = 0; r < 4; ++r)
            require(std::isfinite(u[f * 4 + r]), "u: meta-feature values must be finite");
#pragma omp parallel for num_threads(resolve_threads(threads)) schedule(dynamic, 64)
    for (Index f = 0; f < n_features; ++f) {
        Rng rng(seed, static_cast<std::uint64_t>(f));
        const double* uf = u + f * 4;
        // Clipped before rounding: lround of a value beyond long's range is undefined.
        // numInputs is also clipped to the image's pixel count (it made one input, with
        // percentPos lost, where an image has fewer than numInputs pixels)
        const int n = static_cast<int>(std::min<Index>(
            std::lround(std::clamp(uf[0], 1.0, 8.0)), n_pixels));
        const int n_pos =
            static_cast<int>(std::lround(std::clamp(uf[1], 0.0, 100.0) / 100.0 * n));
        const int a = static_cast<int>(std::lround(std::clamp(uf[2], 0.0, 8.0)));
        const double target = std::clamp(
            uf[3], 0.0, std::hypot(static_cast<double>(height), static_cast<double>(width)));
        Index best_r[kMaxInputs], best_c[kMaxInputs];
        if (n == 1) {
            const Index p = static_cast<Index>(rng.below(static_cast<std::uint64_t>(n_pixels)));
            best_r[0] = p / width;
            best_c[0] = p % width;
        } else {
            // Mean distance of n Gaussian points (sd s per axis) from their mean is about
            // s * sqrt(pi / 2) * sqrt((n - 1) / n).
            const double sd = target / (1.2533141373155 * std::sqrt((n - 1.0) / n));
            double best_gap = std::numeric_limits<double>::infinity();
            for (int attempt = 0; attempt < 64; ++attempt) {
                const double cy = rng.uniform() * static_cast<double>(height) - 0.5;
                const double cx = rng.uniform() * static_cast<double>(width) - 0.5;
                Index r[kMaxInputs], c[kMaxInputs];
                int placed = 0, guard = 0;
                while (placed < n && guard < 256) {
                    ++guard;
                    const double g1 = std::sqrt(-2.0 * std::log(1.0 - rng.uniform()));
                    const double g2 = 6.283185307179586 * rng.uniform();
                    const Index rr = static_cast<Index>(std::lround(cy + sd * g1 * std::cos(g2)));
                    const Index cc = static_cast<Index>(std::lround(cx + sd * g1 * std::sin(g2)));
                    if (rr < 0 || rr >= height || cc < 0 || cc >= width) continue;
                    bool dup = false;
                    for (int i = 0; i < placed; ++i) dup = dup || (r[i] == rr && c[i] == cc);
                    if (dup) continue;
                    r[placed] = rr;
                    c[placed] = cc;
                    ++placed;
                }
                if (placed < n) continue;
                const double gap = std::abs(scatter_of(r, c, n) - target);
                if (gap < best_gap) {
                    best_gap = gap;
                    std::copy(r, r + n, best_r);
                    std::copy(c, c + n, best_c);
                }
                if (gap <= 0.1 * target + 0.1) break;
            }
            if (!std::isfinite(best_gap)) {
                // A scatter too small for n distinct pixels at these offsets: the n pixels
                // nearest a random centre, the most compact placement (the nearest scatter
                // to the target; drawing them anywhere gave scatters of several pixels).
                const double cy = rng.uniform() * static_cast<double>(height) - 0.5;
                const double cx = rng.uniform() * static_cast<double>(width) - 0.5;
                std::pair<double, Index> near[kMaxInputs];
                int kept = 0;
                for (Index rr = 0; rr < height; ++rr) {
                    const double dy = static_cast<double>(rr) - cy;
                    for (Index cc = 0; cc < width; ++cc) {
                        const double dx = static_cast<double>(cc) - cx;
                        const std::pair<double, Index> cand{dy * dy + dx * dx, rr * width + cc};
                        if (kept < n) {
                            near[kept++] = cand;
                            std::push_heap(near, near + kept);
                        } else if (cand < near[0]) {
                            std::pop_heap(near, near + kept);
                            near[kept - 1] = cand;
                            std::push_heap(near, near + kept);
                        }
                    }
                }
                std::sort(near, near + n);
                for (int i = 0; i < n; ++i) {
                    best_r[i] = near[i].second / width;
                    best_c[i] = near[i].second % width;
                }
            }
        }
        const int used = n;
        // Which inputs are positive: a random n_pos of them.
        int order[kMaxInputs];
        for (int i = 0; i < used; ++i) order[i] = i;
        for (int i = used; i > 1; --i)
            std::swap(order[i - 1], order[rng.below(static_cast<std::uint64_t>(i))]);
        for (int i = 0; i < kMaxInputs; ++i) {
            inputs[f * kMaxInputs + i] =
                i < used ? static_cast<std::int32_t>(best_r[i] * width + best_c[i]) : -1;
            negated[f * kMaxInputs + i] = 0;
        }
        for (int i = 0; i < used; ++i)
            negated[f * kMaxInputs + order[i]] =
                static_cast<std::uint8_t>(i >= n_pos);
        n_inputs[f] = used;
        shift[f] = a;
    }
}

}  // namespace fastfs::generated
