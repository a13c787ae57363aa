#include "cli/api_util.h"

#include <cstdio>
#include <utility>

#include "cli/args.h"
#include "core/utf8.h"

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

size_t ValidUtf8Prefix(const char* s, size_t n) { return Utf8ValidPrefix(s, n); }

}  // namespace cli
}  // namespace octet
