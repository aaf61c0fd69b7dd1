// raw_kernel.cu — minitorch.cuda.RawKernel on a real GPU: a student's CUDA C source,
// compiled at run time by NVRTC into a cubin for this GPU, loaded with the runtime's
// library API (cudaLibraryLoadData) and launched with cudaLaunchKernel.
//
// NVRTC is loaded with dlopen the first time a kernel is compiled, so minitorch imports
// (and runs its own kernels) on machines without it; Python passes the path of the
// `nvidia-cuda-nvrtc` wheel's library when one is installed. The emulated build compiles
// RawKernels with the host C++ compiler instead (python/minitorch/cuda_kernels), so every
// function here says so there.
#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common.cuh"
#include "dlopen_first.h"

#if !MT_CUDA_EMULATED
#include <nvrtc.h>
#endif

namespace minitorch::cuda {

#if MT_CUDA_EMULATED

namespace {
[[noreturn]] void emulated_only()
{
    throw std::runtime_error("RawKernel: NVRTC compiles for a real GPU; the emulated build compiles kernels with "
                             "the host C++ compiler (minitorch.cuda.RawKernel picks that path by itself)");
}
}  // namespace

NvrtcResult nvrtc_compile(const std::string&, const std::string&, const std::vector<std::string>&,
                          const std::vector<std::string>&, const std::string&)
{
    emulated_only();
}
uintptr_t raw_load(const std::string&) { emulated_only(); }
int compute_capability() { return 0; }
void raw_unload(uintptr_t) {}
RawKernelInfo raw_get_kernel(uintptr_t, const std::string&) { emulated_only(); }
void raw_launch(uintptr_t, const unsigned*, const unsigned*, size_t, const std::vector<std::string>&)
{
    emulated_only();
}

#else

namespace {

// The NVRTC functions minitorch calls, looked up in the library once.
struct Nvrtc {
    void* lib = nullptr;
    std::string loaded_from;
    nvrtcResult (*version)(int*, int*);
    nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
    nvrtcResult (*destroy)(nvrtcProgram*);
    nvrtcResult (*add_name)(nvrtcProgram, const char*);
    nvrtcResult (*compile)(nvrtcProgram, int, const char* const*);
    nvrtcResult (*log_size)(nvrtcProgram, size_t*);
    nvrtcResult (*log)(nvrtcProgram, char*);
    nvrtcResult (*cubin_size)(nvrtcProgram, size_t*);
    nvrtcResult (*cubin)(nvrtcProgram, char*);
    nvrtcResult (*lowered_name)(nvrtcProgram, const char*, const char**);
    const char* (*error_string)(nvrtcResult);
};

template <class F>
void bind(Nvrtc& n, F& f, const char* name)
{
    f = reinterpret_cast<F>(dlsym(n.lib, name));
    if (!f)
        throw std::runtime_error(detail::str("RawKernel: ", n.loaded_from, " has no ", name,
                                             " (an NVRTC older than CUDA 11.1?)"));
}

// The library, loaded once; a struct is published only when every function was found.
const Nvrtc& nvrtc(const std::string& wheel_path)
{
    static std::mutex mutex;
    static std::unique_ptr<Nvrtc> loaded;
    std::lock_guard<std::mutex> lock(mutex);
    if (loaded) return *loaded;
    auto n = std::make_unique<Nvrtc>();
    Opened opened = dlopen_first({wheel_path, "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"});
    n->lib = opened.lib;
    n->loaded_from = opened.name;
    if (!n->lib)
        throw std::runtime_error("RawKernel: NVRTC (the CUDA run-time compiler) was not found (tried " + opened.tried +
                                 "); install it with `pip install nvidia-cuda-nvrtc` or put the CUDA toolkit's "
                                 "lib64 on LD_LIBRARY_PATH");
    bind(*n, n->version, "nvrtcVersion");
    bind(*n, n->create, "nvrtcCreateProgram");
    bind(*n, n->destroy, "nvrtcDestroyProgram");
    bind(*n, n->add_name, "nvrtcAddNameExpression");
    bind(*n, n->compile, "nvrtcCompileProgram");
    bind(*n, n->log_size, "nvrtcGetProgramLogSize");
    bind(*n, n->log, "nvrtcGetProgramLog");
    bind(*n, n->cubin_size, "nvrtcGetCUBINSize");
    bind(*n, n->cubin, "nvrtcGetCUBIN");
    bind(*n, n->lowered_name, "nvrtcGetLoweredName");
    bind(*n, n->error_string, "nvrtcGetErrorString");
    loaded = std::move(n);
    return *loaded;
}

void check(const Nvrtc& n, nvrtcResult r, const char* what)
{
    if (r != NVRTC_SUCCESS) throw std::runtime_error(detail::str("RawKernel: ", what, " failed: ", n.error_string(r)));
}

// The program's messages (warnings too), or "" when there are none.
std::string program_log(const Nvrtc& n, nvrtcProgram p)
{
    size_t size = 0;
    if (n.log_size(p, &size) != NVRTC_SUCCESS || size <= 1) return "";
    std::string log(size, '\0');
    if (n.log(p, log.data()) != NVRTC_SUCCESS) return "";
    log.resize(size - 1);  // the terminating NUL
    return log;
}

}  // namespace

NvrtcResult nvrtc_compile(const std::string& source, const std::string& filename, const std::vector<std::string>& names,
                          const std::vector<std::string>& options, const std::string& nvrtc_path)
{
    const Nvrtc& n = nvrtc(nvrtc_path);
    NvrtcResult out;
    int major = 0, minor = 0;
    check(n, n.version(&major, &minor), "nvrtcVersion");
    out.nvrtc_version = major * 1000 + minor * 10;

    // A cubin for this GPU unless the student chose the architecture.
    std::vector<std::string> opts = options;
    bool has_arch = false;
    for (const std::string& o : opts)
        has_arch |= o.rfind("-arch", 0) == 0 || o.rfind("--gpu-architecture", 0) == 0;
    if (!has_arch) {
        if (!init()) throw std::runtime_error("RawKernel: no CUDA device is available to compile for (pass -arch=sm_XY)");
        int device = 0, cc_major = 0, cc_minor = 0;
        MT_CUDA_CHECK(cudaGetDevice(&device));
        MT_CUDA_CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device));
        MT_CUDA_CHECK(cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, device));
        opts.push_back(detail::str("--gpu-architecture=sm_", cc_major, cc_minor));
    }
    std::vector<const char*> argv;
    for (const std::string& o : opts) argv.push_back(o.c_str());

    nvrtcProgram prog = nullptr;
    check(n, n.create(&prog, source.c_str(), filename.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram");
    struct Destroy {
        const Nvrtc& n;
        nvrtcProgram& p;
        ~Destroy() { n.destroy(&p); }
    } destroy{n, prog};
    // Name expressions let C++ (mangled, templated) kernels be found as well as extern "C" ones.
    for (const std::string& name : names) check(n, n.add_name(prog, name.c_str()), "nvrtcAddNameExpression");
    const nvrtcResult r = n.compile(prog, int(argv.size()), argv.data());
    out.log = program_log(n, prog);
    if (r == NVRTC_ERROR_COMPILATION) return out;  // ok == false: Python raises CompileError with the log
    check(n, r, "nvrtcCompileProgram");
    size_t size = 0;
    check(n, n.cubin_size(prog, &size), "nvrtcGetCUBINSize");
    out.cubin.resize(size);
    check(n, n.cubin(prog, out.cubin.data()), "nvrtcGetCUBIN");
    for (const std::string& name : names) {
        const char* lowered = nullptr;
        check(n, n.lowered_name(prog, name.c_str(), &lowered), "nvrtcGetLoweredName");
        out.lowered_names.push_back(lowered);
    }
    out.ok = true;
    return out;
}

int compute_capability()
{
    if (!init()) return 0;
    int device = 0, major = 0, minor = 0;
    MT_CUDA_CHECK(cudaGetDevice(&device));
    MT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    MT_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return 10 * major + minor;
}

uintptr_t raw_load(const std::string& cubin)
{
    if (!init()) throw std::runtime_error("RawKernel: no CUDA device is available");
    cudaLibrary_t lib = nullptr;
    MT_CUDA_CHECK(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    return reinterpret_cast<uintptr_t>(lib);
}

void raw_unload(uintptr_t library)
{
    if (library) cudaLibraryUnload(reinterpret_cast<cudaLibrary_t>(library));  // at exit the runtime may be gone
}

RawKernelInfo raw_get_kernel(uintptr_t library, const std::string& lowered_name)
{
    RawKernelInfo info;
    cudaKernel_t k = nullptr;
    MT_CUDA_CHECK(cudaLibraryGetKernel(&k, reinterpret_cast<cudaLibrary_t>(library), lowered_name.c_str()));
    info.kernel = reinterpret_cast<uintptr_t>(k);
    const void* f = reinterpret_cast<const void*>(k);
    // The parameters' sizes: asked one index at a time until the runtime says there is none.
    for (size_t i = 0;; ++i) {
        size_t offset = 0, size = 0;
        if (cudaFuncGetParamInfo(f, i, &offset, &size) != cudaSuccess) {
            cudaGetLastError();  // the expected "invalid value" past the last one
            break;
        }
        info.param_sizes.push_back(size);
    }
    cudaFuncAttributes attr{};
    MT_CUDA_CHECK(cudaFuncGetAttributes(&attr, f));
    info.max_threads_per_block = attr.maxThreadsPerBlock;
    info.static_shared_bytes = attr.sharedSizeBytes;
    return info;
}

void raw_launch(uintptr_t kernel, const unsigned* grid, const unsigned* block, size_t shared_bytes,
                const std::vector<std::string>& args)
{
    // cudaLaunchKernel reads each argument's bytes through args[i]; the strings hold them.
    std::vector<void*> ptrs;
    for (const std::string& a : args) ptrs.push_back(const_cast<char*>(a.data()));
    const cudaError_t err = cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(grid[0], grid[1], grid[2]),
                                             dim3(block[0], block[1], block[2]), ptrs.data(), shared_bytes, 0);
    MT_CUDA_CHECK_LAUNCH_(err != cudaSuccess ? err : cudaGetLastError(), "RawKernel");
}

#endif

}  // namespace minitorch::cuda
