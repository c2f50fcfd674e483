// CUDA helpers of the baselines: error checks, device copies of a run's arrays, and
// RAJAPerf's timing of the repetitions.
#ifndef RAJAPERF_DEVICE_CUH
#define RAJAPERF_DEVICE_CUH

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "bodies.h"
#include "harness.h"

#define RP_CUDA_CHECK(call) ::rp::cuda_check((call), #call, __FILE__, __LINE__)

namespace rp {

inline void cuda_check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) {
    throw Error(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": " +
                cudaGetErrorString(e));
  }
}

// Blocks of `block_size` threads covering `iend` iterations (RAJA_DIVIDE_CEILING_INT).
inline size_t grid_size(Index_type iend, size_t block_size) {
  return iend > 0 ? (static_cast<size_t>(iend) + block_size - 1) / block_size : 0;
}

// Device copies of every input and output of a run, made (and timed) on construction and
// freed on destruction; `copy_back` brings the outputs home.
class DeviceArrays {
 public:
  DeviceArrays(const rp_args* args, rp_timing* timing);
  ~DeviceArrays();
  DeviceArrays(const DeviceArrays&) = delete;
  DeviceArrays& operator=(const DeviceArrays&) = delete;

  Real_ptr input(const char* name) { return in_[input_index(args_, name)]; }
  Real_ptr output(const char* name) { return out_[output_index(args_, name)]; }
  // An index list (64-bit Index_type) or integer data (32-bit Int_type), by name.
  Index_ptr index_list(const char* name) {
    return static_cast<Index_ptr>(integer_list(name, sizeof(Index_type)));
  }
  Int_ptr int_list(const char* name) { return static_cast<Int_ptr>(integer_list(name, sizeof(Int_type))); }

  void copy_back();

 private:
  void release();

  const rp_args* args_;
  rp_timing* timing_;
  std::vector<Real_ptr> in_;
  std::vector<Real_ptr> out_;
  void* integer_list(const char* name, size_t width);

  std::vector<void*> idx_;
  // rp_args::pad_mib (the runner's --pad-mib): unused device memory allocated before each
  // array, which moves the arrays to other addresses.
  std::vector<void*> pads_;
  void pad();
};

// A reduction variable of `n` elements, as RAJAPerf's RAJAPERF_CUDA_REDUCER_* macros keep
// it: device memory plus pinned host memory. `initialize` copies the initial value into every
// element, `copy_back` brings the elements home and waits for them.
template <typename T>
class Reducer {
 public:
  explicit Reducer(size_t n) : n_(n) {
    RP_CUDA_CHECK(cudaMalloc(&device_, n * sizeof(T)));
    cudaError_t e = cudaMallocHost(&host_, n * sizeof(T));
    if (e != cudaSuccess) {
      cudaFree(device_);
      RP_CUDA_CHECK(e);
    }
  }
  ~Reducer() {
    cudaFree(device_);
    cudaFreeHost(host_);
  }
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  T* device() const { return device_; }

  void initialize(T value) {
    for (size_t k = 0; k < n_; ++k) host_[k] = value;
    RP_CUDA_CHECK(cudaMemcpyAsync(device_, host_, n_ * sizeof(T), cudaMemcpyHostToDevice));
  }

  // One initial value per element.
  void initialize(const T* values) {
    for (size_t k = 0; k < n_; ++k) host_[k] = values[k];
    RP_CUDA_CHECK(cudaMemcpyAsync(device_, host_, n_ * sizeof(T), cudaMemcpyHostToDevice));
  }

  const T* copy_back() {
    RP_CUDA_CHECK(cudaMemcpyAsync(host_, device_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    RP_CUDA_CHECK(cudaStreamSynchronize(0));
    return host_;
  }

 private:
  size_t n_;
  T* device_ = nullptr;
  T* host_ = nullptr;
};

// RAJAPerf's startTimer/stopTimer around the repetitions: synchronise, start the clock, launch
// every repetition (checking each launch), synchronise, stop.
template <typename Launch>
void timed_reps(int reps, rp_timing* timing, Launch launch) {
  RP_CUDA_CHECK(cudaDeviceSynchronize());
  const Clock::time_point start = Clock::now();
  for (int rep = 0; rep < reps; ++rep) {
    launch();
    RP_CUDA_CHECK(cudaGetLastError());
  }
  RP_CUDA_CHECK(cudaDeviceSynchronize());
  timing->kernel_seconds = seconds_since(start);
}

}  // namespace rp

#endif
