#include "quantize/calibration_text.h"

#include <set>

#include "import/error.h"
#include "text/tokenizer.h"

namespace octet {
namespace convert {
namespace {

struct Passage {
  const char* language;
  const char* text;
  bool held_out;
};

const Passage kPassages[] = {
#include "quantize/calibration_text.inc"
};

}  // namespace

struct TextEncoder::Impl {
  flatbuffers::FlatBufferBuilder fbb;
  text::Tokenizer tokenizer;
};

TextEncoder::TextEncoder(const fb::TokenizerSpecT& spec) : impl_(std::make_unique<Impl>()) {
  impl_->fbb.Finish(fb::TokenizerSpec::Pack(impl_->fbb, &spec));
  const auto* packed = flatbuffers::GetRoot<fb::TokenizerSpec>(impl_->fbb.GetBufferPointer());
  const Status st = impl_->tokenizer.Init(packed);
  if (!st.ok()) Fail("tokenizer: ", st.message());
}

TextEncoder::~TextEncoder() = default;

std::vector<int32_t> TextEncoder::Encode(const std::string& text, bool add_special_tokens) const {
  const text::Tokenizer& t = impl_->tokenizer;
  text::TokenizerWorkspace workspace;
  Status st = t.CreateWorkspace(text.size() > 64 ? text.size() : 64, 1, &workspace);
  if (!st.ok()) Fail("tokenizer: ", st.message());
  std::vector<int32_t> ids(t.MaxIds(text.size()));
  size_t n = 0;
  text::EncodeOptions options;
  options.add_special_tokens = add_special_tokens;
  st = t.Encode(text.data(), text.size(), options, workspace, ids.data(), ids.size(), &n);
  if (!st.ok()) Fail("tokenizer: ", st.message());
  ids.resize(n);
  return ids;
}

BuiltInSamples BuiltInCalibration(const TextEncoder& encoder, uint32_t vocab, size_t max_len) {
  BuiltInSamples out;
  std::set<std::string> languages;
  size_t tokens[2] = {0, 0};
  for (const Passage& p : kPassages) {
    std::vector<int32_t> ids = encoder.Encode(p.text, /*add_special_tokens=*/true);
    if (ids.size() > max_len) ids.resize(max_len);
    if (ids.size() < 2) continue;
    for (int32_t id : ids) {
      if (id < 0 || static_cast<uint32_t>(id) >= vocab) {
        Fail("the tokenizer gives id ", id, ", outside the model's vocabulary (", vocab, ")");
      }
    }
    languages.insert(p.language);
    tokens[p.held_out] += ids.size();
    (p.held_out ? out.heldout : out.calibration).sequences.push_back(std::move(ids));
  }
  if (out.calibration.sequences.empty() || out.heldout.sequences.empty()) {
    Fail("the tokenizer gives no ids for the built-in calibration text");
  }
  std::string langs;
  for (const std::string& l : languages) langs += (langs.empty() ? "" : ", ") + l;
  auto describe = [&](const Calibration& c, size_t n, const char* what) {
    return std::to_string(c.sequences.size()) + " passages, " + std::to_string(n) + " ids, of " +
           what + " built-in text (public-domain prose in " + langs +
           ") encoded by the model's tokenizer";
  };
  out.calibration.description = describe(out.calibration, tokens[0], "the");
  out.heldout.description = describe(out.heldout, tokens[1], "the held-out");
  return out;
}

}  // namespace convert
}  // namespace octet
