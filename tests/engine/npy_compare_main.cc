// octet_npy_compare GOT.npy EXPECTED.npy --lengths 5,9 [--rel 1e-5] [--min-cosine 0.998]
//
// Compares two float32 C-order .npy arrays of shape [batch, seq, dim] (or
// [batch, dim], e.g. sentence embeddings: compared as [batch, 1, dim]) over the
// real positions only: positions 0..lengths[b]-1 of sequence b (padded
// positions are 0 in the golden files and anything finite in octet's output).
// Prints max abs error, max abs reference and their ratio, and the lowest
// cosine similarity of a position's vectors; exits 1 when the ratio exceeds
// --rel (default 1e-5; not checked when only --min-cosine is given), when a
// position's cosine is below --min-cosine (int8 vs fp32: docs/design.md §7),
// or when a value is not finite; 2 on a bad command line or unreadable file.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

struct Npy {
  std::vector<uint64_t> shape;
  std::vector<float> data;
};

bool Fail(const std::string& message) {
  std::fprintf(stderr, "octet_npy_compare: %s\n", message.c_str());
  return false;
}

// Reads a version 1.0/2.0 .npy holding little-endian float32 in C order.
bool ReadNpy(const std::string& path, Npy* out) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Fail("cannot open " + path);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    return Fail(path + " is not a .npy file");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    start = 10;
  } else {
    if (bytes.size() < 12) return Fail(path + " is truncated");
    for (int i = 0; i < 4; ++i) header_len |= size_t{static_cast<unsigned char>(bytes[8 + i])} << (8 * i);
    start = 12;
  }
  if (start + header_len > bytes.size()) return Fail(path + " is truncated");
  const std::string header = bytes.substr(start, header_len);
  if (header.find("'<f4'") == std::string::npos) return Fail(path + " is not float32 ('<f4')");
  if (header.find("'fortran_order': False") == std::string::npos) {
    return Fail(path + " is not in C order");
  }
  const size_t open = header.find('(', header.find("'shape'"));
  const size_t close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos) return Fail(path + ": no shape");
  uint64_t numel = 1;
  for (size_t i = open + 1; i < close;) {
    while (i < close && (header[i] == ' ' || header[i] == ',')) ++i;
    if (i >= close) break;
    char* end = nullptr;
    const uint64_t d = std::strtoull(header.c_str() + i, &end, 10);
    out->shape.push_back(d);
    numel *= d;
    i = static_cast<size_t>(end - header.c_str());
  }
  const size_t data_start = start + header_len;
  if (bytes.size() - data_start != numel * sizeof(float)) {
    return Fail(path + ": data size does not match the shape");
  }
  out->data.resize(numel);
  if (numel != 0) std::memcpy(out->data.data(), bytes.data() + data_start, numel * sizeof(float));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: octet_npy_compare GOT.npy EXPECTED.npy --lengths L0,L1,... "
                         "[--rel 1e-5]\n");
    return 2;
  }
  std::vector<uint64_t> lengths;
  double rel = 1e-5, min_cosine = -2.0;
  bool check_rel = true, rel_given = false;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rel") {
      rel = std::strtod(argv[i + 1], nullptr);
      rel_given = true;
    } else if (flag == "--min-cosine") {
      min_cosine = std::strtod(argv[i + 1], nullptr);
      check_rel = rel_given;
    } else if (flag == "--lengths") {
      for (const char* p = argv[i + 1]; *p != '\0';) {
        char* end = nullptr;
        lengths.push_back(std::strtoull(p, &end, 10));
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p != '\0') break;
      }
    } else {
      std::fprintf(stderr, "octet_npy_compare: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  Npy got, expected;
  if (!ReadNpy(argv[1], &got) || !ReadNpy(argv[2], &expected)) return 2;
  for (Npy* a : {&got, &expected}) {
    if (a->shape.size() == 2) a->shape.insert(a->shape.begin() + 1, 1);
  }
  if (got.shape != expected.shape || got.shape.size() != 3) {
    std::fprintf(stderr, "octet_npy_compare: shapes differ or are not [batch, seq, dim]\n");
    return 1;
  }
  const uint64_t batch = got.shape[0], seq = got.shape[1], dim = got.shape[2];
  if (lengths.size() != batch) {
    std::fprintf(stderr, "octet_npy_compare: --lengths needs %llu values\n",
                 static_cast<unsigned long long>(batch));
    return 2;
  }
  double max_err = 0.0, max_ref = 0.0, worst_cosine = 1.0;
  bool finite = true;
  for (uint64_t b = 0; b < batch; ++b) {
    if (lengths[b] > seq) {
      std::fprintf(stderr, "octet_npy_compare: length %llu exceeds seq %llu\n",
                   static_cast<unsigned long long>(lengths[b]),
                   static_cast<unsigned long long>(seq));
      return 2;
    }
    for (uint64_t s = 0; s < lengths[b]; ++s) {
      double dot = 0, ng = 0, ne = 0;
      for (uint64_t i = (b * seq + s) * dim; i < (b * seq + s + 1) * dim; ++i) {
        const double g = got.data[i], e = expected.data[i];
        if (!std::isfinite(g)) finite = false;
        max_err = std::fmax(max_err, std::fabs(g - e));
        max_ref = std::fmax(max_ref, std::fabs(e));
        dot += g * e;
        ng += g * g;
        ne += e * e;
      }
      const double cosine = ng > 0 && ne > 0 ? dot / std::sqrt(ng * ne) : (ng == ne ? 1.0 : 0.0);
      worst_cosine = std::fmin(worst_cosine, cosine);
    }
  }
  const double ratio = max_ref > 0 ? max_err / max_ref : max_err;
  std::printf("max abs error %.6g, max abs reference %.6g, relative %.3e", max_err, max_ref,
              ratio);
  if (check_rel) std::printf(" (limit %.1e)", rel);
  std::printf(", lowest cosine per position %.6f", worst_cosine);
  if (min_cosine > -2.0) std::printf(" (limit %.4f)", min_cosine);
  std::printf("%s\n", finite ? "" : ", NOT FINITE");
  const bool ok = finite && (!check_rel || ratio <= rel) && worst_cosine >= min_cosine;
  return ok ? 0 : 1;
}
