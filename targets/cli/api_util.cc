#include "cli/api_util.h"

#include <cstdio>
#include <utility>

#include "cli/args.h"

namespace octet {
namespace cli {

api::Model OpenModel(const std::string& path) {
  api::Model model;
  const api::Status st = model.Load(path);
  if (!st.ok()) throw Failure(st.message);
  return model;
}

octet_model_info ModelInfo(const api::Model& model) { return model.info(); }

api::Session OpenSession(const api::Model& model, const octet_session_options& options) {
  api::Session session;
  const api::Status st = session.Create(model, options);
  if (!st.ok()) {
    throw Failure("cannot create a session for batch " + std::to_string(options.max_batch) +
                  ", sequence length " + std::to_string(options.max_seq) + ": " + StatusText(st));
  }
  return session;
}

std::string StatusText(const api::Status& status) {
  return status.message + " (" + octet_status_name(status.code) + ")";
}

void Check(const api::Status& status, const std::string& what) {
  if (!status.ok()) throw Failure(what + " failed: " + StatusText(status));
}

std::string StructureName(int32_t structure) {
  switch (structure) {
    case OCTET_ENCODER_ONLY:
      return "encoder-only";
    case OCTET_DECODER_ONLY:
      return "decoder-only";
    case OCTET_ENCODER_DECODER:
      return "encoder-decoder";
  }
  return "unknown(" + std::to_string(static_cast<int>(structure)) + ")";
}

size_t ValidUtf8Prefix(const char* s, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  size_t i = 0;
  while (i < n) {
    const unsigned char b = p[i];
    size_t len = 0;
    uint32_t cp = 0;
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
      cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      cp = b & 0x0F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      cp = b & 0x07;
    } else {
      return i;
    }
    if (n - i < len) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += len;
  }
  return n;
}

}  // namespace cli
}  // namespace octet
