// The references of kernels/f32_delta_rule.h: the definitions, scalar, the
// chunk's dot products and decays in double. Compiler builtins instead of
// <math.h> (kernel files include only compiler headers).
#include "kernels/f32_delta_rule.h"

namespace octet {

void f32_delta_step__ref(size_t dk, size_t dv, const float* q, const float* k, const float* v,
                         float beta, float g, float* S, float* o) {
  const float decay = static_cast<float>(__builtin_exp(static_cast<double>(g)));
  // o holds S^T k after the decay, then the delta d, then S^T q.
  for (size_t j = 0; j < dv; ++j) o[j] = 0.0f;
  for (size_t i = 0; i < dk; ++i) {
    float* si = S + i * dv;
    const float ki = k[i];
    for (size_t j = 0; j < dv; ++j) {
      si[j] *= decay;
      o[j] += ki * si[j];
    }
  }
  for (size_t j = 0; j < dv; ++j) o[j] = beta * (v[j] - o[j]);  // the delta d
  for (size_t i = 0; i < dk; ++i) {
    float* si = S + i * dv;
    const float ki = k[i];
    for (size_t j = 0; j < dv; ++j) si[j] += ki * o[j];
  }
  for (size_t j = 0; j < dv; ++j) o[j] = 0.0f;
  for (size_t i = 0; i < dk; ++i) {
    const float* si = S + i * dv;
    const float qi = q[i];
    for (size_t j = 0; j < dv; ++j) o[j] += qi * si[j];
  }
}

void f32_delta_chunk__ref(const F32DeltaChunkArgs& a) {
  const size_t m = a.m, dk = a.dk, dv = a.dv, ld = a.ld;
  float* const S = a.S;
  // G first: the scratch is 8-byte aligned.
  double* G = reinterpret_cast<double*>(a.scratch);  // [kDeltaChunk]
  float* Q = a.scratch + 2 * kDeltaChunk;            // [kDeltaChunk, dk]
  float* K = Q + kDeltaChunk * dk;                   // [kDeltaChunk, dk]
  float* W = K + kDeltaChunk * dk;                   // [kDeltaChunk, dk]
  float* U = W + kDeltaChunk * dk;                   // [kDeltaChunk, dv]: beta v, U, u
  float* O = U + kDeltaChunk * dv;                   // [kDeltaChunk, dv]
  float* M = O + kDeltaChunk * dv;                   // [kDeltaChunk, kDeltaChunk]
  float* A = M + kDeltaChunk * kDeltaChunk;          // [kDeltaChunk, kDeltaChunk]
  float* B = A + kDeltaChunk * kDeltaChunk;          // [kDeltaChunk]
  double acc = 0.0;
  for (size_t i = 0; i < m; ++i) {
    for (size_t d = 0; d < dk; ++d) {
      Q[i * dk + d] = a.q[i * ld + d];
      K[i * dk + d] = a.k[i * ld + d];
    }
    B[i] = a.beta[i * ld];
    acc += a.g[i * ld];
    G[i] = acc;
    for (size_t j = 0; j < dv; ++j) U[i * dv + j] = B[i] * a.v[i * ld + j];
    const float eg = static_cast<float>(__builtin_exp(G[i]));
    for (size_t d = 0; d < dk; ++d) W[i * dk + d] = B[i] * eg * K[i * dk + d];
  }
  // M = beta_i k_i.k_j D_ij (j < i) and A = q_i.k_j D_ij (j <= i), and the
  // forward substitutions (I + M) U = beta v, (I + M) W = beta exp(G) k.
  for (size_t i = 0; i < m; ++i) {
    const float* ki = K + i * dk;
    const float* qi = Q + i * dk;
    for (size_t j = 0; j <= i; ++j) {
      const float* kj = K + j * dk;
      double kk = 0.0, qk = 0.0;
      for (size_t d = 0; d < dk; ++d) {
        kk += static_cast<double>(ki[d]) * kj[d];
        qk += static_cast<double>(qi[d]) * kj[d];
      }
      const double dij = __builtin_exp(G[i] - G[j]);
      M[i * kDeltaChunk + j] = static_cast<float>(B[i] * kk * dij);
      A[i * kDeltaChunk + j] = static_cast<float>(qk * dij);
    }
    for (size_t j = 0; j < i; ++j) {
      const float mij = M[i * kDeltaChunk + j];
      const float* uj = U + j * dv;
      float* ui = U + i * dv;
      for (size_t e = 0; e < dv; ++e) ui[e] -= mij * uj[e];
      const float* wj = W + j * dk;
      float* wi = W + i * dk;
      for (size_t d = 0; d < dk; ++d) wi[d] -= mij * wj[d];
    }
  }
  // u = U - W S; O = exp(G) q S + A u.
  for (size_t i = 0; i < m; ++i) {
    float* ui = U + i * dv;
    float* oi = O + i * dv;
    const float* wi = W + i * dk;
    const float* qi = Q + i * dk;
    const float eg = static_cast<float>(__builtin_exp(G[i]));
    for (size_t e = 0; e < dv; ++e) oi[e] = 0.0f;
    for (size_t d = 0; d < dk; ++d) {
      const float* sd = S + d * dv;
      const float wd = wi[d], qd = eg * qi[d];
      for (size_t e = 0; e < dv; ++e) {
        ui[e] -= wd * sd[e];
        oi[e] += qd * sd[e];
      }
    }
  }
  for (size_t i = 0; i < m; ++i) {
    float* oi = O + i * dv;
    for (size_t j = 0; j <= i; ++j) {
      const float aij = A[i * kDeltaChunk + j];
      const float* uj = U + j * dv;
      for (size_t e = 0; e < dv; ++e) oi[e] += aij * uj[e];
    }
    for (size_t e = 0; e < dv; ++e) a.o[i * ld + e] = oi[e];
  }
  // S = exp(G_last) S + sum_j exp(G_last - G_j) k_j u_j^T.
  const double last = G[m - 1];
  const float el = static_cast<float>(__builtin_exp(last));
  for (size_t d = 0; d < dk * dv; ++d) S[d] *= el;
  for (size_t j = 0; j < m; ++j) {
    const float f = static_cast<float>(__builtin_exp(last - G[j]));
    const float* kj = K + j * dk;
    const float* uj = U + j * dv;
    for (size_t d = 0; d < dk; ++d) {
      const float kd = f * kj[d];
      float* sd = S + d * dv;
      for (size_t e = 0; e < dv; ++e) sd[e] += kd * uj[e];
    }
  }
}

}  // namespace octet
