// Array conversions for the validation layer (fastfs._validation).
#include "common.hpp"
#include "fastfs/data/fortran_copy.hpp"

namespace fastfs::bindings {

namespace {
template <class S, class D>
py::tuple fortran_copy_of(const py::array_t<S, py::array::c_style>& a) {
    require(a.ndim() == 2, "expected a 2-D array");
    const Index m = a.shape(0), n = a.shape(1);
    py::array_t<D, py::array::f_style> out({m, n});
    const S* src = a.data();
    D* dst = out.mutable_data();
    bool finite = true;
    {
        py::gil_scoped_release release;
        finite = fortran_copy(src, m, n, dst);
    }
    return py::make_tuple(out, finite);
}
}  // namespace

void register_arrays(py::module_& m) {
    // (Fortran-ordered copy, all values finite) of a C-contiguous float64 or float32 array;
    // `to_float64` converts float32.
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
}

}  // namespace fastfs::bindings
