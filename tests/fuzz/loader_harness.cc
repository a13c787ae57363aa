#include "fuzz/loader_harness.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "engine/session.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

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

namespace {

bool Silent(const Status& s) { return !s.ok() && s.message()[0] == '\0'; }

// Encodes text, checks the ids, decodes and streams them back.
std::string EncodeRoundTrip(const text::Tokenizer& tok, text::TokenizerWorkspace& ws,
                            const char* text, size_t n, const text::EncodeOptions& options) {
  static int32_t ids[4096];
  static char out[1 << 16];
  const size_t max_ids = tok.MaxIds(n) < 4096 ? tok.MaxIds(n) : 4096;
  size_t n_ids = 0;
  Status s = tok.Encode(text, n, options, ws, ids, max_ids, &n_ids);
  if (Silent(s)) return "Encode refused without a message";
  if (!s.ok()) return "";  // e.g. a word with no token and no unk
  if (n_ids > max_ids) return "Encode gave more ids than it had room for";
  for (size_t i = 0; i < n_ids; ++i) {
    if (ids[i] < 0 || static_cast<uint32_t>(ids[i]) >= tok.vocab_size()) {
      return "Encode gave an id outside the vocabulary";
    }
  }
  const size_t use = n_ids < ws.max_decode_ids() ? n_ids : ws.max_decode_ids();
  for (bool skip : {false, true}) {
    size_t n_out = 0;
    const size_t bound = tok.MaxDecodedBytes(use);
    s = tok.Decode(ids, use, skip, ws, out, bound < sizeof(out) ? bound : sizeof(out), &n_out);
    if (Silent(s)) return "Decode refused without a message";
    if (!s.ok() && bound <= sizeof(out)) {
      return std::string("Decode of Encode's ids failed within MaxDecodedBytes: ") + s.message();
    }
    if (s.ok() && n_out > bound) return "Decode wrote more than MaxDecodedBytes";
    text::StreamDecoder stream;
    s = stream.Init(&tok, &ws, skip);
    if (!s.ok()) return Silent(s) ? "StreamDecoder::Init refused without a message" : "";
    size_t streamed = 0;
    for (size_t i = 0; i < use && s.ok(); ++i) {
      size_t got = 0;
      s = stream.Push(ids[i], out, sizeof(out), &got);
      streamed += got;
    }
    if (s.ok()) {
      size_t got = 0;
      s = stream.Finish(out, sizeof(out), &got);
      streamed += got;
    }
    if (Silent(s)) return "StreamDecoder refused without a message";
    g_sink = g_sink + streamed;
  }
  return "";
}

}  // namespace

std::string RunLoadedTokenizer(const Model& model) {
  const fb::TokenizerSpec* spec = model.tokenizer_spec();
  if (spec == nullptr) return "";
  text::Tokenizer tok;
  Status s = tok.Init(spec);
  if (!s.ok()) return Silent(s) ? "Tokenizer::Init refused without a message" : "";
  text::TokenizerWorkspace ws;
  s = tok.CreateWorkspace(1024, 1024, &ws);
  if (!s.ok()) return Silent(s) ? "CreateWorkspace refused without a message" : "";

  std::string texts[] = {
      "Hello, world! It's 2024.",
      "  caf\xC3\xA9 \xEF\xBC\xA1\xEF\xAC\x81 \xE6\x97\xA5\xE6\x9C\xAC\xF0\x9F\x99\x82\n\t x",
      "<s>[INST] hi [/INST]</s><|im_start|>user\n<|endoftext|>[CLS] a [SEP]",
      "",
      std::string(),
  };
  // The tokenizer's own added tokens, so the added-token matcher runs.
  if (spec->added_tokens() != nullptr) {
    for (uint32_t i = 0; i < spec->added_tokens()->size() && i < 8; ++i) {
      const auto* a = spec->added_tokens()->Get(i);
      if (a != nullptr && a->content() != nullptr && a->content()->size() < 64) {
        texts[4] += a->content()->str() + (i % 2 ? " x" : "");
      }
    }
  }
  for (const std::string& t : texts) {
    for (int o = 0; o < 4; ++o) {
      text::EncodeOptions options;
      options.add_special_tokens = (o & 1) != 0;
      options.split_special_tokens = (o & 2) != 0;
      const std::string broken = EncodeRoundTrip(tok, ws, t.data(), t.size(), options);
      if (!broken.empty()) return broken;
    }
  }

  // Fixed ids, the eos ids, and one id past the vocabulary.
  int32_t ids[80];
  size_t n = 0;
  for (uint32_t i = 0; i < 64 && i < tok.vocab_size(); ++i) ids[n++] = static_cast<int32_t>(i);
  if (spec->eos_ids() != nullptr) {
    for (uint32_t i = 0; i < spec->eos_ids()->size() && n < 80; ++i) ids[n++] = spec->eos_ids()->Get(i);
  }
  static char out[1 << 16];
  size_t n_out = 0;
  for (bool skip : {false, true}) {
    s = tok.Decode(ids, n, skip, ws, out, sizeof(out), &n_out);
    if (Silent(s)) return "Decode refused without a message";
  }
  const int32_t past = static_cast<int32_t>(tok.vocab_size());
  s = tok.Decode(&past, 1, false, ws, out, sizeof(out), &n_out);
  if (s.ok()) return "Decode took an id past the vocabulary";
  for (size_t i = 0; i < n; ++i) {
    size_t size = 0;
    const char* bytes = tok.TokenBytes(ids[i], &size);
    if (bytes != nullptr) g_sink = g_sink + Checksum(reinterpret_cast<const uint8_t*>(bytes), size);
    g_sink = g_sink + tok.TokenText(ids[i], ws, out, 64) + tok.IsSpecial(ids[i]) + tok.IsEos(ids[i]);
  }

  if (spec->chat_template() == nullptr || spec->chat_template()->size() == 0) return "";
  Result<text::ChatTemplate> chat = text::ChatTemplate::Parse(spec->chat_template()->string_view());
  if (!chat.ok()) return Silent(chat.status()) ? "ChatTemplate::Parse refused without a message" : "";
  const text::ChatMessage messages[] = {
      {"system", "Be brief."}, {"user", "Hi <s> there"}, {"assistant", "Hello!"}, {"user", "Bye"}};
  text::ChatRenderInput input;
  input.messages = messages;
  input.num_messages = 4;
  const auto str = [](const flatbuffers::String* v) {
    return text::ChatText{v != nullptr, v != nullptr ? v->string_view() : std::string_view()};
  };
  input.bos_token = str(spec->bos_token());
  input.eos_token = str(spec->eos_token());
  text::ChatRenderLimits limits;
  limits.max_steps = 1 << 16;
  limits.max_loop_items = 1 << 12;
  static char scratch[1 << 16];
  static char rendered[1024];
  size_t rendered_size = 0;
  s = chat->Render(input, scratch, sizeof(scratch), rendered, sizeof(rendered), &rendered_size, limits);
  if (Silent(s)) return "ChatTemplate::Render refused without a message";
  if (!s.ok()) return "";
  if (rendered_size > sizeof(rendered)) return "Render reported more than it had room for";
  return EncodeRoundTrip(tok, ws, rendered, rendered_size, text::EncodeOptions{false, false});
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
      if (broken_promise->empty()) *broken_promise = RunLoadedTokenizer(*model);
    } else {
      status = model.status();
    }
  }
  std::free(buffer);
  return status;
}

}  // namespace testing
}  // namespace octet
