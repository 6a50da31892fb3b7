// Matrix and vector aliases used across the core. Row-major, to match NumPy's C order.
#pragma once
#include <Eigen/Core>
#include <cstdint>

// Results that must have the same bits wherever they are computed (incremental updates against
// scored values, exact neighbour distances) assume no floating-point contraction into fused
// multiply-adds. The CMake target compiles with it off (-ffp-contract=off) and says so.
#ifndef FASTFS_FP_CONTRACT_OFF
#error "fastfs: compile without floating-point contraction (-ffp-contract=off) and define FASTFS_FP_CONTRACT_OFF"
#endif

namespace fastfs {

using Index = std::ptrdiff_t;

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <class T>
using MatrixRef = Eigen::Ref<const RowMatrix<T>>;
template <class T>
using VectorRef = Eigen::Ref<const Vector<T>>;
using Labels = Eigen::Ref<const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>>;

}  // namespace fastfs
