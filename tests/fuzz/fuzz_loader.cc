// libFuzzer target for the model loader: any byte string must give a Status or
// a model whose every view is in bounds. Crashes, sanitizer reports and broken
// promises (see loader_harness.h) are findings; save the input under
// tests/fuzz/corpus/ once fixed, so the replay test keeps it fixed.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/loader_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string broken;
  const octet::Status status = octet::testing::LoadUntrusted(data, size, &broken);
  if (!status.ok() && status.message()[0] == '\0') {
    std::fprintf(stderr, "rejected with an empty message (code %d)\n",
                 static_cast<int>(status.code()));
    std::abort();
  }
  if (!broken.empty()) {
    std::fprintf(stderr, "loaded, but %s\n", broken.c_str());
    std::abort();
  }
  return 0;
}
