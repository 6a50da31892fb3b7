// Deterministic randomness: one 64-bit seed per call, independent streams derived from
// (seed, stream index), so results never depend on the number of threads.
#pragma once
#include <cstdint>
#include <numeric>
#include <vector>

namespace fastfs {

inline std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// xoshiro256** seeded through splitmix64; small, fast, and identical on every platform
// (unlike std:: distributions, whose output is implementation-defined).
class Rng {
public:
    Rng(std::uint64_t seed, std::uint64_t stream) {
        std::uint64_t sm = seed ^ (0xD1B54A32D192ED03ULL * (stream + 1));
        for (auto& word : s_) word = splitmix64(sm);
    }
    std::uint64_t next() {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    // Uniform integer in [0, bound) without modulo bias (Lemire's method).
    std::uint64_t below(std::uint64_t bound) {
        unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
        auto low = static_cast<std::uint64_t>(m);
        if (low < bound) {
            const std::uint64_t threshold = (0 - bound) % bound;
            while (low < threshold) {
                m = static_cast<unsigned __int128>(next()) * bound;
                low = static_cast<std::uint64_t>(m);
            }
        }
        return static_cast<std::uint64_t>(m >> 64);
    }
    // Uniform double in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    template <class Index>
    std::vector<Index> permutation(Index n) {
        std::vector<Index> p(static_cast<std::size_t>(n));
        std::iota(p.begin(), p.end(), Index{0});
        for (std::size_t i = p.size(); i > 1; --i) {
            std::size_t j = static_cast<std::size_t>(below(i));
            std::swap(p[i - 1], p[j]);
        }
        return p;
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4];
};

// Samples to visit for n steps: consecutive random permutations of 0..m-1, cut at n, so every
// sample is visited once per pass.
template <class Index>
std::vector<Index> visiting_order(Rng& rng, Index m, Index n) {
    std::vector<Index> order;
    order.reserve(static_cast<std::size_t>(n));
    while (static_cast<Index>(order.size()) < n) {
        for (Index s : rng.permutation(m)) {
            if (static_cast<Index>(order.size()) == n) break;
            order.push_back(s);
        }
    }
    return order;
}

}  // namespace fastfs
