// OCTET_KERNEL_INLINE, for the helpers that kernel headers share between files
// compiled with different ISA flags: always inlined (even at -O0), so no
// out-of-line copy is compiled with one file's flags. Shared helpers also go in
// an unnamed namespace; kernels/qs8_gemm_driver.h ("Linkage") says why both.
//
// Only compiler features, so kernel files stay freestanding.
#pragma once

#define OCTET_KERNEL_INLINE __attribute__((always_inline)) inline
