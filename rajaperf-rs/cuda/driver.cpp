// rajaperf-cuda: serves the runner's requests on stdin/stdout (the protocol of
// rajaperf-rs/src/protocol.rs) by calling rp_cuda_run, one request after another, until its
// input ends. Errors inside a run are answered as failures; a malformed stream ends the
// process with status 2.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rajaperf_cuda.h"

namespace {

const char kMagic[8] = {'R', 'P', 'C', 'U', 'D', 'A', '0', '5'};

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "rajaperf-cuda: %s\n", what);
  std::exit(2);
}

void read_exact(void* dst, size_t n) {
  if (n > 0 && std::fread(dst, 1, n, stdin) != n) die("the request ended early");
}

void write_all(const void* src, size_t n) {
  if (n > 0 && std::fwrite(src, 1, n, stdout) != n) die("cannot write the response");
}

// Integers and floats travel little-endian, which is the byte order of every machine this
// runs on (x86-64, aarch64); memcpy keeps it free of alignment assumptions.
template <typename T>
T read_value() {
  T v;
  read_exact(&v, sizeof v);
  return v;
}

template <typename T>
void write_value(T v) {
  write_all(&v, sizeof v);
}

std::string read_string() {
  std::string s(read_value<uint32_t>(), '\0');
  read_exact(&s[0], s.size());
  return s;
}

void write_string(const std::string& s) {
  write_value<uint32_t>(static_cast<uint32_t>(s.size()));
  write_all(s.data(), s.size());
}

template <typename T>
std::vector<T> read_array() {
  std::vector<T> a(static_cast<size_t>(read_value<uint64_t>()));
  read_exact(a.data(), a.size() * sizeof(T));
  return a;
}

struct Named {
  std::vector<std::string> names;
  std::vector<const char*> c_names() const {
    std::vector<const char*> v;
    for (const std::string& n : names) v.push_back(n.c_str());
    return v;
  }
};

// Answers one request; false when the input has ended.
bool serve_one() {
  char magic[8];
  size_t got = std::fread(magic, 1, sizeof magic, stdin);
  if (got == 0) return false;
  if (got != sizeof magic || std::memcmp(magic, kMagic, sizeof magic) != 0) die("not a rajaperf request");

  const std::string kernel = read_string();
  const std::string tuning = read_string();
  const int reps = static_cast<int>(read_value<uint32_t>());
  const uint32_t pad_mib = read_value<uint32_t>();
  Named params, scalars, inputs, outputs;
  std::vector<long long> param_values;
  std::vector<double> scalar_values;
  for (uint32_t n = read_value<uint32_t>(), k = 0; k < n; ++k) {
    params.names.push_back(read_string());
    param_values.push_back(read_value<int64_t>());
  }
  for (uint32_t n = read_value<uint32_t>(), k = 0; k < n; ++k) {
    scalars.names.push_back(read_string());
    scalar_values.push_back(read_value<double>());
  }
  std::vector<std::vector<double>> in_data, out_data;
  for (uint32_t n = read_value<uint32_t>(), k = 0; k < n; ++k) {
    inputs.names.push_back(read_string());
    in_data.push_back(read_array<double>());
  }
  for (uint32_t n = read_value<uint32_t>(), k = 0; k < n; ++k) {
    outputs.names.push_back(read_string());
    out_data.push_back(read_array<double>());
  }
  Named indices;
  std::vector<std::vector<long long>> index_data;
  std::vector<int> index_widths;
  for (uint32_t n = read_value<uint32_t>(), k = 0; k < n; ++k) {
    indices.names.push_back(read_string());
    index_widths.push_back(read_value<uint8_t>());
    index_data.push_back(read_array<long long>());
  }

  std::vector<const double*> in_ptrs;
  std::vector<double*> out_ptrs;
  std::vector<long long> in_lens, out_lens;
  for (auto& a : in_data) {
    in_ptrs.push_back(a.data());
    in_lens.push_back(static_cast<long long>(a.size()));
  }
  for (auto& a : out_data) {
    out_ptrs.push_back(a.data());
    out_lens.push_back(static_cast<long long>(a.size()));
  }
  std::vector<const long long*> index_ptrs;
  std::vector<long long> index_lens;
  for (auto& a : index_data) {
    index_ptrs.push_back(a.data());
    index_lens.push_back(static_cast<long long>(a.size()));
  }
  const auto param_names = params.c_names(), scalar_names = scalars.c_names();
  const auto input_names = inputs.c_names(), output_names = outputs.c_names();
  const auto index_names = indices.c_names();
  rp_args args = {
      static_cast<int>(param_values.size()),  param_names.data(),  param_values.data(),
      static_cast<int>(scalar_values.size()), scalar_names.data(), scalar_values.data(),
      static_cast<int>(in_ptrs.size()),       input_names.data(),  in_ptrs.data(),       in_lens.data(),
      static_cast<int>(out_ptrs.size()),      output_names.data(), out_ptrs.data(),      out_lens.data(),
      static_cast<int>(index_ptrs.size()),    index_names.data(),  index_ptrs.data(),    index_lens.data(),
      index_widths.data(),
      pad_mib,
  };

  rp_timing timing = {};
  char err[1024];
  const int status = rp_cuda_run(kernel.c_str(), tuning.c_str(), &args, reps, &timing, err, sizeof err);
  char device[256];
  if (rp_cuda_device_name(device, sizeof device) != 0) std::snprintf(device, sizeof device, "unknown GPU");

  write_all(kMagic, sizeof kMagic);
  write_value<int32_t>(status);
  write_string(status == 0 ? std::string() : std::string(err));
  write_string(device);
  write_value<double>(timing.kernel_seconds);
  write_value<double>(timing.h2d_seconds);
  write_value<double>(timing.d2h_seconds);
  write_value<uint64_t>(timing.h2d_bytes);
  write_value<uint64_t>(timing.d2h_bytes);
  write_value<uint64_t>(timing.h2d_copies);
  write_value<uint64_t>(timing.d2h_copies);
  const uint32_t count = status == 0 ? static_cast<uint32_t>(out_data.size()) : 0;
  write_value<uint32_t>(count);
  for (uint32_t k = 0; k < count; ++k) {
    write_value<uint64_t>(out_data[k].size());
    write_all(out_data[k].data(), out_data[k].size() * sizeof(double));
  }
  if (std::fflush(stdout) != 0) die("cannot write the response");
  return true;
}

}  // namespace

int main() {
  while (serve_one()) {
  }
  return 0;
}
