// The kernel dispatch table: one struct of function pointers, filled once from
// the CPU's features (platform/cpu.h) the first time it is asked for. Ops call
// through it; nothing else in the runtime knows which ISA it runs on.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/f32_attention.h"
#include "kernels/f32_delta_rule.h"
#include "kernels/f32_elementwise.h"
#include "kernels/position.h"
#include "kernels/qs8_dequantize_rows.h"
#include "kernels/qs8_gemm.h"
#include "kernels/qs8_packed_check.h"
#include "kernels/qs8_packed_gemm.h"
#include "kernels/qs8_quantize_rows.h"
#include "kernels/qs8_softmax_tile.h"
#include "kernels/qu8s8_pv.h"

namespace octet {

// One compiled implementation of a kernel family and what it needs to run.
template <typename Fn>
struct KernelVariant {
  const char* name;           // e.g. "qs8_gemm_4x4c64__avx512vnni"
  Fn fn;
  uint32_t required_features; // CpuFeature bits; 0 = runs everywhere
};

struct KernelTable {
  Qs8GemmFn qs8_gemm;
  const char* qs8_gemm_name;
  // Against weights packed by qs8_pack_weights__ref (one layout for every variant).
  Qs8PackedGemmFn qs8_packed_gemm;
  const char* qs8_packed_gemm_name;
  // qs8_packed_gemm with qs8_dequantize_rows fused, bit-identical with the two;
  // null where no variant fuses them (then call the two).
  Qs8PackedGemmF32Fn qs8_packed_gemm_f32;
  const char* qs8_packed_gemm_f32_name;
  // The loader's check of packed weights (format/loader.cc).
  Qs8PackedCheckFn qs8_packed_check;
  const char* qs8_packed_check_name;
  Qu8s8PvFn qu8s8_pv;
  const char* qu8s8_pv_name;
  Qs8QuantizeRowsFn qs8_quantize_rows;
  const char* qs8_quantize_rows_name;
  Qs8DequantizeRowsFn qs8_dequantize_rows;
  const char* qs8_dequantize_rows_name;
  // The float kernels: their vector variants meet the error bounds stated in
  // kernels/f32_elementwise.h, position.h and qs8_softmax_tile.h, not bit-identity.
  F32LayerNormFn f32_layernorm;
  const char* f32_layernorm_name;
  F32RmsNormFn f32_rmsnorm;
  const char* f32_rmsnorm_name;
  F32ActivationFn f32_activation;
  const char* f32_activation_name;
  F32GatedActivationFn f32_gated_activation;
  const char* f32_gated_activation_name;
  F32AddBiasFn f32_add_bias;
  const char* f32_add_bias_name;
  F32AddFn f32_add;
  const char* f32_add_name;
  F32RopeFn f32_rope;
  const char* f32_rope_name;
  Qs8SoftmaxTileFn qs8_softmax_tile;  // the float part of ops/qs8_attention.cc
  const char* qs8_softmax_tile_name;
  F32AttentionFn f32_attention;  // within the bound of kernels/f32_attention.h
  const char* f32_attention_name;
  // The gated delta rule (linear attention), within the bound of kernels/f32_delta_rule.h.
  F32DeltaStepFn f32_delta_step;
  const char* f32_delta_step_name;
  F32DeltaChunkFn f32_delta_chunk;
  const char* f32_delta_chunk_name;
};

// The table for this machine (GetCpuInfo(), including OCTET_CPU_DISABLE).
const KernelTable& GetKernelTable();

// The table for a given feature set: the fastest variant whose features are all present.
KernelTable SelectKernels(uint32_t cpu_features);

// Every qs8_gemm variant compiled into this build, fastest first, the reference
// last. Tests iterate over it; `count` receives the number of entries.
const KernelVariant<Qs8GemmFn>* Qs8GemmVariants(size_t* count);

// Every qs8_packed_gemm variant compiled into this build, fastest first, the reference last.
const KernelVariant<Qs8PackedGemmFn>* Qs8PackedGemmVariants(size_t* count);

// Every qs8_packed_gemm_f32 variant compiled into this build, fastest first, the reference last.
const KernelVariant<Qs8PackedGemmF32Fn>* Qs8PackedGemmF32Variants(size_t* count);
// Every qs8_packed_check variant compiled into this build, fastest first, the reference last.
const KernelVariant<Qs8PackedCheckFn>* Qs8PackedCheckVariants(size_t* count);

// Every qu8s8_pv variant compiled into this build, fastest first, the reference last.
const KernelVariant<Qu8s8PvFn>* Qu8s8PvVariants(size_t* count);

// The same for qs8_quantize_rows and qs8_dequantize_rows.
const KernelVariant<Qs8QuantizeRowsFn>* Qs8QuantizeRowsVariants(size_t* count);
const KernelVariant<Qs8DequantizeRowsFn>* Qs8DequantizeRowsVariants(size_t* count);

// The same for the float kernels.
const KernelVariant<F32LayerNormFn>* F32LayerNormVariants(size_t* count);
const KernelVariant<F32RmsNormFn>* F32RmsNormVariants(size_t* count);
const KernelVariant<F32ActivationFn>* F32ActivationVariants(size_t* count);
const KernelVariant<F32GatedActivationFn>* F32GatedActivationVariants(size_t* count);
const KernelVariant<F32AddBiasFn>* F32AddBiasVariants(size_t* count);
const KernelVariant<F32AddFn>* F32AddVariants(size_t* count);
const KernelVariant<F32RopeFn>* F32RopeVariants(size_t* count);
const KernelVariant<Qs8SoftmaxTileFn>* Qs8SoftmaxTileVariants(size_t* count);
const KernelVariant<F32AttentionFn>* F32AttentionVariants(size_t* count);
const KernelVariant<F32DeltaStepFn>* F32DeltaStepVariants(size_t* count);
const KernelVariant<F32DeltaChunkFn>* F32DeltaChunkVariants(size_t* count);

}  // namespace octet
