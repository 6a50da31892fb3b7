// G-flip (SPEC 2.4): flip search over feature subsets maximising the margin evaluation e(F).
// Candidates are scored on the shared distance state D + sign * delta(feature), several per
// pass over D; an accepted flip applies the same update to the state. Two guards keep rounding
// from changing the answer:
//  * the state is rebuilt from scratch after every epoch that changed it, so +/- updates never
//    accumulate error across epochs;
//  * removing a feature whose squared range dominates the rest of F would cancel
//    catastrophically in D - delta (the small features' distances drown in the big one's
//    rounding), so such a removal is scored on a state rebuilt without the feature.
// The state is accumulated in float64 whatever the input type: in float32 the cancellation
// above already bites at ordinary scale differences (a column in the thousands next to unit
// columns).
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <vector>

#include "../state/distance_state.hpp"
#include "../criteria/margin.hpp"
#include "../core/random.hpp"

namespace fastfs {

struct GFlipOptions {
    UtilitySpec utility;
    int max_epochs = 100;
    int n_restarts = 1;
    // Restarts are numbered from here: restart r runs with the random stream (and, for G-flip,
    // the start) of restart first_restart + r, so a run of restarts a .. b-1 alone gives those
    // restarts of the full run (fastfs.dask runs restarts as separate tasks).
    int first_restart = 0;
    std::uint64_t seed = 0;
    int n_threads = 0;
    // Empty = not given: restarts alternate between the empty set (even restarts) and the full
    // set (odd ones). Greedy flips from the empty set stop at a noise feature that happens to
    // add margin before the features that only help together (xor: 7 of 20 seeds find its
    // three); from the full set those features are already in (20 of 20).
    std::vector<std::uint8_t> initial;
};

// The progress hook (core/progress.hpp) is called between epochs with Progress::flips: the
// restart, the epoch, e(w) and the support; returning true stops the search (the best result
// so far is returned).

struct GFlipResult {
    std::vector<std::uint8_t> support;
    std::vector<Index> selected;  // in the order the features (last) entered the set
    double score = -std::numeric_limits<double>::infinity();
    std::vector<double> history;  // score after each epoch of the winning restart
    std::vector<double> restart_scores;  // final score of each restart run, in order
    int n_epochs = 0, n_flips = 0, best_restart = 0;
    bool stopped_early = false;  // the callback stopped the search (in any restart)
};

template <class T>
class GFlip {
public:
    using Acc = double;  // type of the distance state, see the header comment

    // X: samples x features in the caller's order; codes: class code per sample.
    GFlip(const MatrixRef<T>& X, const Labels& codes, GFlipOptions opt)
        : opt_(std::move(opt)),
          rows_(check_rows(X, codes)),
          state_(rows_.layout, opt_.n_threads),
          n_features_(X.cols()) {
        require(opt_.max_epochs >= 1, "max_epochs must be >= 1");
        require(opt_.n_restarts >= 1, "n_restarts must be >= 1");
        require(opt_.initial.empty() || static_cast<Index>(opt_.initial.size()) == n_features_,
                "initial: length must equal the number of features");
        // Feature-major copy in class order, one sample per group of equal rows: one candidate
        // reads one contiguous column.
        const Index m = state_.n_samples();
        columns_.resize(n_features_, m);
        for (Index p = 0; p < m; ++p)
            columns_.col(p) = X.row(rows_.sample[static_cast<std::size_t>(p)]).transpose().template cast<Acc>();
        range2_.resize(static_cast<std::size_t>(n_features_));
        for (Index j = 0; j < n_features_; ++j) {
            const Acc r = columns_.row(j).maxCoeff() - columns_.row(j).minCoeff();
            range2_[static_cast<std::size_t>(j)] = r * r;
        }
        require_finite_distances(range2_);
    }

    GFlipResult run(const StopHook& stop = {}, const ProgressHook& callback = {}) {
        GFlipResult best;
        std::vector<double> scores;
        bool stopped = false;
        for (int r = 0; r < opt_.n_restarts && !stopped; ++r) {
            GFlipResult res = run_once(r, stop, callback);
            stopped = res.stopped_early;
            scores.push_back(res.score);
            if (r == 0 || res.score > best.score) {
                best = std::move(res);
                best.best_restart = r;
            }
        }
        best.restart_scores = std::move(scores);
        best.stopped_early = stopped;
        return best;
    }

private:
    // Removing j from F is scored from scratch when j's squared range exceeds the rest of F's
    // by this factor: the relative error of D - delta grows like eps * range2_j / distance.
    static constexpr double kDominance = 1e4;

    // j is in F: does it dominate the other features of F?
    bool dominant(Index j) const {
        const double r = range2_[static_cast<std::size_t>(j)];
        return r > kDominance * (in_range2_ - r);
    }

    void rebuild(const std::vector<std::uint8_t>& support, Index skip = -1) {
        std::vector<Index> chosen;
        for (Index j = 0; j < n_features_; ++j)
            if (support[static_cast<std::size_t>(j)] && j != skip) chosen.push_back(j);
        in_range2_ = 0.0;
        for (Index j = 0; j < n_features_; ++j)
            if (support[static_cast<std::size_t>(j)]) in_range2_ += range2_[static_cast<std::size_t>(j)];
        RowMatrix<Acc> Z(state_.n_samples(), static_cast<Index>(chosen.size()));
        for (std::size_t k = 0; k < chosen.size(); ++k)
            Z.col(static_cast<Index>(k)) = columns_.row(chosen[k]).transpose();
        state_.assign(Z);
    }

    double score_state(Nearest<Acc>& nn) {
        state_.nearest_with(nullptr, Acc(0), nn);
        return score(nn);
    }

    // Equal rows of one class ("duplicates") are one sample of the state: an update adds
    // (x_a - x_b)^2 = 0 to their distance, which so stays exactly 0, and every other distance
    // of a copy is its group's, bit for bit (the same expressions over the same values). The
    // state is then m_u x m_u; a sample's nearest miss is its group's, its nearest hit is 0
    // when its group has another member (min(0, group's hit), exact), and e is summed over
    // the samples in class order, as over the whole state.
    struct Rows {
        ClassLayout layout;               // of the groups, in class order
        std::vector<Index> sample;        // group -> original index of its first sample
        std::vector<Index> group;         // class-order position of a sample -> its group
        std::vector<Index> size;          // members per group
        bool merged = false;              // fewer groups than samples
    };
    static Rows check_rows(const MatrixRef<T>& X, const Labels& codes) {
        require(X.rows() == codes.size(), "X and y have different numbers of samples");
        const ClassLayout full = ClassLayout::from_codes(codes);
        const Index m = X.rows(), n = X.cols();
        Rows R;
        R.group.resize(static_cast<std::size_t>(m));
        std::vector<std::int64_t> group_codes;
        std::unordered_multimap<std::uint64_t, Index> seen;  // hash -> group
        auto value = [&](Index i, Index f) {
            const double v = static_cast<double>(X(i, f));
            return v == 0.0 ? 0.0 : v;  // -0 and +0 are the same value
        };
        auto same = [&](Index i, Index k) {
            for (Index f = 0; f < n; ++f)
                if (value(i, f) != value(k, f)) return false;
            return true;
        };
        for (Index p = 0; p < m; ++p) {
            const Index i = full.order[static_cast<std::size_t>(p)];
            const std::int64_t c = full.cls[static_cast<std::size_t>(p)];
            std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(c);
            for (Index f = 0; f < n; ++f) {
                const double v = value(i, f);
                std::uint64_t bits = 0;
                std::memcpy(&bits, &v, sizeof bits);
                h = (h ^ bits) * 1099511628211ull;
                h ^= h >> 29;
            }
            Index g = -1;
            const auto range = seen.equal_range(h);
            for (auto it = range.first; it != range.second && g < 0; ++it) {
                const Index cand = it->second;
                if (group_codes[static_cast<std::size_t>(cand)] == c &&
                    same(R.sample[static_cast<std::size_t>(cand)], i))
                    g = cand;
            }
            if (g < 0) {
                g = static_cast<Index>(R.sample.size());
                R.sample.push_back(i);
                R.size.push_back(0);
                group_codes.push_back(c);
                seen.emplace(h, g);
            }
            R.group[static_cast<std::size_t>(p)] = g;
            ++R.size[static_cast<std::size_t>(g)];
        }
        R.merged = static_cast<Index>(R.sample.size()) < m && R.sample.size() >= 2;
        if (!R.merged) {  // the state keeps every sample
            R.sample.assign(full.order.begin(), full.order.end());
            for (Index p = 0; p < m; ++p) R.group[static_cast<std::size_t>(p)] = p;
            R.size.assign(static_cast<std::size_t>(m), 1);
            R.layout = full;
            return R;
        }
        // Groups are numbered in class order, so their layout keeps that order.
        Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> gc(static_cast<Index>(group_codes.size()));
        for (std::size_t g = 0; g < group_codes.size(); ++g) gc[static_cast<Index>(g)] = group_codes[g];
        R.layout = ClassLayout::from_codes(gc);
        return R;
    }

    // e of the samples from the nearest hits and misses of the state's groups.
    double score(const Nearest<Acc>& nn) {
        if (!rows_.merged) return margin_score(nn, opt_.utility);
        const std::size_t m = rows_.group.size();
        full_nn_.hit.resize(m);
        full_nn_.miss.resize(m);
        for (std::size_t p = 0; p < m; ++p) {
            const auto g = static_cast<std::size_t>(rows_.group[p]);
            Acc h = nn.hit[g];
            if (rows_.size[g] > 1 && h > Acc(0)) h = Acc(0);  // min(0, h): a copy at distance 0
            full_nn_.hit[p] = h;
            full_nn_.miss[p] = nn.miss[g];
        }
        return margin_score(full_nn_, opt_.utility);
    }

    // Flips j in the bookkeeping (the caller has already updated the state).
    void toggle(GFlipResult& res, Index j) {
        auto& in = res.support[static_cast<std::size_t>(j)];
        in = !in;
        in_range2_ += in ? range2_[static_cast<std::size_t>(j)] : -range2_[static_cast<std::size_t>(j)];
        if (in) res.selected.push_back(j);
        else res.selected.erase(std::find(res.selected.begin(), res.selected.end(), j));
    }

    GFlipResult run_once(int restart, const StopHook& stop, const ProgressHook& callback) {
        const int number = opt_.first_restart + restart;
        Rng rng(opt_.seed, static_cast<std::uint64_t>(number));
        GFlipResult res;
        res.support = opt_.initial.empty()
                          ? std::vector<std::uint8_t>(static_cast<std::size_t>(n_features_),
                                                      number % 2 == 1 ? 1 : 0)
                          : opt_.initial;
        for (Index j = 0; j < n_features_; ++j)
            if (res.support[static_cast<std::size_t>(j)]) res.selected.push_back(j);
        rebuild(res.support);
        Nearest<Acc> nn(state_.n_samples());
        double current = score_state(nn);

        for (int epoch = 0; epoch < opt_.max_epochs; ++epoch) {
            std::vector<Index> visit = rng.permutation(n_features_);
            // A constant feature (squared range 0: every squared difference is then exactly 0,
            // rounding being monotone) leaves D and so the score as they are: it never flips.
            visit.erase(std::remove_if(visit.begin(), visit.end(),
                                       [&](Index j) { return range2_[static_cast<std::size_t>(j)] == 0.0; }),
                        visit.end());
            int flips = 0;
            // Candidates are scored in speculative blocks on the same state: a block's scores
            // are exact up to its first accepted flip; the rest are scored again in the next
            // block. Blocks shrink after a flip and grow while nothing flips.
            std::size_t pos = 0;
            int block = 4;
            while (pos < visit.size()) {
                if (stop && stop()) throw Interrupted();
                const Index first = visit[pos];
                if (res.support[static_cast<std::size_t>(first)] && dominant(first)) {
                    rebuild(res.support, first);
                    const double candidate = score_state(nn);
                    if (candidate > current) {
                        current = candidate;
                        toggle(res, first);
                        ++flips;
                    } else {  // adding a feature back is well conditioned
                        state_.add_feature(columns_.row(first).data(), Acc(1));
                    }
                    ++pos;
                    continue;
                }
                int count = 0;
                const Acc* cols[DistanceState<Acc>::kMaxBlock];
                Acc signs[DistanceState<Acc>::kMaxBlock];
                while (count < block && pos + static_cast<std::size_t>(count) < visit.size()) {
                    const Index j = visit[pos + static_cast<std::size_t>(count)];
                    const bool in = res.support[static_cast<std::size_t>(j)];
                    if (count > 0 && in && dominant(j)) break;
                    cols[count] = columns_.row(j).data();
                    signs[count] = in ? Acc(-1) : Acc(1);
                    ++count;
                }
                state_.nearest_many(count, cols, signs, block_nn_.data());
                int used = count;
                bool flipped = false;
                for (int k = 0; k < count; ++k) {
                    const double candidate = score(block_nn_[static_cast<std::size_t>(k)]);
                    if (candidate > current) {  // strict increase only: ties keep F
                        // Applied by the next block's pass (or dropped by the rebuild).
                        state_.defer_feature(cols[k], signs[k]);
                        current = candidate;
                        toggle(res, visit[pos + static_cast<std::size_t>(k)]);
                        ++flips;
                        used = k + 1;
                        flipped = true;
                        break;
                    }
                }
                pos += static_cast<std::size_t>(used);
                block = flipped ? std::max(1, block / 2)
                                : std::min(DistanceState<Acc>::kMaxBlock, block * 2);
            }
            res.n_flips += flips;
            res.n_epochs = epoch + 1;
            if (flips > 0) {
                rebuild(res.support);
                current = score_state(nn);
            }
            res.history.push_back(current);
            if (callback) {
                const Progress info = Progress::flips(restart, epoch + 1, current, &res.support);
                if (callback(info)) {
                    res.stopped_early = true;
                    break;
                }
            }
            if (flips == 0) break;
        }
        res.score = current;
        return res;
    }

public:
    // Bytes G-flip holds for m samples and n features: its distance state, the features in
    // class order and the per-block nearest hits and misses (the memory guard's figure).
    static double bytes_needed(Index m, Index n, int n_threads) {
        const double md = static_cast<double>(m);
        return DistanceState<Acc>::bytes_needed(m, n_threads) +
               sizeof(Acc) * (static_cast<double>(n) * md + DistanceState<Acc>::kMaxBlock * 2.0 * md);
    }

private:
    GFlipOptions opt_;
    Rows rows_;  // the samples of the state: one per group of equal rows in a class
    DistanceState<Acc> state_;
    Index n_features_;
    RowMatrix<Acc> columns_;    // n_features x n_samples, samples in class order
    std::vector<double> range2_;  // (max - min)^2 of each feature
    double in_range2_ = 0.0;      // sum of range2_ over F
    Nearest<Acc> full_nn_;  // score(): the groups' nearest spread over the samples
    std::vector<Nearest<Acc>> block_nn_ =
        std::vector<Nearest<Acc>>(static_cast<std::size_t>(DistanceState<Acc>::kMaxBlock));
};

}  // namespace fastfs
