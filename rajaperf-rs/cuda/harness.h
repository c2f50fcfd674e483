// Host-side helpers shared by the CUDA baselines and their host stand-in: finding arguments
// by name, the clock, and turning C++ errors into rp_cuda_run's error code and message.
#ifndef RAJAPERF_HARNESS_H
#define RAJAPERF_HARNESS_H

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "rajaperf_cuda.h"

namespace rp {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Position of the named input or output in `args`; throws rp::Error when there is none.
int input_index(const rp_args* args, const char* name);
int output_index(const rp_args* args, const char* name);
int index_list_index(const rp_args* args, const char* name);

double scalar(const rp_args* args, const char* name);

// 64-bit values of integer data narrowed to RAJAPerf's 32-bit Int_type.
std::vector<int> narrow_ints(const long long* values, long long len);

// Stores a reduction's result in the kernel's one-element output `name`.
void set_scalar_output(const rp_args* args, const char* name, double value);
long long param(const rp_args* args, const char* name);

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start);

// One kernel's runner: runs the repetitions and fills in the timing, or throws.
using Runner = void (*)(const rp_args* args, int reps, rp_timing* timing);

// The runner of a kernel with several tunings (runners.h lists their names): `tuning` is the
// index of the requested one in that list.
using TunedRunner = void (*)(const rp_args* args, int tuning, int reps, rp_timing* timing);

// The name of the one tuning of a kernel that has one.
constexpr const char* kDefaultTuning = "default";

// Runs tuning `tuning` of `kernel` (runners.h), catching every exception into (code, message):
// 2 for an unknown kernel, 3 for a tuning the kernel does not have.
int dispatch(const char* kernel, const char* tuning, const rp_args* args, int reps,
             rp_timing* timing, char* err, int err_len);

}  // namespace rp

#endif
