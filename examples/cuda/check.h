// The CUDA twins' error check: a failed runtime call prints itself and the error, and main
// returns 1.
#pragma once
#include <cstdio>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e = (call);                                                              \
    if (e != cudaSuccess) {                                                              \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));                         \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)
