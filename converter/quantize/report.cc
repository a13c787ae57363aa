#include "quantize/report.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>

#include "core/quant.h"
#include "engine/session.h"
#include "format/tensor_names.h"
#include "import/error.h"
#include "quantize/quantize.h"
#include "quantize/calibration_text.h"

namespace octet {
namespace convert {
namespace {

constexpr size_t kMaxCalibrationLength = 256;

// The residual stream after each layer of one run, in execution order.
struct Capture {
  std::vector<std::string> names;
  std::vector<std::vector<float>> streams;  // [rows * hidden] each
};

void Observe(void* ctx, LayerStack stack, uint32_t layer, const float* x, size_t rows,
             size_t hidden) {
  Capture& c = *static_cast<Capture*>(ctx);
  char name[kMaxTensorNameLength];
  LayerTensorName(name, sizeof(name), stack, layer, "output");
  c.names.emplace_back(name);
  c.streams.emplace_back(x, x + rows * hidden);
}

// One sequence through a model: every layer's stream, then the output.
Capture Run(const Model& model, const std::vector<int32_t>& ids, bool stream,
            uint64_t keep_bytes) {
  const fb::Architecture& a = model.architecture();
  const auto len = static_cast<uint32_t>(ids.size());
  SessionLimits limits;
  limits.max_batch = 1;
  limits.max_seq = len;
  limits.stream_weights = stream;
  limits.stream_keep_bytes = keep_bytes;
  limits.threads = 0;  // the machine's fast cores: the same results on any count
  Result<Session> session = Session::Create(model, limits);
  if (!session.ok()) Fail("quantization report: ", session.status().message());
  Capture capture;
  session->SetLayerObserver(Observe, &capture);
  Status s;
  if (a.structure() == fb::Structure::EncoderDecoder) {
    // Teacher-forced on the same ids, shifted right behind the start token.
    std::vector<int32_t> dec(ids.size());
    dec[0] = a.decoder_start_token_id() >= 0 ? a.decoder_start_token_id() : 0;
    for (size_t i = 1; i < ids.size(); ++i) dec[i] = ids[i - 1];
    s = session->RunEncoderDecoder(ids.data(), &len, len, dec.data(), &len, len, 1);
  } else {
    s = session->Run(ids.data(), &len, 1, len);
  }
  if (!s.ok()) Fail("quantization report: ", s.message());
  const OutputView out = session->output();
  capture.names.emplace_back("output");
  capture.streams.emplace_back(out.data, out.data + static_cast<size_t>(out.seq) * out.dim);
  return capture;
}

struct Accumulator {
  double signal = 0, noise = 0, min_cosine = 1;
  double dyn_noise = 0, static_noise = 0;
  float max_abs = 0;
  // For the static-scale pass (its scale is the maximum over all of them):
  // the fp32 rows, in memory or in the spill file as (offset, floats) chunks.
  std::vector<float> rows;
  std::vector<std::pair<uint64_t, uint64_t>> spilled;
  bool has_rows() const { return !rows.empty() || !spilled.empty(); }
};

// The layers' fp32 rows waiting for the static-scale pass, in a temporary
// file (removed with this) when one is named, else in memory.
class RowStore {
 public:
  explicit RowStore(std::filesystem::path path) : path_(std::move(path)) {
    if (path_.empty()) return;
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) Fail("cannot create ", path_.string(), ": ", std::strerror(errno));
  }
  ~RowStore() {
    if (fd_ < 0) return;
    close(fd_);
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  RowStore(const RowStore&) = delete;
  RowStore& operator=(const RowStore&) = delete;

  void Append(Accumulator& a, const float* x, size_t n) {
    if (fd_ < 0) {
      a.rows.insert(a.rows.end(), x, x + n);
      return;
    }
    Io(pwrite, const_cast<float*>(x), n, end_);
    a.spilled.emplace_back(end_, n);
    end_ += n * sizeof(float);
  }

  // Calls fn(rows, n) over the rows of `a` in the order they came.
  template <typename Fn>
  void ForEach(const Accumulator& a, Fn fn) {
    if (fd_ < 0) {
      fn(a.rows.data(), a.rows.size());
      return;
    }
    for (const auto& [offset, n] : a.spilled) {
      buffer_.resize(n);
      Io(pread, buffer_.data(), n, offset);
      fn(buffer_.data(), n);
    }
  }

 private:
  template <typename Op>
  void Io(Op op, float* data, size_t n, uint64_t offset) {
    auto* p = reinterpret_cast<uint8_t*>(data);
    size_t left = n * sizeof(float);
    while (left > 0) {
      const ssize_t done = op(fd_, p, left, static_cast<off_t>(offset));
      if (done <= 0) {
        Fail("quantization report: cannot use ", path_.string(), ": ",
             done < 0 ? std::strerror(errno) : "short read");
      }
      p += done;
      left -= static_cast<size_t>(done);
      offset += static_cast<uint64_t>(done);
    }
  }

  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t end_ = 0;
  std::vector<float> buffer_;
};

}  // namespace

Calibration ReadCalibration(const std::filesystem::path& path, uint32_t vocab,
                            uint32_t max_positions, const TextEncoder* encoder) {
  const size_t max_len = max_positions != 0 && max_positions < kMaxCalibrationLength
                             ? max_positions
                             : kMaxCalibrationLength;
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("cannot read the calibration file");
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  // Ids when every word is an integer, else text.
  std::vector<std::vector<int32_t>> lines;
  bool ids = true;
  {
    std::istringstream stream(content);
    std::string line;
    while (ids && std::getline(stream, line)) {
      for (char& ch : line) {
        if (ch == ',') ch = ' ';
      }
      std::istringstream words(line);
      std::string word;
      std::vector<int32_t> seq;
      while (words >> word) {
        char* end = nullptr;
        const long id = std::strtol(word.c_str(), &end, 10);
        if (end == word.c_str() || *end != '\0') {
          ids = false;
          break;
        }
        if (id < 0 || id >= static_cast<long>(vocab)) {
          Fail("calibration line ", lines.size() + 1, ": token id ", id,
               " is outside the vocabulary (", vocab, ")");
        }
        seq.push_back(static_cast<int32_t>(id));
      }
      lines.push_back(std::move(seq));
    }
  }
  std::string what = "token ids";
  if (!ids) {
    if (encoder == nullptr) {
      Fail(
          "the calibration file is text, but the checkpoint has no tokenizer to encode it "
          "(give token ids, one sequence per line)");
    }
    std::vector<int32_t> stream;
    try {
      stream = encoder->Encode(content, /*add_special_tokens=*/false);
    } catch (const Error& e) {
      Fail("calibration text: ", e.what());
    }
    for (int32_t id : stream) {
      if (id < 0 || id >= static_cast<int32_t>(vocab)) {
        Fail("calibration text: the tokenizer produced id ", id, ", outside the vocabulary (",
             vocab, ")");
      }
    }
    lines.assign(1, std::move(stream));
    what = "token ids (text encoded with the model's tokenizer)";
  }

  Calibration c;
  size_t total = 0;
  for (const std::vector<int32_t>& line : lines) {
    for (size_t at = 0; at < line.size(); at += max_len) {
      const size_t n = line.size() - at < max_len ? line.size() - at : max_len;
      c.sequences.emplace_back(line.begin() + at, line.begin() + at + n);
      total += n;
    }
  }
  if (c.sequences.empty()) Fail("the calibration file holds no token ids and no text");
  c.description = std::to_string(c.sequences.size()) + " sequences, " + std::to_string(total) +
                  " " + what + " from " + path.filename().string();
  return c;
}

Calibration DefaultCalibration(uint32_t vocab, uint32_t max_positions, uint32_t seed) {
  Calibration c;
  std::mt19937 rng(seed);
  const uint32_t len = max_positions != 0 && max_positions < 64 ? max_positions : 64;
  for (int s = 0; s < 4; ++s) {
    std::vector<int32_t> seq(len);
    for (int32_t& id : seq) id = static_cast<int32_t>(rng() % vocab);
    c.sequences.push_back(std::move(seq));
  }
  c.description = "4 x " + std::to_string(len) + " pseudo-random token ids (seed " +
                  std::to_string(seed) + ")";
  return c;
}

std::vector<LayerReport> MeasureLayers(const Model& fp32, const Model& int8,
                                       const Calibration& calibration, bool stream,
                                       uint64_t keep_bytes,
                                       const std::filesystem::path& rows_file) {
  RowStore rows(rows_file);
  std::vector<std::string> order;
  std::map<std::string, Accumulator> acc;
  const size_t hidden = fp32.architecture().hidden_size();
  for (const std::vector<int32_t>& ids : calibration.sequences) {
    const Capture want = Run(fp32, ids, stream, keep_bytes);
    const Capture got = Run(int8, ids, stream, 0);
    if (want.names != got.names) Fail("internal: the int8 and fp32 models differ in layers");
    if (order.empty()) order = want.names;
    for (size_t i = 0; i < want.names.size(); ++i) {
      Accumulator& a = acc[want.names[i]];
      const std::vector<float>& x = want.streams[i];
      const std::vector<float>& y = got.streams[i];
      const size_t dim = want.names[i] == "output" ? x.size() / ids.size() : hidden;
      for (size_t r = 0; r * dim < x.size(); ++r) {
        double dot = 0, nx = 0, ny = 0;
        for (size_t d = 0; d < dim; ++d) {
          const double xv = x[r * dim + d], yv = y[r * dim + d];
          a.signal += xv * xv;
          a.noise += (yv - xv) * (yv - xv);
          dot += xv * yv;
          nx += xv * xv;
          ny += yv * yv;
        }
        if (nx > 0 && ny > 0) a.min_cosine = std::fmin(a.min_cosine, dot / std::sqrt(nx * ny));
        // The fp32 stream as an int8 matrix product would see it: per row (dynamic).
        std::vector<int8_t> q(dim);
        const float scale = QuantizeRowSymmetric(x.data() + r * dim, dim, q.data());
        for (size_t d = 0; d < dim; ++d) {
          const double e = x[r * dim + d] - static_cast<double>(q[d]) * scale;
          a.dyn_noise += e * e;
          a.max_abs = std::fmax(a.max_abs, std::fabs(x[r * dim + d]));
        }
      }
      // The output (logits) is no product's input: no static figure, nor its rows.
      if (want.names[i] != "output") rows.Append(a, x.data(), x.size());
    }
  }
  std::vector<LayerReport> report;
  for (const std::string& name : order) {
    Accumulator& a = acc[name];
    // One static scale per tensor: the calibration's maximum, clipped by the
    // factor (1, 0.9, ..., 0.3) that gives the least error.
    constexpr int kSteps = 8;
    float scales[kSteps];
    double noise[kSteps] = {};
    for (int step = 0; step < kSteps; ++step) {
      const float clip = 1.0f - 0.1f * static_cast<float>(step);
      scales[step] = a.max_abs > 0 ? clip * a.max_abs / 127.0f : 1.0f;
    }
    rows.ForEach(a, [&](const float* x, size_t n) {
      for (int step = 0; step < kSteps; ++step) {
        const float scale = scales[step];
        double sum = noise[step];
        for (size_t k = 0; k < n; ++k) {
          const float v = x[k];
          float t = v / scale;
          t = t > 127.0f ? 127.0f : (t < -127.0f ? -127.0f : t);
          const double e = v - static_cast<double>(RoundHalfEven(t)) * scale;
          sum += e * e;
        }
        noise[step] = sum;
      }
    });
    a.static_noise = -1;
    for (int step = 0; step < kSteps && a.has_rows(); ++step) {
      if (a.static_noise < 0 || noise[step] < a.static_noise) a.static_noise = noise[step];
    }
    LayerReport r;
    r.name = name;
    r.sqnr_db = SqnrDb(a.signal, a.noise);
    r.min_cosine = a.min_cosine;
    r.act_dynamic_db = SqnrDb(a.signal, a.dyn_noise);
    r.act_static_db = a.has_rows() ? SqnrDb(a.signal, a.static_noise) : std::nan("");
    report.push_back(r);
  }
  return report;
}

}  // namespace convert
}  // namespace octet
