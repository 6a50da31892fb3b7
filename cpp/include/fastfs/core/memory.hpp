// Large buffers backed by transparent huge pages.
//
// The m x m pair caches and distance states and the scaled and float32 copies of X are written
// right after they are allocated, and a fresh buffer costs a page fault every 4 KB it is first
// written: a ReliefF call at 1000 x 1000 took about 4000 faults and 6-9 ms of kernel time (a
// tenth of the call), and with two threads the faults contend for the process's memory map.
// Asking Linux for transparent huge pages on such a buffer before its first write (as NumPy does
// for its arrays of 4 MB and more) makes that one fault every 2 MB. It is advice: where the
// system has no such pages, or says no, only the speed differs.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace fastfs {

// Buffers below this size are left alone (they hold at most one huge page).
constexpr std::size_t kHugePageAdviceBytes = std::size_t{4} << 20;

// Advises huge pages for the pages that [p, p + bytes) touches. The first and last may hold
// other data (the allocator's header of the block): advice changes no byte of it, and leaving
// them out would split the mapping so that its first and last 2 MB could not be huge pages.
inline void advise_huge_pages(const void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p == nullptr || bytes < kHugePageAdviceBytes) return;
    static const std::uintptr_t page = [] {
        const long s = sysconf(_SC_PAGESIZE);
        return s > 0 ? static_cast<std::uintptr_t>(s) : std::uintptr_t{4096};
    }();
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t begin = at / page * page;
    const std::uintptr_t end = (at + bytes + page - 1) / page * page;
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

// The same for an Eigen matrix's storage (call it after allocating, before the first write).
template <class Matrix>
inline void advise_huge_pages(const Matrix& a) {
    advise_huge_pages(a.data(), static_cast<std::size_t>(a.size()) * sizeof(typename Matrix::Scalar));
}

}  // namespace fastfs
