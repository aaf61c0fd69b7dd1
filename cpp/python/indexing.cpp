// indexing.cpp — t[...] with ints, slices (with steps), None and ...; every result
// is a view (select / slice / unsqueeze), so writes through it reach the base. One int64
// tensor (or list) picks rows with index_select. Everything beyond -- boolean masks,
// several index tensors, tensors mixed with slices -- is NumPy's advanced indexing:
// python/minitorch/ops/indexing.py applies the basic items as views and hands the index
// tensors to the index / index_put_ ops (one kernel each, ops/indexing.cpp).
#include "bindings.h"
#include "minitorch/autograd.h"

namespace minitorch::python {

namespace {

enum class Kind { Int, Slice, None, Ellipsis };

Kind kind_of(py::handle item)
{
    if (item.is_none()) return Kind::None;
    if (item.ptr() == Py_Ellipsis) return Kind::Ellipsis;
    if (PySlice_Check(item.ptr())) return Kind::Slice;
    MT_CHECK_TYPE(!PyBool_Check(item.ptr()), "index: indexing with a Python bool is not supported");
    if (PyLong_Check(item.ptr()) || PyIndex_Check(item.ptr())) {
        if (py::isinstance<TensorImpl>(item)) {
            Tensor t = item.cast<Tensor>();
            MT_CHECK_TYPE(t->numel() == 1 && is_integral(t->dtype), "index: only integer 0-dim tensors can be used as an index");
        }
        return Kind::Int;
    }
    throw TypeError(detail::str("index: only integers, slices (`:`), ellipsis (`...`), None and int64 or bool "
                                "tensors are valid indices, got ", type_name(item)));
}

std::optional<int64_t> slice_part(PyObject* o)
{
    if (o == Py_None) return std::nullopt;
    return int_arg(o, "index", "slice bound");
}

bool is_array_like(py::handle item)
{
    if (py::isinstance<TensorImpl>(item)) return item.cast<Tensor>()->dim() > 0 || item.cast<Tensor>()->dtype == DType::Bool;
    return py::isinstance<py::list>(item) || py::isinstance<py::array>(item);
}

bool is_bool_array(py::handle item)
{
    // A uint8 tensor is a mask too, as in PyTorch (which warns that this use is deprecated).
    if (py::isinstance<TensorImpl>(item))
        return item.cast<Tensor>()->dtype == DType::Bool || item.cast<Tensor>()->dtype == DType::UInt8;
    if (py::isinstance<py::array>(item)) return item.cast<py::array>().dtype().kind() == 'b';
    if (py::isinstance<py::list>(item)) {
        py::list l = item.cast<py::list>();
        return l.size() > 0 && PyBool_Check(l[0].ptr());
    }
    return false;
}

// Indices that need advanced indexing (python/minitorch/ops/indexing.py): a boolean mask,
// or a tuple holding a tensor, list or array.
bool is_advanced(py::handle idx)
{
    if (is_bool_array(idx)) return true;
    if (!py::isinstance<py::tuple>(idx)) return false;
    for (py::handle item : py::reinterpret_borrow<py::tuple>(idx))
        if (is_array_like(item)) return true;
    return false;
}

py::object advanced(const char* fn) { return py::module_::import("minitorch.ops.indexing").attr(fn); }

}  // namespace

// x[idx] with an int64 tensor, a list of ints or an int NumPy array: index_select on dim 0.
std::optional<Tensor> tensor_index(py::handle idx, Device device)
{
    if (py::isinstance<TensorImpl>(idx)) {
        Tensor i = idx.cast<Tensor>();
        if (i->dim() == 0) return std::nullopt;  // a 0-dim int tensor is an ordinary int index
        MT_CHECK_TYPE(is_integral(i->dtype), "index: tensors used as indices must be long, int or bool, got ", i->dtype);
        i = to_dtype(i, DType::Int64);  // int32, int16, int8 indices are widened
        // As in PyTorch, a CPU index tensor may index a tensor on any device.
        return i->device().is_cpu() ? to_device(i, device) : i;
    }
    if (py::isinstance<py::list>(idx) || py::isinstance<py::array>(idx)) {
        py::object t = py::module_::import("minitorch").attr("tensor")(idx, py::arg("device") = device);
        Tensor i = t.cast<Tensor>();
        MT_CHECK_TYPE(i->dtype == DType::Int64 || i->numel() == 0, "index: lists and arrays used as indices must "
                                                                   "hold integers, got ", i->dtype);
        return to_dtype(i, DType::Int64);
    }
    return std::nullopt;
}

Tensor index(const Tensor& t, py::handle idx)
{
    if (is_advanced(idx)) return advanced("getitem")(t, idx).cast<Tensor>();
    if (auto i = tensor_index(idx, t->device())) {
        MT_CHECK_INDEX(t->dim() > 0, "index: cannot index a 0-dim tensor with a tensor");
        Tensor flat = reshape(*i, {(*i)->numel()});
        Tensor rows = index_select(t, 0, flat);
        Shape shape = (*i)->shape;  // x[idx] has shape idx.shape + x.shape[1:]
        shape.insert(shape.end(), t->shape.begin() + 1, t->shape.end());
        return reshape(rows, shape);
    }
    py::tuple items = py::isinstance<py::tuple>(idx) ? py::reinterpret_borrow<py::tuple>(idx) : py::make_tuple(idx);
    std::vector<Kind> kinds;
    int64_t consumed = 0, ellipses = 0;
    for (py::handle item : items) {
        kinds.push_back(kind_of(item));
        consumed += kinds.back() == Kind::Int || kinds.back() == Kind::Slice;
        ellipses += kinds.back() == Kind::Ellipsis;
    }
    MT_CHECK_INDEX(ellipses <= 1, "index: an index can only have a single ellipsis ('...')");
    MT_CHECK_INDEX(consumed <= t->dim(), "index: too many indices for tensor of dimension ", t->dim(), " (got ",
                   consumed, ")");
    Tensor out = t;
    int64_t d = 0;       // the dim of `out` the next item applies to
    int64_t orig_d = 0;  // the same dim counted in `t` (for error messages)
    for (size_t i = 0; i < kinds.size(); ++i) {
        py::handle item = items[i];
        switch (kinds[i]) {
            case Kind::Int: {
                int64_t k = int_arg(item, "index", "index");
                const int64_t size = out->shape[d];
                MT_CHECK_INDEX(k >= -size && k < size, "index ", k, " is out of bounds for dimension ", orig_d,
                               " with size ", size);
                out = select(out, d, k);
                ++orig_d;
                break;
            }
            case Kind::Slice: {
                auto* s = reinterpret_cast<PySliceObject*>(item.ptr());
                auto step = slice_part(s->step);
                MT_CHECK(!step || *step != 0, "index: slice step cannot be zero");
                auto start = slice_part(s->start), stop = slice_part(s->stop);
                // A slice of the whole dim (x[:, :50]'s ':') is skipped, as PyTorch's indexing
                // does: no view and no backward node (whose backward would be a zero fill and
                // a copy) for a dim that keeps everything.
                const bool whole =
                    (!start || *start == 0) && (!stop || *stop >= out->shape[d]) && (!step || *step == 1);
                if (!whole) out = slice(out, d, start, stop, step ? *step : 1);
                ++d, ++orig_d;
                break;
            }
            case Kind::None: out = unsqueeze(out, d); ++d; break;
            case Kind::Ellipsis: d += t->dim() - consumed, orig_d += t->dim() - consumed; break;
        }
    }
    // A plain t[...] or t[:] still returns a new view object, like PyTorch.
    return out == t ? view(t, t->shape) : out;
}

void index_put(const Tensor& t, py::handle idx, py::handle value)
{
    autograd::check_inplace(t, "index_put_");
    if (is_advanced(idx) || tensor_index(idx, t->device())) {
        advanced("setitem")(t, idx, value);
        return;
    }
    Tensor dst = index(t, idx);
    if (auto s = scalar_arg(value)) {
        fill_(dst, *s);
        return;
    }
    Tensor src;
    if (py::isinstance<TensorImpl>(value)) {
        src = value.cast<Tensor>();
    } else {
        // Lists and arrays: make a tensor of the destination's dtype first.
        src = py::module_::import("minitorch").attr("tensor")(value, py::arg("dtype") = t->dtype,
                                                              py::arg("device") = t->device())
                  .cast<Tensor>();
    }
    // PyTorch drops leading size-1 dims of the value: t[0] = x[None] works.
    while (src->dim() > dst->dim() && src->shape[0] == 1) src = select(src, 0, 0);
    copy_(dst, src);
}

}  // namespace minitorch::python
