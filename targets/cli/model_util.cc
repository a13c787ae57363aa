#include "cli/model_util.h"

#include <cstdio>
#include <utility>

#include "cli/args.h"

namespace octet {
namespace cli {

Model LoadModel(const std::string& path) {
  Result<Model> model = Model::Load(path.c_str());
  if (!model.ok()) throw Failure(model.status().message());
  return std::move(model).value();
}

Session CreateSession(const Model& model, const SessionLimits& limits) {
  Result<Session> session = Session::Create(model, limits);
  if (!session.ok()) {
    throw Failure("cannot create a session for batch " + std::to_string(limits.max_batch) +
                  ", sequence length " + std::to_string(limits.max_seq) + ": " +
                  DescribeStatus(session.status()));
  }
  return std::move(session).value();
}

std::string DescribeStatus(const Status& status) {
  return std::string(status.message()) + " (" + StatusCodeName(status.code()) + ")";
}

uint64_t WeightBytes(const Model& model) {
  uint64_t total = 0;
  for (size_t i = 0; i < model.num_tensors(); ++i) total += model.tensor(i).size;
  return total;
}

std::string EnumText(const char* name, int value) {
  if (name == nullptr || name[0] == '\0') return "unknown(" + std::to_string(value) + ")";
  return name;
}

std::string StructureText(fb::Structure structure) {
  switch (structure) {
    case fb::Structure::EncoderOnly:
      return "encoder-only";
    case fb::Structure::DecoderOnly:
      return "decoder-only";
    case fb::Structure::EncoderDecoder:
      return "encoder-decoder";
  }
  return EnumText(nullptr, static_cast<int>(structure));
}

std::string HumanBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[32];
  if (unit == 0) {
    std::snprintf(buffer, sizeof(buffer), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.1f %s", value, kUnits[unit]);
  }
  return buffer;
}

}  // namespace cli
}  // namespace octet
