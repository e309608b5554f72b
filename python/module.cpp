// The module table of sapling._sapling: its docstring, its errors
// (convert.cpp), the registry's algorithms, and each part's bindings in
// turn. What the parts share, and the input rules every call follows:
// binding.hpp.
#include <pybind11/pybind11.h>

#include "binding.hpp"
#include "sapling/filter.hpp"
#include "sapling/registry.hpp"

PYBIND11_MODULE(_sapling, m) {
  using namespace sapling;
  using namespace sapling::python;
  m.doc() =
      "sapling: exact broad-phase collision detection (numpy in, numpy out). What is refused raises "
      "sapling.Error (a ValueError): a Status of the library, a value out of range or not an integer, a shape, a "
      "float that is not exactly a float32; TypeError only for an argument that is not a real number where numbers "
      "are due (a string, None, a bool, a complex or object dtype); OSError for a file.";

  bind_errors(m);
  m.attr("ALL_CATEGORIES") = kAllCategories;

  m.def(
      "_algorithms",
      [] {
        py::list out;
        for (const AlgorithmInfo& info : algorithms()) {
          out.append(py::make_tuple(info.name, info.description, info.accepts_any_box));
        }
        return out;
      },
      "Every registered algorithm as (name, description, accepts_any_box).");

  bind_broad_phase(m);
  bind_one_shot(m);
  bind_traces(m);
}
