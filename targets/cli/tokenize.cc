// octet tokenize / octet detokenize (DESIGN.md §5): Hugging Face tokenizers'
// encode(text, add_special_tokens) and decode(ids, skip_special_tokens) with
// the tokenizer compiled into the model file.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_util.h"
#include "cli/tool_main.h"
#include "text/tokenizer.h"

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

void Bind(const Model& model, const std::string& path, text::Tokenizer* tokenizer) {
  if (model.tokenizer_spec() == nullptr) {
    throw Failure(path + " has no compiled tokenizer (convert it from a checkpoint with a tokenizer.json)");
  }
  const Status st = tokenizer->Init(model.tokenizer_spec());
  if (!st.ok()) throw Failure("tokenizer: " + DescribeStatus(st));
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
  const Model model = LoadModel(path);
  text::Tokenizer tokenizer;
  Bind(model, path, &tokenizer);
  size_t longest = 1;
  for (const std::string& t : texts) longest = std::max(longest, t.size());
  text::TokenizerWorkspace ws;
  Status st = tokenizer.CreateWorkspace(longest, 1, &ws);
  if (!st.ok()) throw Failure("tokenizer: " + DescribeStatus(st));
  std::vector<int32_t> ids(tokenizer.MaxIds(longest));
  text::EncodeOptions options;
  options.add_special_tokens = !parsed.Switch("--no-special");
  std::string line;
  for (size_t i = 0; i < texts.size(); ++i) {
    size_t n = 0;
    st = tokenizer.Encode(texts[i].data(), texts[i].size(), options, ws, ids.data(), ids.size(), &n);
    if (!st.ok()) {
      throw Failure((has_file ? "line " : "text ") + std::to_string(i + 1) + ": " + DescribeStatus(st));
    }
    line.clear();
    for (size_t k = 0; k < n; ++k) {
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
  const Model model = LoadModel(path);
  text::Tokenizer tokenizer;
  Bind(model, path, &tokenizer);
  size_t longest = 1;
  for (const auto& l : lists) longest = std::max(longest, l.size());
  text::TokenizerWorkspace ws;
  Status st = tokenizer.CreateWorkspace(1, longest, &ws);
  if (!st.ok()) throw Failure("tokenizer: " + DescribeStatus(st));
  std::vector<char> out(tokenizer.MaxDecodedBytes(longest));
  const bool skip = !parsed.Switch("--keep-special");
  for (size_t i = 0; i < lists.size(); ++i) {
    size_t n = 0;
    st = tokenizer.Decode(lists[i].data(), lists[i].size(), skip, ws, out.data(), out.size(), &n);
    if (!st.ok()) throw Failure("--ids " + std::to_string(i + 1) + ": " + DescribeStatus(st));
    WriteAll(out.data(), n);
    WriteAll("\n", 1);
  }
  return kExitOk;
}

}  // namespace cli
}  // namespace octet
