// Large work buffers on transparent huge pages, where the system offers them.
#pragma once
#include <cstddef>
#include <cstdint>

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

}  // namespace fastfs
