// Matrix and vector aliases used across the core. Row-major, to match NumPy's C order.
#pragma once
#include <Eigen/Core>
#include <cstdint>

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
