// Array conversions for the validation layer (fastfs._validation).
#include "common.hpp"
#include "fastfs/data/fortran_copy.hpp"
#include "fastfs/data/scan.hpp"

namespace fastfs::bindings {

namespace {
template <class S, class D>
py::tuple fortran_copy_of(const py::array_t<S, py::array::c_style>& a) {
    require(a.ndim() == 2, "expected a 2-D array");
    const Index m = a.shape(0), n = a.shape(1);
    py::array_t<D, py::array::f_style> out({m, n});
    const S* src = a.data();
    D* dst = out.mutable_data();
    FiniteMaxAbs r;
    {
        py::gil_scoped_release release;
        r = fortran_copy(src, m, n, dst);
    }
    return py::make_tuple(out, r.finite, r.max_abs);
}

template <class S>
py::tuple finite_max_abs_of(const py::array_t<S, py::array::c_style>& a) {
    const S* x = a.data();
    const std::size_t count = static_cast<std::size_t>(a.size());
    FiniteMaxAbs r;
    {
        py::gil_scoped_release release;
        r = finite_max_abs(x, count);
    }
    return py::make_tuple(r.finite, r.max_abs);
}
}  // namespace

void register_arrays(py::module_& m) {
    // (Fortran-ordered copy, all values finite, max |x|) of a C-contiguous float64 or float32
    // array, in one read; `to_float64` converts float32.
    m.def(
        "_fortran_copy",
        [](py::array a, bool to_float64) -> py::tuple {
            require((a.flags() & py::array::c_style) != 0, "expected a C-contiguous array");
            if (py::isinstance<py::array_t<double>>(a))
                return fortran_copy_of<double, double>(a.cast<py::array_t<double, py::array::c_style>>());
            require(py::isinstance<py::array_t<float>>(a), "expected float32 or float64");
            const auto f = a.cast<py::array_t<float, py::array::c_style>>();
            return to_float64 ? fortran_copy_of<float, double>(f) : fortran_copy_of<float, float>(f);
        },
        py::arg("a"), py::arg("to_float64"));
    // (all values finite, max |x|) of a C- or Fortran-contiguous float64 or float32 array, in
    // one read.
    m.def(
        "_finite_max_abs",
        [](py::array a) -> py::tuple {
            require((a.flags() & (py::array::c_style | py::array::f_style)) != 0,
                    "expected a contiguous array");
            if (a.ndim() == 2 && (a.flags() & py::array::c_style) == 0) a = a.attr("T").cast<py::array>();
            if (py::isinstance<py::array_t<double>>(a))
                return finite_max_abs_of<double>(a.cast<py::array_t<double, py::array::c_style>>());
            require(py::isinstance<py::array_t<float>>(a), "expected float32 or float64");
            return finite_max_abs_of<float>(a.cast<py::array_t<float, py::array::c_style>>());
        },
        py::arg("a"));
    // (all values finite, max |x| of every column) of a Fortran-contiguous float64 matrix, in
    // one read.
    m.def(
        "_column_max_abs",
        [](const py::array_t<double, py::array::f_style>& a) -> py::tuple {
            require(a.ndim() == 2, "expected a 2-D array");
            const Index rows = a.shape(0), cols = a.shape(1);
            py::array_t<double> out(static_cast<py::ssize_t>(cols));
            const double* x = a.data();
            double* o = out.mutable_data();
            bool finite = true;
            {
                py::gil_scoped_release release;
                finite = column_max_abs(x, rows, cols, o);
            }
            return py::make_tuple(finite, out);
        },
        py::arg("a"));
    // Feature indices by descending weight, equal weights in index order, NaN last: what
    // np.argsort(-w, kind="stable") gives, by a radix sort.
    m.def(
        "_ranking",
        [](const py::array_t<double, py::array::c_style | py::array::forcecast>& w) {
            require(w.ndim() == 1, "expected a 1-D array");
            const double* v = w.data();
            const std::size_t n = static_cast<std::size_t>(w.shape(0));
            std::vector<std::int64_t> r;
            {
                py::gil_scoped_release release;
                r = ranking_descending(v, n);
            }
            return py::array_t<std::int64_t>(static_cast<py::ssize_t>(n), r.data());
        },
        py::arg("w"));
}

}  // namespace fastfs::bindings
