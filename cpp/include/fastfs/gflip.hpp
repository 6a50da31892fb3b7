// G-flip (SPEC 2.4): flip search over feature subsets maximising the margin evaluation e(F).
// Each candidate is scored on the shared distance state D + sign * delta(feature); an accepted
// flip applies the same update to the state. The state is rebuilt from scratch after every
// epoch that changed it, so rounding from long chains of +/- updates never accumulates.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "distance_state.hpp"
#include "margin.hpp"
#include "random.hpp"

namespace fastfs {

struct GFlipOptions {
    UtilitySpec utility;
    int max_epochs = 100;
    int n_restarts = 1;
    std::uint64_t seed = 0;
    int n_threads = 0;
    std::vector<std::uint8_t> initial;  // empty = start from the empty set
};

struct GFlipProgress {
    int restart, epoch;
    double score;
    const std::vector<std::uint8_t>* support;
};
// Called between epochs; returning true stops the search (best result so far is returned).
using GFlipCallback = std::function<bool(const GFlipProgress&)>;

struct GFlipResult {
    std::vector<std::uint8_t> support;
    std::vector<Index> selected;  // in the order the features (last) entered the set
    double score = -std::numeric_limits<double>::infinity();
    std::vector<double> history;  // score after each epoch of the winning restart
    int n_epochs = 0, n_flips = 0, best_restart = 0;
    bool stopped_early = false;
};

template <class T>
class GFlip {
public:
    // X: samples x features in the caller's order; codes: class code per sample.
    GFlip(const MatrixRef<T>& X, const Labels& codes, GFlipOptions opt)
        : opt_(std::move(opt)),
          state_(ClassLayout::from_codes(codes), opt_.n_threads),
          n_features_(X.cols()) {
        require(X.rows() == codes.size(), "X and y have different numbers of samples");
        require(opt_.max_epochs >= 1, "max_epochs must be >= 1");
        require(opt_.n_restarts >= 1, "n_restarts must be >= 1");
        require(opt_.initial.empty() || static_cast<Index>(opt_.initial.size()) == n_features_,
                "initial: length must equal the number of features");
        // Feature-major copy in class order: one candidate reads one contiguous column.
        const ClassLayout& L = state_.layout();
        const Index m = X.rows();
        columns_.resize(n_features_, m);
        for (Index p = 0; p < m; ++p) columns_.col(p) = X.row(L.order[p]).transpose();
    }

    GFlipResult run(const StopHook& stop = {}, const GFlipCallback& callback = {}) {
        GFlipResult best;
        for (int r = 0; r < opt_.n_restarts; ++r) {
            GFlipResult res = run_once(r, stop, callback);
            if (r == 0 || res.score > best.score) {
                best = std::move(res);
                best.best_restart = r;
            }
            if (best.stopped_early) break;
        }
        return best;
    }

    // e(F) for a given support, recomputed from scratch (used by tests and the final report).
    double score_of(const std::vector<std::uint8_t>& support) {
        rebuild(support);
        Nearest<T> nn(state_.n_samples());
        state_.nearest_with(nullptr, T(0), nn);
        return margin_score(nn, opt_.utility);
    }

private:
    void rebuild(const std::vector<std::uint8_t>& support) {
        std::vector<Index> chosen;
        for (Index j = 0; j < n_features_; ++j)
            if (support[static_cast<std::size_t>(j)]) chosen.push_back(j);
        RowMatrix<T> Z(state_.n_samples(), static_cast<Index>(chosen.size()));
        for (std::size_t k = 0; k < chosen.size(); ++k)
            Z.col(static_cast<Index>(k)) = columns_.row(chosen[k]).transpose();
        state_.assign(Z);
    }

    GFlipResult run_once(int restart, const StopHook& stop, const GFlipCallback& callback) {
        Rng rng(opt_.seed, static_cast<std::uint64_t>(restart));
        GFlipResult res;
        res.support = opt_.initial.empty()
                          ? std::vector<std::uint8_t>(static_cast<std::size_t>(n_features_), 0)
                          : opt_.initial;
        for (Index j = 0; j < n_features_; ++j)
            if (res.support[static_cast<std::size_t>(j)]) res.selected.push_back(j);
        rebuild(res.support);
        Nearest<T> nn(state_.n_samples());
        state_.nearest_with(nullptr, T(0), nn);
        double current = margin_score(nn, opt_.utility);

        for (int epoch = 0; epoch < opt_.max_epochs; ++epoch) {
            const std::vector<Index> visit = rng.permutation(n_features_);
            int flips = 0;
            for (Index j : visit) {
                if (stop && stop()) throw Interrupted();
                auto& in = res.support[static_cast<std::size_t>(j)];
                const T sign = in ? T(-1) : T(1);
                const T* col = columns_.row(j).data();
                state_.nearest_with(col, sign, nn);
                const double candidate = margin_score(nn, opt_.utility);
                if (candidate > current) {  // strict increase only: ties keep F
                    state_.add_feature(col, sign);
                    current = candidate;
                    in = !in;
                    if (in) {
                        res.selected.push_back(j);
                    } else {
                        res.selected.erase(
                            std::find(res.selected.begin(), res.selected.end(), j));
                    }
                    ++flips;
                }
            }
            res.n_flips += flips;
            res.n_epochs = epoch + 1;
            if (flips > 0) {
                rebuild(res.support);
                state_.nearest_with(nullptr, T(0), nn);
                current = margin_score(nn, opt_.utility);
            }
            res.history.push_back(current);
            if (callback) {
                GFlipProgress info{restart, epoch + 1, current, &res.support};
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

    GFlipOptions opt_;
    DistanceState<T> state_;
    Index n_features_;
    RowMatrix<T> columns_;  // n_features x n_samples, samples in class order
};

}  // namespace fastfs
