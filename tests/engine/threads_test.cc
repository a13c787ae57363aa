// Threads (docs/design.md §3): a session's thread count changes nothing in its
// results. Every model kind runs with 1, 2, 3 and 4 threads (prefill, steps,
// encoder-decoder), and the outputs must be equal byte for byte. The models are
// large enough that every parallel loop really splits (columns of every
// product, rows of the row operations, heads of attention). The host-tsan
// preset runs this suite under ThreadSanitizer.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/session.h"
#include "platform/thread_pool.h"
#include "support/loaded_model.h"
#include "support/test_models.h"

namespace octet {
namespace {

using testing::LoadedModel;
using testing::TinyModelOptions;

constexpr uint32_t kBatch = 2;
constexpr uint32_t kSeq = 40;
constexpr uint32_t kSteps = 6;

// Everything a session outputs over one prefill (or teacher-forced pass) and
// kSteps decode steps, concatenated.
std::vector<float> RunAll(const Model& model, uint32_t threads, bool stream = false,
                          uint64_t keep_bytes = 0) {
  SessionLimits limits;
  limits.stream_weights = stream;
  limits.stream_keep_bytes = keep_bytes;
  limits.max_batch = kBatch;
  limits.max_seq = kSeq;
  limits.max_new_tokens = kSteps;
  limits.threads = threads;
  Result<Session> session = Session::Create(model, limits);
  REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
  CHECK(session->threads() == threads);
  const fb::Architecture& a = model.architecture();
  const uint32_t vocab = a.vocab_size();
  std::vector<int32_t> ids(kBatch * kSeq);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 37 + 11) % vocab);
  const uint32_t lengths[kBatch] = {kSeq, kSeq - 13};
  std::vector<float> out;
  auto append = [&]() {
    const OutputView o = session->output();
    out.insert(out.end(), o.data, o.data + static_cast<size_t>(o.batch) * o.seq * o.dim);
  };
  const bool enc_dec = a.structure() == fb::Structure::EncoderDecoder;
  Status s = enc_dec ? session->RunEncoderDecoder(ids.data(), lengths, kSeq, ids.data(), lengths,
                                                  kSeq, kBatch)
                     : session->Run(ids.data(), lengths, kBatch, kSeq);
  REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
  append();
  if (a.structure() == fb::Structure::EncoderOnly) return out;
  for (uint32_t t = 0; t < kSteps; ++t) {
    const int32_t next[kBatch] = {static_cast<int32_t>(t * 5 % vocab),
                                  static_cast<int32_t>((t * 7 + 3) % vocab)};
    s = enc_dec ? session->StepEncoderDecoder(next, kBatch) : session->Step(next, kBatch);
    REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
    append();
  }
  return out;
}

TEST_CASE("results are bit-identical for 1, 2, 3 and 4 threads") {
  // int8 row-major, int8 packed (as octet-convert writes), fp32, int8 packed
  // with 16-bit inputs (two int8 digits)
  for (int kind = 0; kind < 4; ++kind)
  for (fb::Family family :
       {fb::Family::Llama, fb::Family::Rwkv, fb::Family::Bert, fb::Family::T5}) {
    const bool int8 = kind != 2;
    CAPTURE(kind);
    CAPTURE(static_cast<int>(family));
    TinyModelOptions options;
    options.packed = kind == 1 || kind == 3;
    options.two_digit_inputs = kind == 3;
    options.family = family;
    options.vocab = 600;
    options.hidden = 128;
    options.layers = 2;
    options.int8 = int8;
    options.max_positions = 64;
    // 8 heads of 16 (the tensors' shapes are those of 2 heads of 64); T5
    // keeps 2 heads: its relative bias table has one column per head. RWKV-4
    // has no attention (its time mixes split their channels over the threads).
    LoadedModel m(options, [family](fb::ArchitectureT& a) {
      if (family == fb::Family::T5 || family == fb::Family::Rwkv) return;
      a.attention->num_heads = 8;
      a.attention->num_kv_heads = 8;
      a.attention->head_dim = 16;
    });
    const std::vector<float> one = RunAll(m.model, 1);
    REQUIRE(!one.empty());
    for (uint32_t threads : {2u, 3u, 4u}) {
      CAPTURE(threads);
      const std::vector<float> many = RunAll(m.model, threads);
      REQUIRE(many.size() == one.size());
      CHECK(std::memcmp(many.data(), one.data(), one.size() * sizeof(float)) == 0);
    }
  }
}

// SessionLimits::stream_weights (the converter's twin of a model larger than
// memory): a layer's F32 products packed as a pass reaches it, the layer's file
// pages released after it, some layers kept within stream_keep_bytes. The
// results must be those of an unstreamed session, byte for byte, for a model
// mapped from a file (so the pages really go) and one in memory.
TEST_CASE("streamed weights give bit-identical results") {
  const std::string path = "threads_test_stream.octet";
  for (const bool int8 : {false, true})
  for (fb::Family family :
       {fb::Family::Llama, fb::Family::Rwkv, fb::Family::Bert, fb::Family::T5}) {
    CAPTURE(int8);
    CAPTURE(static_cast<int>(family));
    TinyModelOptions options;
    options.packed = int8;
    options.family = family;
    options.vocab = 600;
    options.hidden = 128;
    options.layers = 3;
    options.int8 = int8;
    options.max_positions = 64;
    testing::MakeTinyModelWriter(options).Write(path);
    Result<Model> mapped = Model::Load(path.c_str());
    REQUIRE_MESSAGE(mapped.ok(), std::string(mapped.status().message()));
    REQUIRE(mapped->is_mapped());
    LoadedModel in_memory(options);
    const std::vector<float> want = RunAll(mapped.value(), 1);
    REQUIRE(!want.empty());
    // Nothing kept, about one layer kept, everything kept.
    const uint64_t layer = mapped->file_size() / (options.layers + 2);
    for (const uint64_t keep : {uint64_t{0}, layer, uint64_t{1} << 40})
    for (uint32_t threads : {1u, 2u}) {
      CAPTURE(keep);
      CAPTURE(threads);
      for (const Model* model : {&mapped.value(), &in_memory.model}) {
        const std::vector<float> got = RunAll(*model, threads, true, keep);
        REQUIRE(got.size() == want.size());
        CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
      }
      // The same session's passes again, after its layers were streamed out.
      CHECK(RunAll(mapped.value(), threads, true, keep) == want);
    }
  }
  std::remove(path.c_str());
}

TEST_CASE("the thread pool runs every task once, on every thread count") {
  for (uint32_t threads : {1u, 2u, 3u, 8u}) {
    CAPTURE(threads);
    Result<ThreadPool*> created = ThreadPool::Create(threads);
    REQUIRE(created.ok());
    ThreadPool* pool = created.value();
    CHECK(pool->threads() == threads);
    for (size_t tasks : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}}) {
      std::vector<int> hits(tasks, 0);
      std::vector<int> bad_thread(tasks, 0);
      for (int round = 0; round < 20; ++round) {
        auto fn = [&](size_t task, size_t thread) {
          ++hits[task];  // each task exactly once: no two threads touch one entry
          if (thread >= threads) bad_thread[task] = 1;
        };
        pool->For(tasks, fn);
      }
      for (size_t t = 0; t < tasks; ++t) {
        CHECK(hits[t] == 20);
        CHECK(bad_thread[t] == 0);
      }
    }
    delete pool;
  }
}

TEST_CASE("a thread count of 0 picks the machine's fast cores and too many are refused") {
  CHECK(DefaultThreadCount() >= 1);
  TinyModelOptions options;
  options.layers = 1;
  LoadedModel m(options);
  SessionLimits limits;
  limits.threads = 0;
  Result<Session> session = Session::Create(m.model, limits);
  REQUIRE(session.ok());
  CHECK(session->threads() >= 1);
  limits.threads = kMaxSessionThreads + 1;
  Result<Session> refused = Session::Create(m.model, limits);
  REQUIRE(!refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace octet
