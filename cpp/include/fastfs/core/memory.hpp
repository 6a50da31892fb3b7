// Large work buffers on transparent huge pages, where the system offers them.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <type_traits>
#include <utility>
#include <variant>

#include "types.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace fastfs {

// Asks the kernel to back the whole 2 MiB pages inside [data, data + bytes) with huge pages,
// before the buffer is first written. A fresh buffer of a few MiB (the scaled copy of X, its
// float32 copy, an m x m pair matrix) otherwise takes one page fault per 4 KiB on first touch,
// about 2 microseconds each here (4 ms for 8 MiB, against 1-1.7 ms on huge pages), and the
// allocator hands back fresh pages whenever a previous call's buffers were returned to the
// system (TuRF's rounds, calls of a new size). NumPy asks the same for its arrays of 4 MiB and
// more. Only a hint: nothing happens on other systems, below 4 MiB, or when transparent huge
// pages are off; the values are the same either way.
inline void advise_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t kHuge = std::uintptr_t{1} << 21;
    if (data == nullptr || bytes < 2 * kHuge) return;
    const auto start = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t b = (start + kHuge - 1) & ~(kHuge - 1);
    const std::uintptr_t e = (start + bytes) & ~(kHuge - 1);
    if (e > b) (void)madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
}

// The same for an Eigen matrix or vector just allocated (before its first write).
template <class M>
inline void advise_huge_pages(M& a) {
    advise_huge_pages(static_cast<void*>(a.data()),
                      static_cast<std::size_t>(a.size()) * sizeof(typename M::Scalar));
}

// The size up to which the Relief family keeps the m x m matrix of pair distances whole (each
// distance then computed once for both samples); above it, each query's distances are computed
// afresh, with the same values. 64 MiB by default (m <= 4096 in float32, m <= 2896 in float64),
// lowered to fastfs.config.max_memory when that is smaller: the matrix is optional, so the
// memory guard's limit chooses the path instead of refusing the call.
struct PairCacheLimit {
    static constexpr double kDefaultBytes = 64.0 * 1024 * 1024;
    static std::atomic<double>& bytes() {
        static std::atomic<double> limit{kDefaultBytes};
        return limit;
    }
};

// Large work buffers kept between calls. A call's scaled copy of X, its float32 copy and its
// pair matrix are fresh memory each time: the kernel zeroes every page before the first write
// and the allocator returns the pages when the call ends, about a tenth of a ReliefF call at
// 1000 x 1000 (measured). The bin keeps the buffers of a finished call (each of at least
// kMinBytes, capacity() bytes in all, the oldest dropped first; fastfs.config.kept_memory sets
// the capacity, kDefaultBytes by default) and hands one back to a later request
// of exactly the same number of values and scalar type: repeated calls on one shape (a
// benchmark, cross-validation folds, TuRF's pair matrices) reuse them. A buffer taken from the
// bin holds the last user's values; every user writes a buffer in full before reading it, and
// the checked build (FASTFS_POISON_RECYCLED) fills reused buffers with NaN so that tests catch a
// read before a write.
class RecycleBin {
public:
    static constexpr std::size_t kMinBytes = std::size_t{1} << 20;
    static constexpr std::size_t kDefaultBytes = std::size_t{64} << 20;

    // The one bin of the process (never destroyed: no order problems at exit).
    static RecycleBin& instance() {
        static RecycleBin* bin = new RecycleBin;
        return *bin;
    }

    // Moves a kept matrix of exactly `size` values into out (leaving out as it was when there
    // is none). True when one was found.
    template <class S>
    bool take(Index size, RowMatrix<S>& out) {
        if (static_cast<double>(size) * sizeof(S) < kMinBytes) return false;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            bool found = false;
            for (auto it = kept_.begin(); it != kept_.end(); ++it) {
                auto* m = std::get_if<RowMatrix<S>>(&*it);
                if (m == nullptr || m->size() != size) continue;
                bytes_ -= bytes_of(*m);
                out.swap(*m);
                kept_.erase(it);
                found = true;
                break;
            }
            if (!found) return false;
        }
#ifdef FASTFS_POISON_RECYCLED
        out.setConstant(std::numeric_limits<S>::quiet_NaN());
#endif
        return true;
    }

    // Keeps m's buffer (leaving m empty) if it is large enough and fits. Never throws (it runs
    // in destructors): when the bin cannot take the buffer, m keeps it and frees it as usual.
    template <class S>
    void give(RowMatrix<S>& m) noexcept {
        const std::size_t b = bytes_of(m);
        if (b < kMinBytes) return;
        try {
            std::lock_guard<std::mutex> lock(mutex_);
            if (b > capacity_) return;
            drop_oldest_until(capacity_ - b);
            kept_.emplace_back(std::in_place_type<RowMatrix<S>>);
            std::get<RowMatrix<S>>(kept_.back()).swap(m);
            bytes_ += b;
        } catch (...) {
        }
    }

    // Bytes kept now (for tests).
    std::size_t bytes() {
        std::lock_guard<std::mutex> lock(mutex_);
        return bytes_;
    }

    // Frees every kept buffer.
    void clear() {
        std::lock_guard<std::mutex> lock(mutex_);
        kept_.clear();
        bytes_ = 0;
    }

    // At most `bytes` kept from now on (0: none); kept buffers beyond it are freed now.
    void set_capacity(std::size_t bytes) {
        std::lock_guard<std::mutex> lock(mutex_);
        capacity_ = bytes;
        drop_oldest_until(capacity_);
    }

    std::size_t capacity() {
        std::lock_guard<std::mutex> lock(mutex_);
        return capacity_;
    }

private:
    // Frees the oldest kept buffers until at most `bytes` are kept (mutex_ held).
    void drop_oldest_until(std::size_t bytes) {
        while (!kept_.empty() && bytes_ > bytes) {
            bytes_ -= std::visit([](const auto& k) { return bytes_of(k); }, kept_.front());
            kept_.pop_front();
        }
    }

    template <class S>
    static std::size_t bytes_of(const RowMatrix<S>& m) {
        return static_cast<std::size_t>(m.size()) * sizeof(S);
    }

    std::mutex mutex_;
    std::deque<std::variant<RowMatrix<double>, RowMatrix<float>>> kept_;
    std::size_t bytes_ = 0;
    std::size_t capacity_ = kDefaultBytes;
};

// A row-major matrix whose buffer comes from the RecycleBin when one of its size is kept, and
// goes back there when it dies; otherwise an ordinary RowMatrix<S> (it is one), with the huge
// page hint on a new buffer. Its values are unset, as Eigen's RowMatrix<S>(rows, cols) leaves
// them.
template <class S>
class RecycledMatrix : public RowMatrix<S> {
public:
    RecycledMatrix() = default;
    RecycledMatrix(Index rows, Index cols) { resize(rows, cols); }
    RecycledMatrix(RecycledMatrix&&) = default;
    RecycledMatrix& operator=(RecycledMatrix&&) = default;
    RecycledMatrix(const RecycledMatrix&) = delete;
    RecycledMatrix& operator=(const RecycledMatrix&) = delete;
    ~RecycledMatrix() { RecycleBin::instance().give<S>(*this); }

    // Any Eigen expression (not one reading this matrix), into a buffer of its size.
    template <class E>
    RecycledMatrix& operator=(const Eigen::MatrixBase<E>& e) {
        resize(e.rows(), e.cols());
        RowMatrix<S>::operator=(e);
        return *this;
    }

    // A buffer of rows x cols values: the matrix's own when it has that many, else a kept one,
    // else a new one.
    void resize(Index rows, Index cols) {
        if (this->size() != rows * cols) {
            RecycleBin::instance().give<S>(*this);
            if (!RecycleBin::instance().take<S>(rows * cols, *this)) {
                RowMatrix<S>::resize(rows, cols);
                advise_huge_pages(*this);
            }
        }
        RowMatrix<S>::resize(rows, cols);
    }
};

}  // namespace fastfs
