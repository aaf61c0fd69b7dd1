// error.h — one way to fail: MT_CHECK builds the message, the bindings map the type.
//
//   MT_CHECK(a.size(-1) == b.size(-2), "matmul: shapes ", a.shape, " and ", b.shape, ...);
//   -> Python InputError (a ValueError and a RuntimeError) with that text.
#pragma once
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace minitorch {

// Bad shapes or values. Python sees minitorch.InputError, a subclass of both ValueError
// (our convention) and RuntimeError (what PyTorch raises), so either `except` works.
struct ValueError : std::runtime_error { using std::runtime_error::runtime_error; };
// Unsupported dtype or argument type -> Python DTypeError(TypeError, RuntimeError).
struct TypeError : std::runtime_error { using std::runtime_error::runtime_error; };
// Index or dim out of range -> Python IndexError.
struct IndexError : std::runtime_error { using std::runtime_error::runtime_error; };
// Allocation too large -> Python MemoryError.
struct OutOfMemoryError : std::runtime_error { using std::runtime_error::runtime_error; };
// GPU memory exhausted -> Python minitorch.cuda.OutOfMemoryError (a RuntimeError and
// a MemoryError, like torch.cuda.OutOfMemoryError).
struct CudaOutOfMemoryError : std::runtime_error { using std::runtime_error::runtime_error; };
// Anything else (std::runtime_error) -> Python RuntimeError.

namespace detail {
template <class T>
void append(std::ostringstream& os, const T& value) { os << value; }

// Shapes print like Python tuples: (32, 784), (5,), ().
inline void append(std::ostringstream& os, const std::vector<int64_t>& shape)
{
    os << '(';
    for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
    os << (shape.size() == 1 ? ",)" : ")");
}

template <class... Args>
std::string str(const Args&... args)
{
    std::ostringstream os;
    (append(os, args), ...);
    return os.str();
}
}  // namespace detail

}  // namespace minitorch

#define MT_THROW_IF_NOT_(Kind, cond, ...)                                        \
    do {                                                                         \
        if (!(cond)) throw ::minitorch::Kind(::minitorch::detail::str(__VA_ARGS__)); \
    } while (0)

#define MT_CHECK(cond, ...) MT_THROW_IF_NOT_(ValueError, cond, __VA_ARGS__)
#define MT_CHECK_TYPE(cond, ...) MT_THROW_IF_NOT_(TypeError, cond, __VA_ARGS__)
#define MT_CHECK_INDEX(cond, ...) MT_THROW_IF_NOT_(IndexError, cond, __VA_ARGS__)
#define MT_CHECK_RUNTIME(cond, ...)                                                  \
    do {                                                                             \
        if (!(cond)) throw std::runtime_error(::minitorch::detail::str(__VA_ARGS__)); \
    } while (0)
