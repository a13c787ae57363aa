// The heatmap: layout first (every position computed before drawing, so the
// test reads the same numbers), then cells written as pixels straight into
// the image surface (exact colors, no antialiasing between cells), then the
// text and the color bar with cairo.
#include "cli/attention_map.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "cli/args.h"
#include "core/utf8.h"

#ifdef OCTET_HAVE_CAIRO
#include <cairo.h>
#endif

namespace octet {
namespace cli {
namespace {

// The ramp: nine stops sampled from the viridis colormap (van der Walt and
// Smith), linearly interpolated between them.
constexpr uint32_t kRamp[] = {0x440154, 0x482878, 0x3e4989, 0x31688e, 0x26828e,
                              0x1f9e89, 0x35b779, 0x6ece58, 0xfde725};
constexpr int kRampStops = sizeof(kRamp) / sizeof(kRamp[0]);
constexpr int kColorLevels = 8 * (kRampStops - 1) + 1;  // 65

// The diverging ramp of mixing maps, from the largest negative weight through
// near-white to the largest positive (ColorBrewer's RdBu, reversed); nine
// stops, eight levels between neighbours.
constexpr uint32_t kDiverging[] = {0x2166ac, 0x4393c3, 0x92c5de, 0xd1e5f0, 0xf7f7f7,
                                   0xfddbc7, 0xf4a582, 0xd6604d, 0xb2182b};
constexpr int kDivergingStops = sizeof(kDiverging) / sizeof(kDiverging[0]);

constexpr int kMargin = 16;
constexpr int kGap = 24;  // between panels
constexpr double kTitleSize = 16;
constexpr double kPanelTitleSize = 12;
constexpr double kMaxLabelSize = 11;
constexpr double kMinLabelSize = 7;
constexpr size_t kMaxLabelChars = 14;
constexpr int kBarWidth = 16;
constexpr int kBarLabelWidth = 44;
constexpr double kHalfPi = 1.57079632679489661923;

void AppendUtf8(uint32_t cp, std::string* out) {
  char bytes[kMaxUtf8Bytes];
  out->append(bytes, Utf8Encode(cp, bytes));
}

// The next code point of text at *at (advancing it), or U+FFFD for an invalid,
// overlong or truncated sequence (one byte consumed).
uint32_t NextCodePoint(const std::string& text, size_t* at) {
  bool valid = false;
  return Utf8DecodeChecked(text.data(), text.size(), at, &valid);
}

}  // namespace

namespace {

// The color of level `level` of a ramp of `stops` stops with `per_stop`
// levels between neighbours (linear in RGB).
uint32_t RampColor(const uint32_t* ramp, int stops, int per_stop, int level) {
  const int i = std::min(level / per_stop, stops - 2);
  const double f = static_cast<double>(level - i * per_stop) / per_stop;
  uint32_t rgb = 0;
  for (int shift = 16; shift >= 0; shift -= 8) {
    const double a = (ramp[i] >> shift) & 0xFF, b = (ramp[i + 1] >> shift) & 0xFF;
    rgb |= static_cast<uint32_t>(std::lround(a + (b - a) * f)) << shift;
  }
  return rgb;
}

}  // namespace

uint32_t MixingColor(float x) {
  if (std::isnan(x)) return kEmptyColor;
  if (x == 0.0f) return kDiverging[kDivergingStops / 2];
  const double t = std::sqrt(std::min(1.0, std::fabs(static_cast<double>(x))));
  const int half = 4 * 8;  // levels from white to either end
  // At least one level from white: a tiny weight keeps its sign.
  const int step = std::max(1, static_cast<int>(std::lround(t * half)));
  return RampColor(kDiverging, kDivergingStops, 8, x > 0.0f ? half + step : half - step);
}

uint32_t AttentionColor(float p) {
  if (!(p > 0.0f)) return kEmptyColor;
  // kColorLevels levels of t: eight per segment of the ramp, so each level is
  // at least 2 luminance units brighter than the one below, more than the
  // per-channel rounding can take back (at most 1): brightness never reverses.
  const double t = std::sqrt(std::min(1.0, static_cast<double>(p)));
  const int level = static_cast<int>(std::lround(t * (kColorLevels - 1)));
  return RampColor(kRamp, kRampStops, (kColorLevels - 1) / (kRampStops - 1), level);
}

std::string VisibleLabel(const std::string& text, size_t max_chars) {
  std::vector<uint32_t> cps;
  for (size_t at = 0; at < text.size();) {
    uint32_t cp = NextCodePoint(text, &at);
    if (cp == ' ')
      cp = 0x2423;  // OPEN BOX
    else if (cp == '\n')
      cp = 0x2424;  // SYMBOL FOR NEWLINE
    else if (cp < 0x20)
      cp = 0x2400 + cp;  // SYMBOL FOR NULL ..
    else if (cp == 0x7F)
      cp = 0x2421;  // SYMBOL FOR DELETE
    else if (cp >= 0x80 && cp < 0xA0)
      cp = 0xFFFD;  // C1 controls
    cps.push_back(cp);
  }
  if (max_chars > 0 && cps.size() > max_chars) {
    cps.resize(max_chars - 1);
    cps.push_back(0x2026);  // HORIZONTAL ELLIPSIS
  }
  std::string out;
  for (uint32_t cp : cps) AppendUtf8(cp, &out);
  return out;
}

void AttentionMapGeometry::CellCenter(uint32_t p, uint32_t i, uint32_t j, int* x, int* y) const {
  *x = panel_x[p] + static_cast<int>(j) * cell + cell / 2;
  *y = panel_y[p] + static_cast<int>(i) * cell + cell / 2;
}

void AttentionMapGeometry::TokensOfPixel(int at, int extent, uint32_t n, uint32_t* first,
                                         uint32_t* last) {
  *first = static_cast<uint32_t>(static_cast<uint64_t>(at) * n / extent);
  *last = static_cast<uint32_t>(static_cast<uint64_t>(at + 1) * n / extent);
  if (*last <= *first) *last = *first + 1;
}

#ifdef OCTET_HAVE_CAIRO
namespace {

void Check(bool ok, const std::string& what) {
  if (!ok) throw Failure("attention map: " + what);
}

// Text widths for the layout, from a scratch context.
class Measure {
 public:
  Measure() {
    surface_ = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    cr_ = cairo_create(surface_);
  }
  ~Measure() {
    cairo_destroy(cr_);
    cairo_surface_destroy(surface_);
  }
  Measure(const Measure&) = delete;
  Measure& operator=(const Measure&) = delete;
  double Width(const std::string& text, double size, bool bold = false) {
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr_, size);
    cairo_text_extents_t e;
    cairo_text_extents(cr_, text.c_str(), &e);
    return e.x_advance;
  }

 private:
  cairo_surface_t* surface_;
  cairo_t* cr_;
};

void SetColor(cairo_t* cr, uint32_t rgb) {
  cairo_set_source_rgb(cr, ((rgb >> 16) & 0xFF) / 255.0, ((rgb >> 8) & 0xFF) / 255.0,
                       (rgb & 0xFF) / 255.0);
}

void Text(cairo_t* cr, double x, double y, const std::string& text, double size, bool bold) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_move_to(cr, x, y);
  cairo_show_text(cr, text.c_str());
}

// The largest probability of the cells (queries [q0, q1), keys [k0, k1)); of
// a mixing map, the weight of largest magnitude among the cells with j <= i.
float CellMax(const float* panel, uint32_t k_len, uint32_t q0, uint32_t q1, uint32_t k0,
              uint32_t k1, bool mixing) {
  float best = 0.0f;
  for (uint32_t i = q0; i < q1; ++i) {
    for (uint32_t j = k0; j < k1 && (!mixing || j <= i); ++j) {
      const float p = panel[static_cast<size_t>(i) * k_len + j];
      if (mixing ? std::fabs(p) > std::fabs(best) : p > best) best = p;
    }
  }
  return best;
}

// A mixing panel's scale: its largest |c| (1 when all are 0).
float MixingScale(const float* panel, uint32_t q_len, uint32_t k_len) {
  float scale = 0.0f;
  for (size_t e = 0; e < static_cast<size_t>(q_len) * k_len; ++e) {
    if (std::isfinite(panel[e])) scale = std::max(scale, std::fabs(panel[e]));
  }
  return scale > 0.0f ? scale : 1.0f;
}

}  // namespace

bool HaveAttentionMaps() { return true; }

AttentionMapGeometry LayoutAttentionMap(const AttentionMapSpec& s) {
  Check(s.probs != nullptr && s.panels > 0 && s.q_len > 0 && s.k_len > 0, "nothing to draw");
  Check(s.heads.size() == s.panels, "one head number per panel");
  Check(!s.mixing || s.q_len == s.k_len, "a mixing map is square (tokens mix with earlier ones)");
  Check(s.query_labels.size() == s.q_len && s.key_labels.size() == s.k_len, "one label per token");
  AttentionMapGeometry g;
  g.q_len = s.q_len;
  g.k_len = s.k_len;
  g.columns = static_cast<uint32_t>(std::ceil(std::sqrt(static_cast<double>(s.panels))));
  g.rows = (s.panels + g.columns - 1) / g.columns;
  const int max_px = s.panels == 1 ? kMaxPanelPixels : kMaxTiledPanelPixels;
  const uint32_t n = std::max(s.q_len, s.k_len);
  const int max_cell = s.panels == 1 ? 28 : 16;
  if (n <= static_cast<uint32_t>(max_px)) {
    g.cell = std::min(max_cell, std::max(1, max_px / static_cast<int>(n)));
    g.panel_w = g.cell * static_cast<int>(s.k_len);
    g.panel_h = g.cell * static_cast<int>(s.q_len);
  } else {  // aggregated: the longer axis gets max_px pixels, the other in proportion
    g.cell = 0;
    g.panel_w = std::max(1, static_cast<int>(static_cast<uint64_t>(max_px) * s.k_len / n));
    g.panel_h = std::max(1, static_cast<int>(static_cast<uint64_t>(max_px) * s.q_len / n));
  }
  // Labels: as large as the cells allow (one every label_step tokens when small).
  const double cell_px = g.cell > 0 ? g.cell : static_cast<double>(g.panel_h) / s.q_len;
  g.font_size = std::min(kMaxLabelSize, cell_px * 0.8);
  g.label_step = 1;
  if (g.font_size < kMinLabelSize) {
    g.font_size = kMinLabelSize;
    g.label_step = static_cast<uint32_t>(std::ceil(kMinLabelSize * 1.25 / cell_px));
  }
  Measure measure;
  double label_w = 0;
  for (const auto* labels : {&s.query_labels, &s.key_labels}) {
    for (size_t t = 0; t < labels->size(); t += g.label_step) {
      label_w =
          std::max(label_w, measure.Width(VisibleLabel((*labels)[t], kMaxLabelChars), g.font_size));
    }
  }
  const int label_px = static_cast<int>(std::ceil(label_w)) + 6;
  const int panel_title_h = s.panels > 1 ? static_cast<int>(kPanelTitleSize) + 8 : 0;
  const int block_w = label_px + g.panel_w + kGap;
  const int block_h = panel_title_h + g.panel_h + label_px + kGap;
  const int title_h = static_cast<int>(kTitleSize * 2.6);
  const int grid_w = static_cast<int>(g.columns) * block_w;
  const std::string widest_title =  // a mixing map's one panel adds its scale (WriteAttentionMap)
      s.mixing && s.panels == 1 ? s.title + " (largest |c| -0.000e-00)" : s.title;
  const int title_w = static_cast<int>(measure.Width(widest_title, kTitleSize, true) + 2 * kMargin);
  g.width = std::max(title_w, kMargin + grid_w + kBarWidth + kBarLabelWidth + kMargin);
  g.height = kMargin + title_h + static_cast<int>(g.rows) * block_h + kMargin;
  for (uint32_t p = 0; p < s.panels; ++p) {
    const int col = static_cast<int>(p % g.columns), row = static_cast<int>(p / g.columns);
    g.panel_x.push_back(kMargin + col * block_w + label_px);
    g.panel_y.push_back(kMargin + title_h + row * block_h + panel_title_h);
  }
  return g;
}

AttentionMapGeometry WriteAttentionMap(const AttentionMapSpec& s, const std::string& path) {
  const AttentionMapGeometry g = LayoutAttentionMap(s);
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, g.width, g.height);
  cairo_t* cr = cairo_create(surface);
  struct Release {
    cairo_surface_t* s;
    cairo_t* c;
    ~Release() {
      cairo_destroy(c);
      cairo_surface_destroy(s);
    }
  } release{surface, cr};
  Check(cairo_status(cr) == CAIRO_STATUS_SUCCESS,
        std::string("cairo: ") + cairo_status_to_string(cairo_status(cr)));
  SetColor(cr, 0xFFFFFF);
  cairo_paint(cr);

  // Cells: pixels written directly (RGB24: one uint32 per pixel, 0x00RRGGBB).
  cairo_surface_flush(surface);
  unsigned char* data = cairo_image_surface_get_data(surface);
  const int stride = cairo_image_surface_get_stride(surface);
  for (uint32_t p = 0; p < s.panels; ++p) {
    const float* panel = s.probs + static_cast<size_t>(p) * s.q_len * s.k_len;
    const float scale = s.mixing ? MixingScale(panel, s.q_len, s.k_len) : 1.0f;
    for (int y = 0; y < g.panel_h; ++y) {
      uint32_t q0, q1;
      AttentionMapGeometry::TokensOfPixel(y, g.panel_h, s.q_len, &q0, &q1);
      uint32_t* line =
          reinterpret_cast<uint32_t*>(data + (g.panel_y[p] + y) * stride) + g.panel_x[p];
      for (int x = 0; x < g.panel_w; ++x) {
        uint32_t k0, k1;
        AttentionMapGeometry::TokensOfPixel(x, g.panel_w, s.k_len, &k0, &k1);
        const float v = CellMax(panel, s.k_len, q0, q1, k0, k1, s.mixing);
        line[x] = !s.mixing      ? AttentionColor(v)
                  : k0 + 1 > q1 ? kEmptyColor  // only later tokens: the future
                                : MixingColor(v / scale);
      }
    }
  }
  cairo_surface_mark_dirty(surface);

  // Text: title, then per panel its head, query labels (left, right-aligned)
  // and key labels (below, rotated to read upwards).
  SetColor(cr, 0x202020);
  std::string title = s.title;
  if (s.mixing && s.panels == 1) {  // no panel title above one panel: its scale goes here
    char scale[48];
    std::snprintf(scale, sizeof(scale), " (largest |c| %.3g)", MixingScale(s.probs, s.q_len, s.k_len));
    title += scale;
  }
  Text(cr, kMargin, kMargin + kTitleSize, title, kTitleSize, true);
  Text(cr, kMargin, kMargin + kTitleSize * 2.2,
       s.mixing ? "rows: outputs o_i = sum_j c_ij v_j, columns: tokens j <= i; color: sign(c) "
                  "sqrt(|c| / the panel's largest |c|)"
                : "rows: queries, columns: keys; color: sqrt(p)",
       kPanelTitleSize - 1, false);
  const double row_px = static_cast<double>(g.panel_h) / s.q_len;
  const double col_px = static_cast<double>(g.panel_w) / s.k_len;
  Measure measure;
  for (uint32_t p = 0; p < s.panels; ++p) {
    const double px = g.panel_x[p], py = g.panel_y[p];
    std::string head = s.panels > 1 ? "head " + std::to_string(s.heads[p]) : "";
    if (s.mixing && s.panels > 1) {
      char scale[48];
      std::snprintf(scale, sizeof(scale), "%slargest |c| %.3g", head.empty() ? "" : ", ",
                    MixingScale(s.probs + static_cast<size_t>(p) * s.q_len * s.k_len, s.q_len,
                                s.k_len));
      head += scale;
    }
    if (!head.empty()) Text(cr, px, py - 6, head, kPanelTitleSize, true);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    for (uint32_t i = 0; i < s.q_len; i += g.label_step) {
      const std::string label = VisibleLabel(s.query_labels[i], kMaxLabelChars);
      const double w = measure.Width(label, g.font_size);
      Text(cr, px - 4 - w, py + (i + 0.5) * row_px + g.font_size * 0.35, label, g.font_size, false);
    }
    for (uint32_t j = 0; j < s.k_len; j += g.label_step) {
      const std::string label = VisibleLabel(s.key_labels[j], kMaxLabelChars);
      const double w = measure.Width(label, g.font_size);
      cairo_save(cr);
      cairo_translate(cr, px + (j + 0.5) * col_px + g.font_size * 0.35, py + g.panel_h + 4 + w);
      cairo_rotate(cr, -kHalfPi);
      Text(cr, 0, 0, label, g.font_size, false);
      cairo_restore(cr);
    }
  }

  // The color bar: t = sqrt(p) upwards, ticks at a few probabilities.
  const int bar_x = g.width - kMargin - kBarLabelWidth - kBarWidth;
  const int bar_y = g.panel_y[0];
  const int bar_h = std::max(64, std::min(g.panel_h, 320));
  for (int y = 0; y < bar_h; ++y) {
    const double t = 1.0 - (y + 0.5) / bar_h;
    if (s.mixing) {  // t from +1 at the top to -1 at the bottom
      const double u = 2.0 * t - 1.0;
      SetColor(cr, MixingColor(static_cast<float>(u < 0 ? -u * u : u * u)));
    } else {
      SetColor(cr, AttentionColor(static_cast<float>(t * t)));
    }
    cairo_rectangle(cr, bar_x, bar_y + y, kBarWidth, 1);
    cairo_fill(cr);
  }
  SetColor(cr, 0x202020);
  if (s.mixing) {
    for (double tick : {1.0, 0.25, 0.0, -0.25, -1.0}) {
      const double u = tick < 0 ? -std::sqrt(-tick) : std::sqrt(tick);
      const double y = bar_y + (1.0 - (u + 1.0) / 2.0) * bar_h;
      char text[24];
      std::snprintf(text, sizeof(text), "%g", tick);
      Text(cr, bar_x + kBarWidth + 4, y + 4, text, 10, false);
    }
  } else {
    for (double tick : {1.0, 0.5, 0.25, 0.1, 0.01}) {
      const double y = bar_y + (1.0 - std::sqrt(tick)) * bar_h;
      char text[16];
      std::snprintf(text, sizeof(text), "%g", tick);
      Text(cr, bar_x + kBarWidth + 4, y + 4, text, 10, false);
    }
  }
  SetColor(cr, kEmptyColor);
  cairo_rectangle(cr, bar_x, bar_y + bar_h + 8, kBarWidth, kBarWidth);
  cairo_fill(cr);
  SetColor(cr, 0x202020);
  Text(cr, bar_x + kBarWidth + 4, bar_y + bar_h + 8 + 12, s.mixing ? "j > i" : "0", 10, false);

  cairo_surface_flush(surface);
  const cairo_status_t written = cairo_surface_write_to_png(surface, path.c_str());
  Check(written == CAIRO_STATUS_SUCCESS,
        "cannot write " + path + ": " + cairo_status_to_string(written));
  return g;
}

#else  // no cairo

bool HaveAttentionMaps() { return false; }

constexpr char kNoCairo[] =
    "this build has no PNG support (cairo was not found when it was built: install "
    "libcairo2-dev and rebuild)";

AttentionMapGeometry LayoutAttentionMap(const AttentionMapSpec&) { throw Failure(kNoCairo); }

AttentionMapGeometry WriteAttentionMap(const AttentionMapSpec&, const std::string&) {
  throw Failure(kNoCairo);
}

#endif

}  // namespace cli
}  // namespace octet
