// The block pass every member of the Relief family runs (ReliefF in relief.hpp, the radius
// rules in relief_radius.hpp, the general kernel in relief_mixed.hpp): the query samples
// q0 .. q1-1 are cut into fixed blocks (about 64 of them, at least 16 samples each), threads take
// blocks dynamically, each block adds its queries' contributions to its own row of partial sums,
// a batch of queries at a time, and the rows are merged into the weights in block order after
// the region. The same additions happen in the same order for any number of threads, so the
// weights do not depend on it. Memory: one row of n per block of a step plus what the algorithm
// keeps per thread (its scratch), O(threads * m + blocks * n), never m x m.
//
// An algorithm supplies only its per-batch work: scratch() builds a thread's buffers (inside
// the region, so an allocation failure is caught and rethrown after it), and
// rows(scratch, i0, count, acc, slot) adds the contributions of queries i0 .. i0+count-1
// (count <= the batch) to its block's row acc; slot is the block's index within the current
// step, for buffers kept per block of a step (STIR's pair moments). Optionally begin_step(blocks)
// before each step's region and merge(b, slot, acc, w) after it, in block order (by default
// w += acc).
//
// Steps: without a callback (and without per-step buffers) the pass is one region over every
// block; otherwise a step is one block per thread, after which the callback sees the running
// mean (w / samples done) and may end the pass (status->done samples, stopped_early). The stop
// hook is polled by the calling thread between batches; a stop skips the remaining batches and
// throws fastfs::Interrupted after the region.
#pragma once
#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "../core/errors.hpp"
#include "../core/parallel.hpp"
#include "../core/progress.hpp"
#include "../core/types.hpp"

namespace fastfs {

// After a step of a block pass (samples up to `done_samples` finished, `w` their summed
// weights): records it in `done` and shows the running mean to the callback, which may end the
// pass there (stopped_early when samples remain).
inline void report_pass_step(const ProgressHook& callback, const std::vector<double>& w,
                             std::vector<double>& shown, Index step, Index done_samples,
                             bool more_left, PassStatus& done) {
    done.done = done_samples;
    if (!callback) return;
    shown = w;
    for (auto& v : shown) v /= static_cast<double>(done_samples);
    if (callback(Progress::pass(step, done_samples, std::numeric_limits<double>::quiet_NaN(),
                              &shown)))
        done.stopped_early = more_left;
}

// The shape of one pass: queries q0 .. q1-1, n weights, the thread count, queries per call of
// rows() (batch), and whether to go in steps of one block per thread even without a callback
// (per-step buffers such as STIR's moments).
struct ReliefPass {
    Index q0 = 0, q1 = 0, n = 0;
    int threads = 1;
    Index batch = 4;
    bool stepwise = false;
    Index fixed_block = 0;  // > 0: samples per block, whatever the number of queries

    // Samples per block: the blocks and their order depend only on the number of queries.
    Index block() const {
        return fixed_block > 0 ? fixed_block : std::max<Index>(16, (q1 - q0 + 63) / 64);
    }
    Index blocks() const { return (q1 - q0 + block() - 1) / block(); }
    // Blocks per step: one per thread when going in steps (a callback, or stepwise), else all.
    Index step_blocks(bool callback) const {
        return (callback || stepwise) ? std::max<Index>(1, threads) : blocks();
    }
};

// Runs the pass (see the header) and returns the summed weights (not divided by anything).
template <class MakeScratch, class Rows, class BeginStep, class Merge>
std::vector<double> relief_block_pass(const ReliefPass& p, StopPoll& poll,
                                      const ProgressHook& callback, PassStatus* status,
                                      MakeScratch&& make_scratch, Rows&& rows,
                                      BeginStep&& begin_step, Merge&& merge) {
    require(p.batch >= 1, "relief_block_pass: batch must be >= 1");
    const Index queries = p.q1 - p.q0, block = p.block(), n_blocks = p.blocks();
    RegionErrors errors;
    const Index group = p.step_blocks(static_cast<bool>(callback));
    // The rows of one step's blocks (row b - b0 for block b).
    RowMatrix<double> partial = RowMatrix<double>::Zero(std::min(group, n_blocks), p.n);
    std::vector<double> w(static_cast<std::size_t>(p.n), 0.0), shown;
    using Scratch = decltype(make_scratch());
    PassStatus done;
    for (Index b0 = 0; b0 < n_blocks && !done.stopped_early; b0 += group) {
        const Index b1 = std::min(n_blocks, b0 + group);
        if (b0 > 0) partial.setZero();
        begin_step(b1 - b0);
#pragma omp parallel num_threads(p.threads)
        {
            std::optional<Scratch> s;
            errors.run([&] { s.emplace(make_scratch()); });
#pragma omp for schedule(dynamic, 1)
            for (Index b = b0; b < b1; ++b) errors.run([&] {
                const Index i_end = p.q0 + std::min(queries, (b + 1) * block);
                for (Index i0 = p.q0 + b * block; i0 < i_end; i0 += p.batch) {
                    if (poll.stopped()) break;
                    rows(*s, i0, std::min(p.batch, i_end - i0), partial.row(b - b0).data(), b - b0);
                }
            });
        }
        errors.rethrow();
        poll.check();
        for (Index b = b0; b < b1; ++b) merge(b, b - b0, partial.row(b - b0).data(), w);
        report_pass_step(callback, w, shown, b0 / group + 1, std::min(queries, b1 * block),
                         b1 < n_blocks, done);
    }
    if (status) *status = done;
    return w;
}

// Relief's (Kira and Rendell's) visiting pass: the visits 0 .. count-1 in steps of
// pass_step(count, callback), each step in chunks of at most `chunk` visits; find(c0, c1) finds
// the hit and miss of visits c0 .. c1-1 (in parallel, into the algorithm's chunk buffers), then
// add(t, c0, w) adds visit t's contribution to the n weights w, in visiting order. After every
// step the callback sees the summed weights (score NaN) and may end the pass there (status->done
// visits, stopped_early).
template <class Find, class Add>
std::vector<double> kira_pass(Index count, Index n, Index chunk, const ProgressHook& callback,
                              PassStatus* status, Find&& find, Add&& add) {
    std::vector<double> w(static_cast<std::size_t>(n), 0.0);
    const Index step = pass_step(count, static_cast<bool>(callback));
    PassStatus done;
    for (Index t0 = 0; t0 < count && !done.stopped_early; t0 += step) {
        const Index t1 = std::min(count, t0 + step);
        for (Index c0 = t0; c0 < t1; c0 += chunk) {
            const Index c1 = std::min(t1, c0 + chunk);
            find(c0, c1);
            for (Index t = c0; t < c1; ++t) add(t, c0, w);
        }
        done.done = t1;
        if (callback && callback(Progress::pass(t0 / step + 1, t1,
                                              std::numeric_limits<double>::quiet_NaN(), &w)))
            done.stopped_early = t1 < count;
    }
    if (status) *status = done;
    return w;
}

// The same with nothing per step and the plain merge w += acc.
template <class MakeScratch, class Rows>
std::vector<double> relief_block_pass(const ReliefPass& p, StopPoll& poll,
                                      const ProgressHook& callback, PassStatus* status,
                                      MakeScratch&& make_scratch, Rows&& rows) {
    const Index n = p.n;
    return relief_block_pass(
        p, poll, callback, status, make_scratch, rows, [](Index) {},
        [n](Index, Index, const double* acc, std::vector<double>& w) {
            for (Index f = 0; f < n; ++f) w[static_cast<std::size_t>(f)] += acc[f];
        });
}

}  // namespace fastfs
