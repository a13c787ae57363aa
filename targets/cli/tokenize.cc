// octet tokenize / octet detokenize (docs/design.md §5): Hugging Face tokenizers'
// encode(text, add_special_tokens) and decode(ids, skip_special_tokens) with
// the tokenizer compiled into the model file.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli/api_util.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/tool_main.h"

namespace octet {
namespace cli {
namespace {

constexpr char kTokenizeUsage[] =
    R"(Usage: octet tokenize MODEL [--no-special] (--text TEXT [--text ...] | --file FILE)

Encodes each text as Hugging Face tokenizers' encode(text, add_special_tokens=True)
does with the checkpoint's tokenizer, and prints one line per text: the ids,
comma-separated.

Options:
  --text TEXT    a text to encode (repeat for more)
  --file FILE    encode each line of FILE (split on "\n" only; a final newline
                 ends the last line)
  --no-special   add_special_tokens=False: no BOS/CLS/SEP from the template
)";

constexpr char kDetokenizeUsage[] =
    R"(Usage: octet detokenize MODEL [--keep-special] --ids 1,2,3 [--ids ...]

Decodes each id list as Hugging Face tokenizers' decode(ids, skip_special_tokens=True)
does and prints one line per list.

Options:
  --ids IDS        comma-separated token ids (repeat for more lists)
  --keep-special   skip_special_tokens=False: special tokens stay in the text
)";

void Bind(const api::Model& model, const std::string& path, api::Tokenizer* tokenizer) {
  if (model.info().has_tokenizer == 0) {
    throw Failure(path + " has no compiled tokenizer (convert it from a checkpoint with a tokenizer.json)");
  }
  const api::Status st = tokenizer->Create(model);
  if (!st.ok()) throw Failure("tokenizer: " + StatusText(st));
}

void WriteAll(const char* data, size_t n) {
  if (n > 0 && std::fwrite(data, 1, n, stdout) != n) throw Failure("cannot write to stdout");
}

}  // namespace

int TokenizeCommand(const std::vector<std::string>& args) {
  const ParsedArgs parsed =
      ParseArgs("octet tokenize",
                {RepeatedOption("--text"), ValueOption("--file"), SwitchOption("--no-special")},
                args, 1, 1, "MODEL");
  if (parsed.help) {
    std::fputs(kTokenizeUsage, stdout);
    return kExitOk;
  }
  const bool has_text = parsed.Has("--text"), has_file = parsed.Has("--file");
  if (has_text == has_file) throw UsageError("octet tokenize: give --text or --file (one of them)");
  std::vector<std::string> texts;
  if (has_text) {
    texts = parsed.Values("--text");
  } else {
    const std::string& path = parsed.Value("--file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Failure("cannot read " + path);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t start = 0;
    while (start < all.size()) {
      size_t end = all.find('\n', start);
      if (end == std::string::npos) end = all.size();
      texts.push_back(all.substr(start, end - start));
      start = end + 1;
    }
  }
  const std::string& path = parsed.positionals[0];
  const api::Model model = OpenModel(path);
  api::Tokenizer tokenizer;
  Bind(model, path, &tokenizer);
  const uint32_t flags = parsed.Switch("--no-special") ? OCTET_ENCODE_NO_SPECIAL : 0u;
  std::vector<int32_t> ids;
  std::string line;
  for (size_t i = 0; i < texts.size(); ++i) {
    const api::Status st = tokenizer.Encode(texts[i], flags, &ids);
    if (!st.ok()) {
      throw Failure((has_file ? "line " : "text ") + std::to_string(i + 1) + ": " + StatusText(st));
    }
    line.clear();
    for (size_t k = 0; k < ids.size(); ++k) {
      if (k > 0) line += ',';
      line += std::to_string(ids[k]);
    }
    line += '\n';
    WriteAll(line.data(), line.size());
  }
  return kExitOk;
}

int DetokenizeCommand(const std::vector<std::string>& args) {
  const ParsedArgs parsed = ParseArgs(
      "octet detokenize", {RepeatedOption("--ids"), SwitchOption("--keep-special")}, args, 1, 1,
      "MODEL");
  if (parsed.help) {
    std::fputs(kDetokenizeUsage, stdout);
    return kExitOk;
  }
  if (!parsed.Has("--ids")) throw UsageError("octet detokenize: give at least one --ids");
  std::vector<std::vector<int32_t>> lists;
  for (const std::string& v : parsed.Values("--ids")) lists.push_back(ParseIdList("--ids", v));
  const std::string& path = parsed.positionals[0];
  const api::Model model = OpenModel(path);
  api::Tokenizer tokenizer;
  Bind(model, path, &tokenizer);
  const uint32_t flags = parsed.Switch("--keep-special") ? OCTET_DECODE_KEEP_SPECIAL : 0u;
  std::string text;
  for (size_t i = 0; i < lists.size(); ++i) {
    const api::Status st = tokenizer.Decode(lists[i], flags, &text);
    if (!st.ok()) throw Failure("--ids " + std::to_string(i + 1) + ": " + StatusText(st));
    WriteAll(text.data(), text.size());
    WriteAll("\n", 1);
  }
  return kExitOk;
}

}  // namespace cli
}  // namespace octet
