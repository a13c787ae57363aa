#include "fuzz/loader_harness.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "engine/session.h"

namespace octet {
namespace testing {
namespace {

// Where the bytes read end up, so the compiler cannot drop the reads.
volatile uint64_t g_sink = 0;

uint64_t Checksum(const uint8_t* p, uint64_t n) {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

bool Inside(const void* p, uint64_t n, const uint8_t* begin, uint64_t size) {
  const uint8_t* q = static_cast<const uint8_t*>(p);
  return q >= begin && static_cast<uint64_t>(q - begin) <= size &&
         n <= size - static_cast<uint64_t>(q - begin);
}

std::string Named(const char* what, const char* name) {
  return std::string(what) + " ('" + (name != nullptr ? name : "(null)") + "')";
}

}  // namespace

std::string WalkLoadedModel(const Model& model, const uint8_t* begin, uint64_t size) {
  if (model.file_data() != begin || model.file_size() != size) return "file_data/file_size";
  if (model.data_offset() % kDataAlignment != 0 ||
      model.data_offset() + model.data_size() != size) {
    return "data segment does not end the file";
  }
  const fb::Architecture& arch = model.architecture();
  uint64_t sum =
      arch.vocab_size() + arch.hidden_size() + arch.num_layers() + arch.attention()->num_heads();

  if (model.Find("token_embedding") == nullptr) return "loaded without token_embedding";
  for (size_t i = 0; i < model.num_tensors(); ++i) {
    const TensorView& v = model.tensor(i);
    if (v.name == nullptr || std::strlen(v.name) == 0 || std::strlen(v.name) > 256) {
      return "tensor name missing or too long";
    }
    if (model.Find(v.name) != &v) return Named("Find does not return the tensor", v.name);
    if (i > 0 && std::strcmp(model.tensor(i - 1).name, v.name) >= 0) {
      return Named("tensors not sorted by unique name", v.name);
    }
    if (v.rank < 1 || v.rank > kMaxTensorRank) return Named("rank out of range", v.name);
    uint64_t numel = 1;
    for (int d = 0; d < v.rank; ++d) {
      if (v.shape[d] == 0) return Named("zero dimension", v.name);
      if (__builtin_mul_overflow(numel, v.shape[d], &numel)) {
        return Named("element count overflows", v.name);
      }
    }
    const size_t element = DTypeSize(v.dtype);
    if (element == 0) return Named("unknown dtype", v.name);
    if (v.layout == fb::TensorLayout::PackedQs8N16K4) {
      // int8 [N, K] in 16-channel tiles of 64 + 16 x round_up(K, 4) bytes
      if (v.dtype != fb::DType::I8 || v.rank != 2) return Named("packed, not an int8 matrix", v.name);
      const uint64_t tile = 64 + 16 * ((uint64_t{v.shape[1]} + 3) / 4 * 4);
      if (numel != v.numel || (v.shape[0] + 15) / 16 * tile != v.size) {
        return Named("size is not the packed tiles'", v.name);
      }
    } else if (v.layout != fb::TensorLayout::RowMajor) {
      return Named("unknown layout", v.name);
    } else if (numel != v.numel || numel * element != v.size) {
      return Named("size is not shape x dtype", v.name);
    }
    if (reinterpret_cast<uintptr_t>(v.data) % kDataAlignment != 0) {
      return Named("data not 64-byte aligned", v.name);
    }
    if (!Inside(v.data, v.size, begin + model.data_offset(), model.data_size())) {
      return Named("data outside the data segment", v.name);
    }
    if (v.dtype == fb::DType::I8 && v.quant == nullptr) return Named("int8 without scales", v.name);
    if (v.quant != nullptr) {
      const auto* scales = v.quant->scales();
      if (scales == nullptr || scales->size() == 0) return Named("quantized, no scales", v.name);
      for (uint32_t s = 0; s < scales->size(); ++s) {
        if (!std::isfinite(scales->Get(s)) || !(scales->Get(s) > 0.0f)) {
          return Named("scale not finite and > 0", v.name);
        }
      }
    }
    sum += Checksum(static_cast<const uint8_t*>(v.data), v.size);
  }

  for (size_t i = 0;; ++i) {
    uint64_t blob_size = 0;
    const uint8_t* blob = model.blob(i, &blob_size);
    if (blob == nullptr) break;
    if (!Inside(blob, blob_size, begin + model.data_offset(), model.data_size())) {
      return "tokenizer blob outside the data segment";
    }
    sum += Checksum(blob, blob_size);
  }
  g_sink = g_sink + sum;
  return std::string();
}

std::string RunLoadedModel(const Model& model) {
  const fb::Architecture& a = model.architecture();
  SessionLimits limits;
  limits.max_batch = 2;
  limits.max_seq = 6;
  limits.max_new_tokens = 2;
  auto silent = [](const Status& s) { return !s.ok() && s.message()[0] == '\0'; };
  Result<SessionPlan> plan = Session::Plan(model, limits);
  if (!plan.ok()) return silent(plan.status()) ? "Session::Plan refused without a message" : "";
  if (plan->total() > (64u << 20)) return "";  // valid but too big to run per input
  Result<Session> session = Session::Create(model, limits);
  if (!session.ok()) return silent(session.status()) ? "Session::Create refused silently" : "";
  const uint32_t vocab = a.vocab_size() > 0 ? a.vocab_size() : 1;
  int32_t ids[12];
  for (uint32_t i = 0; i < 12; ++i) ids[i] = static_cast<int32_t>((i * 7 + 1) % vocab);
  const uint32_t lengths[2] = {6, 3};
  Status s = a.structure() == fb::Structure::EncoderDecoder
                 ? session->RunEncoderDecoder(ids, lengths, 6, ids, lengths, 6, 2)
                 : session->Run(ids, lengths, 2, 6);
  if (silent(s)) return "Run refused without a message";
  if (!s.ok() || a.structure() == fb::Structure::EncoderOnly) return "";
  // Decoders: touch every output value, sample, then step twice.
  const OutputView out = session->output();
  uint64_t bits = 0;
  for (size_t i = 0; i < static_cast<size_t>(out.batch) * out.seq * out.dim; ++i) {
    uint32_t u = 0;
    std::memcpy(&u, &out.data[i], sizeof(u));
    bits += u;
  }
  g_sink = g_sink + bits;
  SamplingParams params;
  uint64_t rng = 1;
  int32_t next[2] = {0, 0};
  for (int step = 0; step < 2; ++step) {
    s = session->Sample(params, &rng, next);
    if (silent(s)) return "Sample refused without a message";
    if (!s.ok()) return "";
    s = a.structure() == fb::Structure::EncoderDecoder ? session->StepEncoderDecoder(next, 2)
                                                       : session->Step(next, 2);
    if (silent(s)) return "Step refused without a message";
    if (!s.ok()) return "";
  }
  return "";
}

Status LoadUntrusted(const uint8_t* data, size_t size, std::string* broken_promise) {
  broken_promise->clear();
  // posix_memalign keeps the exact size, so ASan's redzone starts at data[size].
  void* buffer = nullptr;
  if (posix_memalign(&buffer, kDataAlignment, size == 0 ? 1 : size) != 0) {
    return Status(StatusCode::kOutOfMemory, "test harness: no memory for the input");
  }
  if (size > 0) std::memcpy(buffer, data, size);
  Status status;
  {
    Result<Model> model = Model::FromBuffer(buffer, size);
    if (model.ok()) {
      *broken_promise = WalkLoadedModel(*model, static_cast<const uint8_t*>(buffer), size);
      if (broken_promise->empty()) *broken_promise = RunLoadedModel(*model);
    } else {
      status = model.status();
    }
  }
  std::free(buffer);
  return status;
}

}  // namespace testing
}  // namespace octet
