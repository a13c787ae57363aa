#include "kernels/kernel_table.h"

#include "platform/cpu.h"

namespace octet {
namespace {

// Fastest first; the reference last (it runs everywhere). Which ISA files are
// compiled is decided by runtime/kernels/CMakeLists.txt, which sets the
// OCTET_KERNELS_* definitions to match.
const KernelVariant<Qs8GemmFn> kQs8GemmVariants[] = {
#if defined(OCTET_KERNELS_X86)
    // The VNNI file is compiled with AVX512 flags, which imply AVX2 code.
    {"qs8_gemm_4x4c64__avx512vnni", qs8_gemm_4x4c64__avx512vnni, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"qs8_gemm_4x4c8__avx2", qs8_gemm_4x4c8__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_I8MM)
    {"qs8_gemm_4x4c8__neoni8mm", qs8_gemm_4x4c8__neoni8mm, kCpuArmNeon | kCpuArmI8mm},
#endif
#if defined(OCTET_KERNELS_NEONDOT)
    {"qs8_gemm_4x4c16__neondot", qs8_gemm_4x4c16__neondot, kCpuArmNeon | kCpuArmDotProd},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"qs8_gemm_4x4c16__neon", qs8_gemm_4x4c16__neon, kCpuArmNeon},
#endif
    {"qs8_gemm__ref", qs8_gemm__ref, 0},
};

const KernelVariant<Qs8PackedGemmFn> kQs8PackedGemmVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"qs8_packed_gemm_8x32c4__avx512vnni", qs8_packed_gemm_8x32c4__avx512vnni,
     kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"qs8_packed_gemm_4x8c4__avx2", qs8_packed_gemm_4x8c4__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_I8MM)
    {"qs8_packed_gemm_4x16c8__neoni8mm", qs8_packed_gemm_4x16c8__neoni8mm,
     kCpuArmNeon | kCpuArmI8mm},
#endif
#if defined(OCTET_KERNELS_NEONDOT)
    {"qs8_packed_gemm_4x16c4__neondot", qs8_packed_gemm_4x16c4__neondot,
     kCpuArmNeon | kCpuArmDotProd},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"qs8_packed_gemm_4x8c4__neon", qs8_packed_gemm_4x8c4__neon, kCpuArmNeon},
#endif
    {"qs8_packed_gemm__ref", qs8_packed_gemm__ref, 0},
};

// Fused only where it pays (kernels/qs8_packed_gemm.h); SelectKernels leaves the
// table's entry null when only the reference matches.
const KernelVariant<Qs8PackedGemmF32Fn> kQs8PackedGemmF32Variants[] = {
#if defined(OCTET_KERNELS_X86)
    {"qs8_packed_gemm_f32_8x32c4__avx512vnni", qs8_packed_gemm_f32_8x32c4__avx512vnni,
     kCpuX86Avx512Vnni | kCpuX86Avx2},
#endif
    {"qs8_packed_gemm_f32__ref", qs8_packed_gemm_f32__ref, 0},
};

const KernelVariant<Qs8PackedCheckFn> kQs8PackedCheckVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"qs8_packed_check__avx512vnni", qs8_packed_check__avx512vnni, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"qs8_packed_check__avx2", qs8_packed_check__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"qs8_packed_check__neon", qs8_packed_check__neon, kCpuArmNeon},
#endif
    {"qs8_packed_check__ref", qs8_packed_check__ref, 0},
};

// No dotprod variant: sdot is signed x signed and P is 0..255 (kernels/qu8s8_pv.h).
const KernelVariant<Qu8s8PvFn> kQu8s8PvVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"qu8s8_pv_4x64c4__avx512vnni", qu8s8_pv_4x64c4__avx512vnni, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"qu8s8_pv_4x16c2__avx2", qu8s8_pv_4x16c2__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_I8MM)
    {"qu8s8_pv_4x8c4__neoni8mm", qu8s8_pv_4x8c4__neoni8mm, kCpuArmNeon | kCpuArmI8mm},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"qu8s8_pv_4x8__neon", qu8s8_pv_4x8__neon, kCpuArmNeon},
#endif
    {"qu8s8_pv__ref", qu8s8_pv__ref, 0},
};

// The AVX-512 files need F, BW and VL, which kCpuX86Avx512Vnni includes.
const KernelVariant<Qs8QuantizeRowsFn> kQs8QuantizeRowsVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"qs8_quantize_rows__avx512", qs8_quantize_rows__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"qs8_quantize_rows__avx2", qs8_quantize_rows__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"qs8_quantize_rows__neon", qs8_quantize_rows__neon, kCpuArmNeon},
#endif
    {"qs8_quantize_rows__ref", qs8_quantize_rows__ref, 0},
};

const KernelVariant<Qs8DequantizeRowsFn> kQs8DequantizeRowsVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"qs8_dequantize_rows__avx512", qs8_dequantize_rows__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"qs8_dequantize_rows__avx2", qs8_dequantize_rows__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"qs8_dequantize_rows__neon", qs8_dequantize_rows__neon, kCpuArmNeon},
#endif
    {"qs8_dequantize_rows__ref", qs8_dequantize_rows__ref, 0},
};

// The float kernels: one generic body (kernels/f32_vector_kernels.h) per ISA. The
// AVX-512 files need F, BW and VL, which kCpuX86Avx512Vnni includes.
const KernelVariant<F32LayerNormFn> kF32LayerNormVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"f32_layernorm__avx512", f32_layernorm__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"f32_layernorm__avx2", f32_layernorm__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"f32_layernorm__neon", f32_layernorm__neon, kCpuArmNeon},
#endif
    {"f32_layernorm__ref", f32_layernorm__ref, 0},
};

const KernelVariant<F32RmsNormFn> kF32RmsNormVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"f32_rmsnorm__avx512", f32_rmsnorm__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"f32_rmsnorm__avx2", f32_rmsnorm__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"f32_rmsnorm__neon", f32_rmsnorm__neon, kCpuArmNeon},
#endif
    {"f32_rmsnorm__ref", f32_rmsnorm__ref, 0},
};

const KernelVariant<F32ActivationFn> kF32ActivationVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"f32_activation__avx512", f32_activation__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"f32_activation__avx2", f32_activation__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"f32_activation__neon", f32_activation__neon, kCpuArmNeon},
#endif
    {"f32_activation__ref", f32_activation__ref, 0},
};

const KernelVariant<F32GatedActivationFn> kF32GatedActivationVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"f32_gated_activation__avx512", f32_gated_activation__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"f32_gated_activation__avx2", f32_gated_activation__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"f32_gated_activation__neon", f32_gated_activation__neon, kCpuArmNeon},
#endif
    {"f32_gated_activation__ref", f32_gated_activation__ref, 0},
};

const KernelVariant<F32AddBiasFn> kF32AddBiasVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"f32_add_bias__avx512", f32_add_bias__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"f32_add_bias__avx2", f32_add_bias__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"f32_add_bias__neon", f32_add_bias__neon, kCpuArmNeon},
#endif
    {"f32_add_bias__ref", f32_add_bias__ref, 0},
};

const KernelVariant<F32AddFn> kF32AddVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"f32_add__avx512", f32_add__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"f32_add__avx2", f32_add__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"f32_add__neon", f32_add__neon, kCpuArmNeon},
#endif
    {"f32_add__ref", f32_add__ref, 0},
};

const KernelVariant<F32RopeFn> kF32RopeVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"f32_rope__avx512", f32_rope__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"f32_rope__avx2", f32_rope__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"f32_rope__neon", f32_rope__neon, kCpuArmNeon},
#endif
    {"f32_rope__ref", f32_rope__ref, 0},
};

const KernelVariant<Qs8SoftmaxTileFn> kQs8SoftmaxTileVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"qs8_softmax_tile__avx512", qs8_softmax_tile__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"qs8_softmax_tile__avx2", qs8_softmax_tile__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"qs8_softmax_tile__neon", qs8_softmax_tile__neon, kCpuArmNeon},
#endif
    {"qs8_softmax_tile__ref", qs8_softmax_tile__ref, 0},
};

const KernelVariant<F32AttentionFn> kF32AttentionVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"f32_attention__avx512", f32_attention__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"f32_attention__avx2", f32_attention__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"f32_attention__neon", f32_attention__neon, kCpuArmNeon},
#endif
    {"f32_attention__ref", f32_attention__ref, 0},
};

const KernelVariant<F32DeltaStepFn> kF32DeltaStepVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"f32_delta_step__avx512", f32_delta_step__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"f32_delta_step__avx2", f32_delta_step__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"f32_delta_step__neon", f32_delta_step__neon, kCpuArmNeon},
#endif
    {"f32_delta_step__ref", f32_delta_step__ref, 0},
};

const KernelVariant<F32DeltaChunkFn> kF32DeltaChunkVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"f32_delta_chunk__avx512", f32_delta_chunk__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"f32_delta_chunk__avx2", f32_delta_chunk__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"f32_delta_chunk__neon", f32_delta_chunk__neon, kCpuArmNeon},
#endif
    {"f32_delta_chunk__ref", f32_delta_chunk__ref, 0},
};

// The first (fastest) variant whose features are all present.
template <typename Fn>
const KernelVariant<Fn>& Select(const KernelVariant<Fn>* variants, size_t count,
                                uint32_t cpu_features) {
  for (size_t i = 0; i + 1 < count; ++i) {
    if ((variants[i].required_features & cpu_features) == variants[i].required_features) {
      return variants[i];
    }
  }
  return variants[count - 1];  // the reference runs everywhere
}

// Sets *fn and *name to the variant Select picks from list(&count).
template <typename Fn>
void Choose(const KernelVariant<Fn>* (*list)(size_t*), uint32_t cpu_features, Fn* fn,
            const char** name) {
  size_t count = 0;
  const KernelVariant<Fn>* variants = list(&count);
  const KernelVariant<Fn>& chosen = Select(variants, count, cpu_features);
  *fn = chosen.fn;
  *name = chosen.name;
}

}  // namespace

const KernelVariant<Qs8PackedGemmF32Fn>* Qs8PackedGemmF32Variants(size_t* count) {
  *count = sizeof(kQs8PackedGemmF32Variants) / sizeof(kQs8PackedGemmF32Variants[0]);
  return kQs8PackedGemmF32Variants;
}

const KernelVariant<Qu8s8PvFn>* Qu8s8PvVariants(size_t* count) {
  *count = sizeof(kQu8s8PvVariants) / sizeof(kQu8s8PvVariants[0]);
  return kQu8s8PvVariants;
}

const KernelVariant<Qs8QuantizeRowsFn>* Qs8QuantizeRowsVariants(size_t* count) {
  *count = sizeof(kQs8QuantizeRowsVariants) / sizeof(kQs8QuantizeRowsVariants[0]);
  return kQs8QuantizeRowsVariants;
}

const KernelVariant<Qs8DequantizeRowsFn>* Qs8DequantizeRowsVariants(size_t* count) {
  *count = sizeof(kQs8DequantizeRowsVariants) / sizeof(kQs8DequantizeRowsVariants[0]);
  return kQs8DequantizeRowsVariants;
}

const KernelVariant<Qs8GemmFn>* Qs8GemmVariants(size_t* count) {
  *count = sizeof(kQs8GemmVariants) / sizeof(kQs8GemmVariants[0]);
  return kQs8GemmVariants;
}

const KernelVariant<Qs8PackedGemmFn>* Qs8PackedGemmVariants(size_t* count) {
  *count = sizeof(kQs8PackedGemmVariants) / sizeof(kQs8PackedGemmVariants[0]);
  return kQs8PackedGemmVariants;
}

const KernelVariant<Qs8PackedCheckFn>* Qs8PackedCheckVariants(size_t* count) {
  *count = sizeof(kQs8PackedCheckVariants) / sizeof(kQs8PackedCheckVariants[0]);
  return kQs8PackedCheckVariants;
}

const KernelVariant<F32LayerNormFn>* F32LayerNormVariants(size_t* count) {
  *count = sizeof(kF32LayerNormVariants) / sizeof(kF32LayerNormVariants[0]);
  return kF32LayerNormVariants;
}

const KernelVariant<F32RmsNormFn>* F32RmsNormVariants(size_t* count) {
  *count = sizeof(kF32RmsNormVariants) / sizeof(kF32RmsNormVariants[0]);
  return kF32RmsNormVariants;
}

const KernelVariant<F32ActivationFn>* F32ActivationVariants(size_t* count) {
  *count = sizeof(kF32ActivationVariants) / sizeof(kF32ActivationVariants[0]);
  return kF32ActivationVariants;
}

const KernelVariant<F32GatedActivationFn>* F32GatedActivationVariants(size_t* count) {
  *count = sizeof(kF32GatedActivationVariants) / sizeof(kF32GatedActivationVariants[0]);
  return kF32GatedActivationVariants;
}

const KernelVariant<F32AddBiasFn>* F32AddBiasVariants(size_t* count) {
  *count = sizeof(kF32AddBiasVariants) / sizeof(kF32AddBiasVariants[0]);
  return kF32AddBiasVariants;
}

const KernelVariant<F32AddFn>* F32AddVariants(size_t* count) {
  *count = sizeof(kF32AddVariants) / sizeof(kF32AddVariants[0]);
  return kF32AddVariants;
}

const KernelVariant<F32RopeFn>* F32RopeVariants(size_t* count) {
  *count = sizeof(kF32RopeVariants) / sizeof(kF32RopeVariants[0]);
  return kF32RopeVariants;
}

const KernelVariant<Qs8SoftmaxTileFn>* Qs8SoftmaxTileVariants(size_t* count) {
  *count = sizeof(kQs8SoftmaxTileVariants) / sizeof(kQs8SoftmaxTileVariants[0]);
  return kQs8SoftmaxTileVariants;
}

const KernelVariant<F32AttentionFn>* F32AttentionVariants(size_t* count) {
  *count = sizeof(kF32AttentionVariants) / sizeof(kF32AttentionVariants[0]);
  return kF32AttentionVariants;
}

const KernelVariant<F32DeltaStepFn>* F32DeltaStepVariants(size_t* count) {
  *count = sizeof(kF32DeltaStepVariants) / sizeof(kF32DeltaStepVariants[0]);
  return kF32DeltaStepVariants;
}

const KernelVariant<F32DeltaChunkFn>* F32DeltaChunkVariants(size_t* count) {
  *count = sizeof(kF32DeltaChunkVariants) / sizeof(kF32DeltaChunkVariants[0]);
  return kF32DeltaChunkVariants;
}

KernelTable SelectKernels(uint32_t cpu_features) {
  KernelTable table{};
  Choose(Qs8GemmVariants, cpu_features, &table.qs8_gemm, &table.qs8_gemm_name);
  Choose(Qs8PackedGemmVariants, cpu_features, &table.qs8_packed_gemm,
         &table.qs8_packed_gemm_name);
  Choose(Qs8PackedGemmF32Variants, cpu_features, &table.qs8_packed_gemm_f32,
         &table.qs8_packed_gemm_f32_name);
  if (table.qs8_packed_gemm_f32 == qs8_packed_gemm_f32__ref) {  // the two kernels are faster
    table.qs8_packed_gemm_f32 = nullptr;
    table.qs8_packed_gemm_f32_name = "none";
  }
  Choose(Qs8PackedCheckVariants, cpu_features, &table.qs8_packed_check,
         &table.qs8_packed_check_name);
  Choose(Qu8s8PvVariants, cpu_features, &table.qu8s8_pv, &table.qu8s8_pv_name);
  Choose(Qs8QuantizeRowsVariants, cpu_features, &table.qs8_quantize_rows,
         &table.qs8_quantize_rows_name);
  Choose(Qs8DequantizeRowsVariants, cpu_features, &table.qs8_dequantize_rows,
         &table.qs8_dequantize_rows_name);
  Choose(F32LayerNormVariants, cpu_features, &table.f32_layernorm, &table.f32_layernorm_name);
  Choose(F32RmsNormVariants, cpu_features, &table.f32_rmsnorm, &table.f32_rmsnorm_name);
  Choose(F32ActivationVariants, cpu_features, &table.f32_activation, &table.f32_activation_name);
  Choose(F32GatedActivationVariants, cpu_features, &table.f32_gated_activation,
         &table.f32_gated_activation_name);
  Choose(F32AddBiasVariants, cpu_features, &table.f32_add_bias, &table.f32_add_bias_name);
  Choose(F32AddVariants, cpu_features, &table.f32_add, &table.f32_add_name);
  Choose(F32RopeVariants, cpu_features, &table.f32_rope, &table.f32_rope_name);
  Choose(Qs8SoftmaxTileVariants, cpu_features, &table.qs8_softmax_tile,
         &table.qs8_softmax_tile_name);
  Choose(F32AttentionVariants, cpu_features, &table.f32_attention, &table.f32_attention_name);
  Choose(F32DeltaStepVariants, cpu_features, &table.f32_delta_step, &table.f32_delta_step_name);
  Choose(F32DeltaChunkVariants, cpu_features, &table.f32_delta_chunk,
         &table.f32_delta_chunk_name);
  return table;
}

const KernelTable& GetKernelTable() {
  static const KernelTable table = SelectKernels(GetCpuInfo().features);
  return table;
}

}  // namespace octet
