// The heatmap PNG read back: each file is decoded with cairo
// (cairo_image_surface_create_from_png), the cells found through the layout's
// geometry, and the pixels checked against the probabilities drawn: every cell
// has exactly AttentionColor(p), a causal map is the empty color above the
// diagonal, each row's brightest cell holds its largest weight; on a decoder's
// self-attention, on the cross-attention of a synthetic T5 and of the Marian
// golden model, and on a long synthetic map whose cells are under a pixel.
#include <doctest/doctest.h>

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/attention_map.h"
#include "engine/session.h"
#include "support/loaded_model.h"
#include "support/test_models.h"

namespace octet {
namespace cli {
namespace {

using testing::LoadedModel;
using testing::TempFile;
using testing::TinyModelOptions;

// A decoded PNG: 0xRRGGBB per pixel.
class Png {
 public:
  explicit Png(const std::string& path) {
    surface_ = cairo_image_surface_create_from_png(path.c_str());
    REQUIRE_MESSAGE(cairo_surface_status(surface_) == CAIRO_STATUS_SUCCESS, path);
    width_ = cairo_image_surface_get_width(surface_);
    height_ = cairo_image_surface_get_height(surface_);
  }
  ~Png() { cairo_surface_destroy(surface_); }
  Png(const Png&) = delete;
  Png& operator=(const Png&) = delete;
  int width() const { return width_; }
  int height() const { return height_; }
  uint32_t At(int x, int y) const {
    REQUIRE(x >= 0);
    REQUIRE(y >= 0);
    REQUIRE(x < width_);
    REQUIRE(y < height_);
    const unsigned char* data = cairo_image_surface_get_data(surface_);
    const int stride = cairo_image_surface_get_stride(surface_);
    return reinterpret_cast<const uint32_t*>(data + y * stride)[x] & 0xFFFFFF;
  }

 private:
  cairo_surface_t* surface_ = nullptr;
  int width_ = 0, height_ = 0;
};

// Relative luminance of a gamma-encoded color (Rec. 709 weights): "brightness".
double Luminance(uint32_t rgb) {
  return 0.2126 * ((rgb >> 16) & 0xFF) + 0.7152 * ((rgb >> 8) & 0xFF) + 0.0722 * (rgb & 0xFF);
}

std::vector<std::string> Labels(uint32_t n, const std::string& prefix = "") {
  std::vector<std::string> labels;
  for (uint32_t i = 0; i < n; ++i) labels.push_back(prefix + std::to_string(i));
  return labels;
}

// The spec of panels of the probabilities of sequence b (real tokens q_n x k_n).
AttentionMapSpec SpecOf(const AttentionCapture& c, const std::vector<float>& probs, uint32_t b,
                        uint32_t q_n, uint32_t k_n, std::vector<float>* panels) {
  AttentionMapSpec spec;
  spec.q_len = q_n;
  spec.k_len = k_n;
  panels->clear();
  for (uint32_t h = 0; h < c.heads; ++h) {
    spec.heads.push_back(h);
    for (uint32_t i = 0; i < q_n; ++i) {
      const float* row =
          probs.data() + ((static_cast<size_t>(b) * c.heads + h) * c.q_len + i) * c.k_len;
      panels->insert(panels->end(), row, row + k_n);
    }
  }
  spec.panels = c.heads;
  spec.probs = panels->data();
  spec.query_labels = Labels(q_n, "q");
  spec.key_labels = Labels(k_n, "k");
  spec.title = "test";
  return spec;
}

// Every cell's pixel is its color; each row's brightest cell is its largest
// weight; causal maps are empty above the diagonal. Returns the cells checked.
size_t CheckCells(const AttentionMapSpec& spec, const AttentionMapGeometry& g, const Png& png,
                  bool causal) {
  REQUIRE(g.cell > 0);
  REQUIRE(png.width() == g.width);
  REQUIRE(png.height() == g.height);
  size_t cells = 0;
  for (uint32_t p = 0; p < spec.panels; ++p) {
    for (uint32_t i = 0; i < spec.q_len; ++i) {
      const float* row = spec.probs + (static_cast<size_t>(p) * spec.q_len + i) * spec.k_len;
      uint32_t largest = 0;
      for (uint32_t j = 1; j < spec.k_len; ++j) largest = row[j] > row[largest] ? j : largest;
      int x = 0, y = 0;
      g.CellCenter(p, i, largest, &x, &y);
      const double brightest = Luminance(png.At(x, y));
      for (uint32_t j = 0; j < spec.k_len; ++j) {
        g.CellCenter(p, i, j, &x, &y);
        const uint32_t pixel = png.At(x, y);
        CHECK(pixel == AttentionColor(row[j]));
        CHECK(Luminance(pixel) <= brightest);
        if (causal && j > i) CHECK(pixel == kEmptyColor);
        if (row[j] > 0.0f) CHECK(pixel != kEmptyColor);
        ++cells;
      }
    }
  }
  return cells;
}

TEST_CASE("the ramp: brighter for larger weights, empty below everything") {
  // Never darker for a larger weight; a new color is always brighter.
  double previous = Luminance(kEmptyColor);
  uint32_t previous_color = kEmptyColor, colors = 0;
  for (int k = 1; k <= 100000; ++k) {
    const uint32_t color = AttentionColor(k / 100000.0f);
    if (color == previous_color) continue;
    CHECK(Luminance(color) > previous + 1.0);
    previous = Luminance(color);
    previous_color = color;
    ++colors;
  }
  CHECK(colors == 65);
  CHECK(AttentionColor(0.0f) == kEmptyColor);
  CHECK(AttentionColor(std::nanf("")) == kEmptyColor);
  CHECK(AttentionColor(2.0f) == AttentionColor(1.0f));
  CHECK(AttentionColor(1e-9f) != kEmptyColor);  // a tiny weight is not masked
}

// Distance from the diverging ramp's white (sum of channel differences).
int FromWhite(uint32_t rgb) {
  return (0xF7 - static_cast<int>((rgb >> 16) & 0xFF)) + (0xF7 - static_cast<int>((rgb >> 8) & 0xFF)) +
         (0xF7 - static_cast<int>(rgb & 0xFF));
}

TEST_CASE("the diverging ramp: further from white for larger |x|, blue below 0, red above") {
  for (float sign : {-1.0f, 1.0f}) {
    CAPTURE(sign);
    int previous = -1;
    uint32_t previous_color = 0, colors = 0;
    for (int k = 1; k <= 100000; ++k) {
      const uint32_t color = MixingColor(sign * k / 100000.0f);
      const int r = (color >> 16) & 0xFF, b = color & 0xFF;
      CHECK(color != kEmptyColor);
      CHECK(color != MixingColor(0.0f));
      if (sign < 0) CHECK(b >= r); else CHECK(r >= b);
      if (color == previous_color) continue;
      CHECK(FromWhite(color) > previous);
      previous = FromWhite(color);
      previous_color = color;
      ++colors;
    }
    CHECK(colors == 32);
  }
  CHECK(MixingColor(0.0f) == 0xf7f7f7);  // white: decayed to nothing, not masked
  CHECK(MixingColor(std::nanf("")) == kEmptyColor);
  CHECK(MixingColor(-3.0f) == MixingColor(-1.0f));
  CHECK(MixingColor(1e-9f) != MixingColor(-1e-9f));  // a tiny weight keeps its sign
}

TEST_CASE("a Gated DeltaNet's token-mixing map: signed cells, the future empty") {
  TinyModelOptions o;
  o.family = fb::Family::Qwen35;
  o.int8 = false;
  o.layers = 2;  // layer 0: Gated DeltaNet
  o.hidden = 32;
  o.layer_stddev = 0.3f;
  LoadedModel loaded(o);
  const uint32_t n = 12;
  std::vector<int32_t> ids(n);
  for (uint32_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>((i * 7 + 3) % 32);
  Result<Session> session = Session::Create(loaded.model, SessionLimits{1, n, 0});
  REQUIRE(session.ok());
  const uint32_t heads = loaded.model.architecture().linear_attention()->value_heads();
  std::vector<float> probs(heads * n * n);
  AttentionCapture c;
  c.layer = 0;
  c.probs = probs.data();
  c.capacity = probs.size();
  REQUIRE(session->SetAttentionCapture(&c).ok());
  REQUIRE(session->Run(ids.data(), &n, 1, n).ok());
  REQUIRE(c.kind == CaptureKind::kMixing);
  std::vector<float> panels;
  AttentionMapSpec spec = SpecOf(c, probs, 0, n, n, &panels);
  spec.mixing = true;
  TempFile file(".png");
  const AttentionMapGeometry g = WriteAttentionMap(spec, file.path());
  const Png png(file.path());
  size_t negative = 0;
  for (uint32_t p = 0; p < spec.panels; ++p) {
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        const float x = panels[(p * n + i) * n + j];
        int px = 0, py = 0;
        g.CellCenter(p, i, j, &px, &py);
        float scale = 0.0f;  // the panel's largest |c|
        for (uint32_t e = 0; e < n * n; ++e) scale = std::max(scale, std::fabs(panels[p * n * n + e]));
        if (j > i) {
          CHECK(png.At(px, py) == kEmptyColor);
        } else {
          CHECK(png.At(px, py) == MixingColor(x / scale));
        }
        negative += x < 0.0f;
      }
    }
  }
  CHECK(negative > 0);  // both sides of the ramp are exercised
  spec.k_len = n - 1;  // not square
  spec.key_labels.pop_back();
  CHECK_THROWS(WriteAttentionMap(spec, file.path()));
}

TEST_CASE("labels: spaces and control characters visible, invalid UTF-8 replaced, long cut") {
  CHECK(VisibleLabel("a b", 14) == "a\u2423b");
  CHECK(VisibleLabel("\n\t\x01\x7f", 14) == "\u2424\u2409\u2401\u2421");
  CHECK(VisibleLabel("x\xff\xc3", 14) == "x\ufffd\ufffd");
  CHECK(VisibleLabel("\xc3\xa9t\xc3\xa9", 14) == "\u00e9t\u00e9");
  CHECK(VisibleLabel("\xed\xa0\x80", 14) == "\ufffd\ufffd\ufffd");  // a surrogate: 3 bad bytes
  CHECK(VisibleLabel("abcdefghijklmnopqrstuvwxyz", 6) == "abcde\u2026");
  CHECK(VisibleLabel("", 6).empty());
}

TEST_CASE("a decoder's self-attention map: causal cells empty, rows' brightest = largest") {
  TinyModelOptions o;
  o.family = fb::Family::Llama;
  o.int8 = false;
  o.layers = 2;
  o.hidden = 32;
  o.layer_stddev = 0.3f;  // peaked rows
  LoadedModel loaded(o);
  const uint32_t n = 12;
  std::vector<int32_t> ids(n);
  for (uint32_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>((i * 7 + 3) % 32);
  Result<Session> session = Session::Create(loaded.model, SessionLimits{1, n, 0});
  REQUIRE(session.ok());
  std::vector<float> probs(2 * n * n);
  AttentionCapture c;
  c.layer = 1;
  c.probs = probs.data();
  c.capacity = probs.size();
  REQUIRE(session->SetAttentionCapture(&c).ok());
  REQUIRE(session->Run(ids.data(), &n, 1, n).ok());
  std::vector<float> panels;
  AttentionMapSpec spec = SpecOf(c, probs, 0, n, n, &panels);
  for (bool one_head : {false, true}) {
    CAPTURE(one_head);
    if (one_head) {  // head 1 alone: larger cells
      spec.panels = 1;
      spec.heads = {1};
      spec.probs = panels.data() + n * n;
    }
    TempFile file(".png");
    const AttentionMapGeometry g = WriteAttentionMap(spec, file.path());
    CHECK(g.font_size > 0);
    CHECK(g.label_step == 1);  // 12 tokens: every one labelled
    const Png png(file.path());
    CHECK(CheckCells(spec, g, png, true) == spec.panels * n * n);
    // Outside the cells: the white page (a corner).
    CHECK(png.At(1, 1) == 0xFFFFFF);
  }
}

// Cross-attention of an encoder-decoder: queries are decoder tokens, keys the
// source's real tokens (padding keys are not drawn).
void CheckCrossMap(const Model& model, const std::vector<int32_t>& src,
                   const std::vector<int32_t>& dec) {
  const auto sn = static_cast<uint32_t>(src.size()), dn = static_cast<uint32_t>(dec.size());
  // Batch of 2: sequence 1 is the one drawn; sequence 0 is longer (so 1 has padding).
  std::vector<int32_t> src_ids(2 * (sn + 3), 1), dec_ids(2 * dn, 1);
  for (uint32_t i = 0; i < sn; ++i) src_ids[(sn + 3) + i] = src[i];
  for (uint32_t i = 0; i < dn; ++i) dec_ids[dn + i] = dec[i];
  const uint32_t src_len[2] = {sn + 3, sn}, dec_len[2] = {dn, dn};
  Result<Session> session = Session::Create(model, SessionLimits{2, sn + 3 > dn ? sn + 3 : dn, 0});
  REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
  const uint32_t heads = model.architecture().attention()->num_heads();
  std::vector<float> probs(2 * heads * dn * (sn + 3));
  AttentionCapture c;
  c.stack = LayerStack::kDecoder;
  c.site = AttentionSite::kCross;
  c.layer = model.architecture().num_decoder_layers() - 1;
  c.probs = probs.data();
  c.capacity = probs.size();
  REQUIRE(session->SetAttentionCapture(&c).ok());
  const Status s =
      session->RunEncoderDecoder(src_ids.data(), src_len, sn + 3, dec_ids.data(), dec_len, dn, 2);
  REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
  std::vector<float> panels;
  const AttentionMapSpec spec = SpecOf(c, probs, 1, dn, sn, &panels);
  TempFile file(".png");
  const AttentionMapGeometry g = WriteAttentionMap(spec, file.path());
  const Png png(file.path());
  CHECK(CheckCells(spec, g, png, false) == static_cast<size_t>(heads) * dn * sn);
  // The drawn rows are whole: each sums to 1 over the real source tokens.
  for (uint32_t p = 0; p < spec.panels; ++p) {
    for (uint32_t i = 0; i < dn; ++i) {
      double sum = 0;
      for (uint32_t j = 0; j < sn; ++j) sum += panels[(p * dn + i) * sn + j];
      CHECK(std::fabs(sum - 1.0) <= 1e-5);
    }
  }
}

TEST_CASE("a synthetic T5's cross-attention map") {
  TinyModelOptions o;
  o.family = fb::Family::T5;
  o.layers = 2;
  o.hidden = 32;
  o.layer_stddev = 0.3f;
  LoadedModel loaded(o);
  CheckCrossMap(loaded.model, {5, 9, 2, 30, 7, 11, 3}, {0, 4, 8, 15});
}

#ifdef OCTET_GOLDEN_MODELS_DIR
TEST_CASE("the Marian golden model's cross-attention map") {
  // Converted by the convert.golden_cases fixture (tests/golden/cases/marian_pos).
  const std::string path = std::string(OCTET_GOLDEN_MODELS_DIR) + "/marian_pos.octet";
  std::vector<uint8_t> bytes;
  {
    FILE* f = std::fopen(path.c_str(), "rb");
    REQUIRE_MESSAGE(f != nullptr, path << " is missing: the convert.golden_cases fixture makes it");
    for (int ch; (ch = std::fgetc(f)) != EOF;) bytes.push_back(static_cast<uint8_t>(ch));
    std::fclose(f);
  }
  testing::AlignedBytes aligned(bytes);
  Result<Model> model = Model::FromBuffer(aligned.data(), aligned.size());
  REQUIRE_MESSAGE(model.ok(), std::string(model.status().message()));
  REQUIRE(model->architecture().structure() == fb::Structure::EncoderDecoder);
  // The source and decoder ids of the case's first sequence (inputs.json).
  CheckCrossMap(*model, {94, 39, 93, 15, 93, 40, 67, 48, 0}, {95, 61, 43, 72, 16, 53, 1});
}
#endif

TEST_CASE("a long map: cells under a pixel show the largest probability they cover") {
  const uint32_t n = 1500;  // more than kMaxPanelPixels
  std::vector<float> probs(static_cast<size_t>(n) * n, 0.0f);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j <= i; ++j) probs[static_cast<size_t>(i) * n + j] = 1.0f / (i + 1);
  }
  AttentionMapSpec spec;
  spec.probs = probs.data();
  spec.panels = 1;
  spec.q_len = spec.k_len = n;
  spec.heads = {0};
  spec.query_labels = Labels(n);
  spec.key_labels = Labels(n);
  spec.title = "long";
  TempFile file(".png");
  const AttentionMapGeometry g = WriteAttentionMap(spec, file.path());
  CHECK(g.cell == 0);
  CHECK(g.panel_w == kMaxPanelPixels);
  CHECK(g.panel_h == kMaxPanelPixels);
  CHECK(g.label_step > 1);
  const Png png(file.path());
  for (int y = 0; y < g.panel_h; y += 7) {
    uint32_t q0, q1;
    AttentionMapGeometry::TokensOfPixel(y, g.panel_h, n, &q0, &q1);
    for (int x = 0; x < g.panel_w; x += 5) {
      uint32_t k0, k1;
      AttentionMapGeometry::TokensOfPixel(x, g.panel_w, n, &k0, &k1);
      // The largest of rows [q0, q1) over keys [k0, k1): row q0's 1 / (q0 + 1)
      // if it sees k0 (rows further down are smaller), else the first row that does.
      float want = 0.0f;
      for (uint32_t i = q0; i < q1; ++i) {
        if (k0 <= i) {
          want = 1.0f / (i + 1);
          break;
        }
      }
      CHECK(png.At(g.panel_x[0] + x, g.panel_y[0] + y) == AttentionColor(want));
    }
  }
}

TEST_CASE("an inconsistent spec is refused") {
  std::vector<float> probs(4, 0.25f);
  AttentionMapSpec spec;
  spec.probs = probs.data();
  spec.panels = 1;
  spec.q_len = spec.k_len = 2;
  spec.heads = {0};
  spec.query_labels = Labels(2);
  spec.key_labels = Labels(1);  // one short
  CHECK_THROWS(LayoutAttentionMap(spec));
  spec.key_labels = Labels(2);
  CHECK_NOTHROW(LayoutAttentionMap(spec));
  TempFile file(".png");
  CHECK_THROWS(WriteAttentionMap(spec, file.path() + "/no/such/dir.png"));
}

}  // namespace
}  // namespace cli
}  // namespace octet
