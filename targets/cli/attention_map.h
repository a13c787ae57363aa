// Attention heatmaps as PNG (`octet run --attention-map`): one panel per head
// in a grid, cells colored by a perceptual ramp, token labels on both axes, a
// title and a color bar. Drawn with cairo (text and PNG); a build without
// cairo has the geometry and colors but no PNG (HaveAttentionMaps()).
//
// Colors: a cell's probability p in [0, 1] maps to t = sqrt(p), rounded to one
// of 65 levels, on a viridis-like ramp (dark purple -> teal -> yellow,
// luminance strictly increasing from level to level), so a row's brightest
// cell is its largest weight (ties: weights within a level share a color) and
// weights of a few percent stay visible; the scale is absolute (the same for
// every head and layer).
// p == 0 (masked keys: the future of a causal row, padding, outside a window)
// is the empty color, darker than any ramp color.
//
// Token-mixing maps (a linear attention's c_ij, signed and unbounded; spec
// .mixing): x = c / (the largest |c| of its panel, printed above it: heads
// differ by orders of magnitude) maps to t = sign(x) sqrt(|x|) on a diverging
// ramp (blue for negative, near-white for 0, red for positive; MixingColor),
// each side 32 levels (the first for the tiniest weights: a sign always
// shows), |t| larger -> further from white. The future (j > i) is the empty
// color; a weight that decayed to exactly 0 is white.
//
// Long sequences: a panel is at most kMaxPanelPixels on a side; when there are
// more tokens than that, a pixel shows the largest probability of the cells it
// covers (cells shrink below a pixel, peaks stay visible). Labels are drawn
// for every token when cells are tall enough for text, else for every k-th.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {
namespace cli {

struct AttentionMapSpec {
  const float* probs = nullptr;  // [panels, q_len, k_len]: rows are queries, columns keys
  uint32_t panels = 0;
  uint32_t q_len = 0;
  uint32_t k_len = 0;
  std::vector<uint32_t> heads;            // [panels]: the head each panel shows
  std::vector<std::string> query_labels;  // [q_len], UTF-8 (any bytes: made visible)
  std::vector<std::string> key_labels;    // [k_len]
  std::string title;                      // e.g. "layer 3 self-attention"
  // A signed token-mixing matrix (MixingColor) instead of probabilities
  // (square: row i mixes tokens j <= i).
  bool mixing = false;
};

// Where everything is, in pixels (origin top-left). Panel p's cell area is
// [panel_x[p], panel_x[p] + panel_w) x [panel_y[p], panel_y[p] + panel_h).
struct AttentionMapGeometry {
  int width = 0;
  int height = 0;
  uint32_t columns = 0;  // panels per grid row
  uint32_t rows = 0;     // grid rows
  uint32_t q_len = 0;
  uint32_t k_len = 0;
  int panel_w = 0;
  int panel_h = 0;
  // Pixels per cell side; 0 when the cells are aggregated (more tokens than
  // kMaxPanelPixels on an axis: pixel x shows keys KeysOfPixel(x)).
  int cell = 0;
  std::vector<int> panel_x;  // [panels]
  std::vector<int> panel_y;  // [panels]
  double font_size = 0;      // of the token labels; 0 = no labels
  uint32_t label_step = 1;   // a label every label_step tokens

  // The pixel at the center of cell (query i, key j) of panel p (cell > 0).
  void CellCenter(uint32_t p, uint32_t i, uint32_t j, int* x, int* y) const;
  // Tokens [*first, *last) that pixel offset `at` (0 .. extent-1) of an axis of
  // `n` tokens and `extent` pixels shows.
  static void TokensOfPixel(int at, int extent, uint32_t n, uint32_t* first, uint32_t* last);
};

constexpr int kMaxPanelPixels = 1024;       // one head alone
constexpr int kMaxTiledPanelPixels = 512;   // each of several heads
constexpr uint32_t kEmptyColor = 0x000000;  // p == 0

// 0xRRGGBB of probability p (clamped to [0, 1]; NaN and 0 give kEmptyColor).
uint32_t AttentionColor(float p);
// 0xRRGGBB of a mixing weight x relative to the panel's largest (clamped to
// [-1, 1]; 0 gives the ramp's white, NaN kEmptyColor).
uint32_t MixingColor(float x);

// A token string made printable on one line: spaces as U+2423, control
// characters as their Control Pictures (U+2400 + c, U+2421 for DEL; "\n" is
// U+2424), invalid UTF-8 bytes as U+FFFD; longer than max_chars code points:
// cut to max_chars - 1 and an ellipsis.
std::string VisibleLabel(const std::string& text, size_t max_chars);

// True when this build draws PNGs (cairo was found).
bool HaveAttentionMaps();

// The layout of spec (checks its sizes; throws Failure on an inconsistent spec
// or, without cairo, because text cannot be measured).
AttentionMapGeometry LayoutAttentionMap(const AttentionMapSpec& spec);

// Draws spec into a PNG at path; returns the geometry used. Throws Failure
// (no cairo in this build, a cairo error, the file cannot be written).
AttentionMapGeometry WriteAttentionMap(const AttentionMapSpec& spec, const std::string& path);

}  // namespace cli
}  // namespace octet
