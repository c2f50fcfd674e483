#include <algorithm>
#include <cstdio>
#include <limits>

#include "device.cuh"

namespace rp {

namespace {

static_assert(sizeof(long long) == sizeof(Index_type), "index lists travel as 64-bit integers");

template <typename T, typename Host>
T* to_device(const Host* host, long long len, rp_timing* timing) {
  static_assert(sizeof(T) == sizeof(Host), "same element size on both sides");
  T* ptr = nullptr;
  const size_t bytes = static_cast<size_t>(len) * sizeof(T);
  if (bytes == 0) return ptr;
  RP_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  cudaError_t copied = cudaMemcpy(ptr, host, bytes, cudaMemcpyHostToDevice);
  if (copied != cudaSuccess) {
    cudaFree(ptr);
    RP_CUDA_CHECK(copied);
  }
  timing->h2d_bytes += bytes;
  timing->h2d_copies += 1;
  return ptr;
}

}  // namespace

DeviceArrays::DeviceArrays(const rp_args* args, rp_timing* timing) : args_(args), timing_(timing) {
  try {
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    const Clock::time_point start = Clock::now();
    for (int k = 0; k < args->n_inputs; ++k) {
      pad();
      in_.push_back(to_device<Real_type>(args->inputs[k], args->input_lens[k], timing));
    }
    for (int k = 0; k < args->n_outputs; ++k) {
      pad();
      out_.push_back(to_device<Real_type>(args->outputs[k], args->output_lens[k], timing));
    }
    for (int k = 0; k < args->n_indices; ++k) {
      if (args->index_widths[k] == static_cast<int>(sizeof(Int_type))) {
        const std::vector<Int_type> narrow = narrow_ints(args->indices[k], args->index_lens[k]);
        idx_.push_back(to_device<Int_type>(narrow.data(), args->index_lens[k], timing));
      } else {
        idx_.push_back(to_device<Index_type>(args->indices[k], args->index_lens[k], timing));
      }
    }
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    timing->h2d_seconds = seconds_since(start);
  } catch (...) {
    release();
    throw;
  }
}

DeviceArrays::~DeviceArrays() { release(); }

void DeviceArrays::pad() {
  if (args_->pad_mib == 0) return;
  void* p = nullptr;
  RP_CUDA_CHECK(cudaMalloc(&p, static_cast<size_t>(args_->pad_mib) << 20));
  pads_.push_back(p);
}

void DeviceArrays::release() {
  // Errors here would only hide the one being reported; the context is torn down at exit.
  for (Real_ptr p : in_) cudaFree(p);
  for (Real_ptr p : out_) cudaFree(p);
  for (void* p : idx_) cudaFree(p);
  for (void* p : pads_) cudaFree(p);
  in_.clear();
  out_.clear();
  idx_.clear();
  pads_.clear();
}

void* DeviceArrays::integer_list(const char* name, size_t width) {
  const int k = index_list_index(args_, name);
  if (args_->index_widths[k] != static_cast<int>(width)) {
    throw Error(std::string("integer array '") + name + "' has another width");
  }
  return idx_[k];
}

void DeviceArrays::copy_back() {
  const Clock::time_point start = Clock::now();
  for (int k = 0; k < args_->n_outputs; ++k) {
    const size_t bytes = static_cast<size_t>(args_->output_lens[k]) * sizeof(Real_type);
    if (bytes == 0) continue;
    RP_CUDA_CHECK(cudaMemcpy(args_->outputs[k], out_[k], bytes, cudaMemcpyDeviceToHost));
    timing_->d2h_bytes += bytes;
    timing_->d2h_copies += 1;
  }
  timing_->d2h_seconds = seconds_since(start);
}

namespace {

// A device allocation of `bytes`, freed when it goes out of scope.
class DeviceBytes {
 public:
  explicit DeviceBytes(size_t bytes) { RP_CUDA_CHECK(cudaMalloc(&ptr_, bytes)); }
  ~DeviceBytes() { cudaFree(ptr_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

// A CUDA event, destroyed when it goes out of scope.
class Event {
 public:
  Event() { RP_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace

// MEMCPY_D2D, not a RAJAPerf kernel: the device copy bandwidth the stream kernels are
// compared with. Two device arrays of `n` doubles; one untimed copy, then `reps` copies
// (cudaMemcpyAsync device to device on the default stream), each timed alone between two
// events; kernel_seconds is the fastest. A copy reads n doubles and writes n.
void run_memcpy_d2d(const rp_args* args, int reps, rp_timing* timing) {
  const long long n = param(args, "n");
  if (n <= 0 || reps <= 0) throw Error("MEMCPY_D2D needs n > 0 and reps > 0");
  if (static_cast<unsigned long long>(n) > std::numeric_limits<size_t>::max() / sizeof(Real_type)) {
    throw Error("MEMCPY_D2D: n is too large");
  }
  const size_t bytes = static_cast<size_t>(n) * sizeof(Real_type);
  DeviceBytes src(bytes), dst(bytes);
  Event start, stop;
  RP_CUDA_CHECK(cudaMemset(src.get(), 0, bytes));
  RP_CUDA_CHECK(cudaMemset(dst.get(), 0, bytes));
  RP_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, 0));
  RP_CUDA_CHECK(cudaDeviceSynchronize());
  float best_ms = std::numeric_limits<float>::infinity();
  for (int rep = 0; rep < reps; ++rep) {
    RP_CUDA_CHECK(cudaEventRecord(start.get(), 0));
    RP_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, 0));
    RP_CUDA_CHECK(cudaEventRecord(stop.get(), 0));
    RP_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0.0f;
    RP_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    best_ms = std::min(best_ms, ms);
  }
  timing->kernel_seconds = static_cast<double>(best_ms) * 1e-3;
}

}  // namespace rp

extern "C" int rp_cuda_device_name(char* name, int len) {
  int device = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    return 1;
  }
  std::snprintf(name, static_cast<size_t>(len), "%s (sm_%d%d)", prop.name, prop.major, prop.minor);
  return 0;
}
