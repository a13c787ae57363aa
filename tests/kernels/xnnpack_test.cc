// XNNPACK (Debian's build) as a second opinion on the int8 arithmetic: its qs8
// fully-connected operator with input_scale * kernel_scale == output_scale (a
// requantization multiplier of exactly 1), zero points 0 and no bias computes
// clamp(sum_k A[m, k] * B[n, k], -128, 127), i.e. our reference, saturated.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <doctest/doctest.h>
#include <xnnpack.h>

#include "kernels/qs8_gemm.h"

namespace octet {
namespace {

TEST_CASE("XNNPACK qs8 fully connected with multiplier 1 is the clamped reference") {
  REQUIRE(xnn_initialize(nullptr) == xnn_status_success);

  constexpr size_t M = 3, N = 5, K = 21;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-4, 4);
  // XNNPACK may read up to XNN_EXTRA_BYTES past the end of its input.
  std::vector<int8_t> A(M * K + XNN_EXTRA_BYTES, 0);  // [M, K] + slack
  std::vector<int8_t> B(N * K);                       // [N, K]
  for (size_t i = 0; i < M * K; ++i) A[i] = static_cast<int8_t>(small(rng));
  for (int8_t& v : B) v = static_cast<int8_t>(small(rng));
  // Row 0 of A against rows 0 and 1 of B: +-21 * 16 = +-336, clamped both ways.
  std::fill(A.begin(), A.begin() + K, 4);
  std::fill(B.begin(), B.begin() + K, 4);
  std::fill(B.begin() + K, B.begin() + 2 * K, -4);

  xnn_operator_t op = nullptr;
  REQUIRE(xnn_create_fully_connected_nc_qs8(K, N, K, N, /*input_zero_point=*/0,
                                            /*input_scale=*/0.5f, /*kernel_scale=*/0.25f, B.data(),
                                            /*bias=*/nullptr,
                                            /*output_zero_point=*/0, /*output_scale=*/0.125f,
                                            /*output_min=*/-128, /*output_max=*/127,
                                            /*flags=*/0, &op) == xnn_status_success);
  std::vector<int8_t> out(M * N);  // [M, N]
  REQUIRE(xnn_setup_fully_connected_nc_qs8(op, M, A.data(), out.data(), nullptr) ==
          xnn_status_success);
  REQUIRE(xnn_run_operator(op, nullptr) == xnn_status_success);
  REQUIRE(xnn_delete_operator(op) == xnn_status_success);

  std::vector<int32_t> ref(M * N);  // [M, N]
  qs8_gemm__ref(M, N, K, A.data(), K, B.data(), K, ref.data(), N);
  CHECK(ref[0] == 336);
  CHECK(ref[1] == -336);
  for (size_t i = 0; i < M * N; ++i) {
    INFO("C[" << i / N << ", " << i % N << "], reference " << ref[i]);
    CHECK(static_cast<int32_t>(out[i]) == std::clamp(ref[i], -128, 127));
  }
}

}  // namespace
}  // namespace octet
