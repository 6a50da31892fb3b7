// Sparse matrices in compressed sparse row form (SciPy's CSR): a view of the caller's arrays,
// and an owned transpose (the same matrix stored by columns) built once in O(nnz + n). Row i
// holds the entries ptr[i] .. ptr[i+1]-1 of (idx, val), with strictly increasing column
// indices; every absent entry is zero. Nothing here ever builds a dense m x n array.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../core/errors.hpp"
#include "../core/types.hpp"

namespace fastfs {

struct SparseRef {
    Index rows = 0, cols = 0;
    const std::int64_t* ptr = nullptr;  // rows + 1 offsets
    const std::int64_t* idx = nullptr;  // column of each entry, increasing within a row
    const double* val = nullptr;        // value of each entry

    Index nnz() const { return rows > 0 ? static_cast<Index>(ptr[rows]) : 0; }
    Index begin(Index i) const { return static_cast<Index>(ptr[i]); }
    Index end(Index i) const { return static_cast<Index>(ptr[i + 1]); }

    // Throws std::invalid_argument unless the arrays describe a canonical CSR matrix.
    void validate(const std::string& name = "X") const {
        require(rows >= 0 && cols >= 0, name + ": negative shape");
        require(ptr[0] == 0, name + ": indptr must start at 0");
        for (Index i = 0; i < rows; ++i) {
            require(ptr[i + 1] >= ptr[i], name + ": indptr must not decrease");
            for (Index p = begin(i); p < end(i); ++p) {
                require(idx[p] >= 0 && idx[p] < cols, name + ": column index out of range");
                require(p == begin(i) || idx[p] > idx[p - 1],
                        name + ": column indices must increase within a row (canonical CSR)");
            }
        }
    }
};

// An owned sparse matrix in the same layout (used for the transpose).
struct SparseOwned {
    Index rows = 0, cols = 0;
    std::vector<std::int64_t> ptr, idx;
    std::vector<double> val;

    SparseRef ref() const {
        SparseRef r;
        r.rows = rows;
        r.cols = cols;
        r.ptr = ptr.data();
        r.idx = idx.data();
        r.val = val.data();
        return r;
    }
};

// A^T in row form, i.e. A by columns: row f of the result lists the samples with a non-zero in
// feature f, in increasing sample order, with their values. O(nnz + cols) time and memory.
inline SparseOwned transpose(const SparseRef& A) {
    SparseOwned T;
    T.rows = A.cols;
    T.cols = A.rows;
    const Index nnz = A.nnz();
    T.ptr.assign(static_cast<std::size_t>(A.cols) + 1, 0);
    T.idx.resize(static_cast<std::size_t>(nnz));
    T.val.resize(static_cast<std::size_t>(nnz));
    for (Index p = 0; p < nnz; ++p) ++T.ptr[static_cast<std::size_t>(A.idx[p]) + 1];
    for (Index f = 0; f < A.cols; ++f)
        T.ptr[static_cast<std::size_t>(f) + 1] += T.ptr[static_cast<std::size_t>(f)];
    std::vector<std::int64_t> next(T.ptr.begin(), T.ptr.end() - 1);
    for (Index i = 0; i < A.rows; ++i)
        for (Index p = A.begin(i); p < A.end(i); ++p) {
            const std::int64_t q = next[static_cast<std::size_t>(A.idx[p])]++;
            T.idx[static_cast<std::size_t>(q)] = i;
            T.val[static_cast<std::size_t>(q)] = A.val[p];
        }
    return T;
}

}  // namespace fastfs
