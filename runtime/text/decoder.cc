// Decode: ids -> token strings (added tokens by their content, special ones
// dropped when asked) -> the decoder chain (tokenizers' decoders/*.rs
// decode_chain, in order) -> the strings joined. No decoder: joined with " ".
#include <algorithm>
#include <cstring>

#include "text/tokenizer_impl.h"
#include "core/utf8.h"

namespace octet {
namespace text {
namespace {

const char* Chars(const uint8_t* s) { return reinterpret_cast<const char*>(s); }
size_t Str(const flatbuffers::String* s) { return s ? s->size() : 0; }

// One list of token strings: spans over a buffer.
struct Tokens {
  uint8_t* buf;
  Span* spans;
  size_t n;
  size_t used;  // bytes of buf in use
};

// Appends s[0, n) to out (never past cap); returns the new size either way.
inline size_t Put(uint8_t* out, size_t o, size_t cap, const void* s, size_t n) {
  if (o + n <= cap) std::memcpy(out + o, s, n);
  return o + n;
}

constexpr uint8_t kFffd[3] = {0xEF, 0xBF, 0xBD};

// Rust's String::from_utf8_lossy: each maximal invalid subpart becomes U+FFFD.
size_t LossyUtf8(const uint8_t* s, size_t n, uint8_t* out, size_t cap) {
  const char* text = reinterpret_cast<const char*>(s);
  size_t o = 0, i = 0;
  while (i < n) {
    const Utf8Char c = Utf8DecodeAt(text, n, i, Utf8Form::kStrict);
    o = c.valid ? Put(out, o, cap, s + i, c.length) : Put(out, o, cap, kFffd, 3);
    i += c.length;
  }
  return o;
}

// "<0xNN>" -> the byte, as the ByteFallback decoder reads it.
bool ByteToken(const uint8_t* t, size_t n, uint8_t* byte) {
  if (n != 6 || t[0] != '<' || t[1] != '0' || t[2] != 'x' || t[5] != '>') return false;
  int v = 0;
  for (int k = 3; k < 5; ++k) {
    const uint8_t c = t[k];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    v = v * 16 + d;
  }
  *byte = static_cast<uint8_t>(v);
  return true;
}

size_t ReplaceAll(const uint8_t* s, size_t n, const uint8_t* p, size_t pn, const uint8_t* c,
                  size_t cn, uint8_t* out, size_t o, size_t cap) {
  if (pn == 0) return Put(out, o, cap, s, n);
  size_t i = 0;
  while (i < n) {
    if (n - i >= pn && s[i] == p[0] && std::memcmp(s + i, p, pn) == 0) {
      o = Put(out, o, cap, c, cn);
      i += pn;
    } else {
      o = Put(out, o, cap, s + i, 1);
      ++i;
    }
  }
  return o;
}

const char* const kCleanups[][2] = {
    {" .", "."},     {" ?", "?"},     {" !", "!"},     {" ,", ","},
    {" ' ", "'"},    {" n't", "n't"}, {" 'm", "'m"},   {" do not", " don't"},
    {" 's", "'s"},   {" 've", "'ve"}, {" 're", "'re"},
};

// Python's str.isspace, which str.strip() strips.
bool IsPythonSpace(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

// transformers' clean_up_tokenization, in place (every rule shortens or keeps).
size_t CleanUp(uint8_t* t, size_t w) {
  for (const auto& rule : kCleanups) {
    const size_t fn = std::strlen(rule[0]), rn = std::strlen(rule[1]);
    size_t r = 0, j = 0;
    while (j < w) {
      if (w - j >= fn && std::memcmp(t + j, rule[0], fn) == 0) {
        std::memcpy(t + r, rule[1], rn);
        r += rn;
        j += fn;
      } else {
        t[r++] = t[j++];
      }
    }
    w = r;
  }
  return w;
}

}  // namespace

// MarianTokenizer's decode: the special tokens split the tokens into runs; each
// run is SentencePiece's DecodePieces (a piece's U+2581 become spaces, the
// run's first piece loses its leading one while nothing has been written,
// control pieces write nothing, pieces the model lacks are kept as they are),
// each special token is followed by a space; then every U+2581 left becomes a
// space and the text is stripped (str.strip).
Status TokenizerImpl::DecodeSentencePiece(const fb::DecoderStep& step, const int32_t* ids,
                                          size_t n, bool skip_special, uint8_t* buf, size_t bcap,
                                          char* out_chars, size_t cap, size_t* n_out) const {
  static const uint8_t kMeta[3] = {0xE2, 0x96, 0x81};
  const auto* kinds = step.piece_kinds()->data();
  size_t o = 0;
  size_t run_start = 0;  // where the current run's text began
  const auto put = [&](const void* p, size_t len) { o = Put(buf, o, bcap, p, len); };
  for (size_t i = 0; i < n; ++i) {
    const int32_t id = ids[i];
    if (skip_special && special[static_cast<size_t>(id)]) continue;
    size_t tn;
    const uint8_t* t = Token(id, &tn);
    if (special[static_cast<size_t>(id)]) {
      put(t, tn);
      put(" ", 1);
      run_start = o;
      continue;
    }
    switch (kinds[id]) {
      case 1: break;  // control: invisible
      case 2: put(t, tn); break;
      case 3:
        if (step.unk_surface()) put(step.unk_surface()->data(), step.unk_surface()->size());
        break;
      default: {
        size_t j = 0;
        if (o == run_start && tn >= 3 && std::memcmp(t, kMeta, 3) == 0) j = 3;
        for (; j < tn; ++j) {
          if (tn - j >= 3 && std::memcmp(t + j, kMeta, 3) == 0) {
            put(" ", 1);
            j += 2;
          } else {
            put(t + j, 1);
          }
        }
      }
    }
  }
  if (o > bcap) return Status(StatusCode::kInternal, "tokenizer: decode outgrew the workspace");
  // Verbatim pieces may still hold U+2581.
  size_t w = 0;
  for (size_t j = 0; j < o; ++j) {
    if (o - j >= 3 && std::memcmp(buf + j, kMeta, 3) == 0) {
      buf[w++] = ' ';
      j += 2;
    } else {
      buf[w++] = buf[j];
    }
  }
  size_t b = 0, e = w;
  while (b < e) {
    size_t k = b;
    if (!IsPythonSpace(Utf8Decode(Chars(buf), &k))) break;
    b = k;
  }
  while (e > b) {
    size_t p = e - 1;
    while (p > b && Utf8IsContinuation(buf[p])) --p;
    size_t k = p;
    if (!IsPythonSpace(Utf8Decode(Chars(buf), &k))) break;
    e = p;
  }
  size_t len = e - b;
  std::memmove(buf, buf + b, len);
  if (spec->clean_up_tokenization_spaces()) len = CleanUp(buf, len);
  if (len > cap) return Status(StatusCode::kOutOfMemory, "decode: the output buffer is too small");
  if (len) std::memcpy(out_chars, buf, len);
  *n_out = len;
  return Status::Ok();
}

Status InitDecoders(TokenizerImpl& t) {
  t.decoders.Clear();
  t.decoder_growth = 2;  // ByteLevel: a 2-byte character may become U+FFFD
  if (t.spec->decoders() == nullptr) return Status::Ok();
  for (const fb::DecoderStep* step : *t.spec->decoders()) {
    DecoderOp op;
    op.step = step;
    if (step->kind() == fb::DecoderKind::SentencePiece) {
      // A special token gains a space; the unknown piece's surface replaces a token of >= 1 byte.
      const size_t unk = step->unk_surface() ? step->unk_surface()->size() : 0;
      t.decoder_growth = std::max<size_t>(t.decoder_growth, std::max<size_t>(2, unk));
    }
    if (step->kind() == fb::DecoderKind::Replace) {
      const size_t pn = Str(step->pattern()), cn = Str(step->content());
      const size_t g = pn == 0 ? 1 : (cn + pn - 1) / pn + 1;
      t.decoder_growth = Growth{t.decoder_growth, 1, 0}.Apply(g);
    }
    if (!t.decoders.Push(std::move(op))) return TokenizerOutOfMemory("decoders");
  }
  return Status::Ok();
}

namespace {

// What a decoder step writes: tokens appended to `to`, o bytes of its buffer so far.
struct StepOutput {
  Tokens* to;
  size_t o = 0;
  void Push(size_t begin) {
    to->spans[to->n++] = Span{static_cast<uint32_t>(begin), static_cast<uint32_t>(o)};
  }
};

// ByteLevel: the byte characters back to bytes, then one lossy UTF-8 string.
Status DecodeByteLevel(const fb::DecoderStep& step, Tokens& cur, StepOutput& sink, size_t bcap) {
  const ByteLevelMap& bl = GetByteLevelMap();
  // All tokens' bytes, then one lossy UTF-8 string; the raw bytes go to
  // the other buffer's tail half first.
  uint8_t* raw = cur.buf + cur.used;  // room after the tokens (LayoutFor: 2x)
  size_t r = 0;
  for (size_t i = 0; i < cur.n; ++i) {
    const uint8_t* t = cur.buf + cur.spans[i].begin;
    const size_t tn = cur.spans[i].end - cur.spans[i].begin;
    // A token with any character outside the byte alphabet passes as it is.
    bool mapped = true;
    size_t r0 = r;
    for (size_t k = 0; k < tn;) {
      const uint32_t c = Utf8Decode(Chars(t), &k);
      if (c >= 0x144 || bl.byte_of[c] < 0) {
        mapped = false;
        break;
      }
      if (cur.used + r < bcap) raw[r] = static_cast<uint8_t>(bl.byte_of[c]);
      ++r;
    }
    if (!mapped) {
      r = r0;
      for (size_t k = 0; k < tn; ++k) {
        if (cur.used + r < bcap) raw[r] = t[k];
        ++r;
      }
    }
  }
  if (cur.used + r > bcap) return Status(StatusCode::kInternal, "tokenizer: decode outgrew the workspace");
  sink.o = LossyUtf8(raw, r, sink.to->buf, bcap);
  sink.Push(0);
  return Status::Ok();
}

// ByteFallback: runs of <0xNN> tokens become their bytes.
Status DecodeByteFallback(const fb::DecoderStep& step, Tokens& cur, StepOutput& sink, size_t bcap) {
  // A run of <0xNN> tokens becomes its bytes when they are valid UTF-8,
  // else one U+FFFD per byte. The bytes gather in place in the output.
  size_t np = 0, run_begin = 0;
  const auto flush = [&]() {
    if (np == 0) return;
    if (sink.o > bcap || !Utf8IsValid(Chars(sink.to->buf + run_begin), np)) {
      sink.o = run_begin;
      for (size_t k = 0; k < np; ++k) sink.o = Put(sink.to->buf, sink.o, bcap, kFffd, 3);
    }
    sink.Push(run_begin);
    np = 0;
  };
  for (size_t i = 0; i < cur.n; ++i) {
    const uint8_t* t = cur.buf + cur.spans[i].begin;
    const size_t tn = cur.spans[i].end - cur.spans[i].begin;
    uint8_t byte;
    if (ByteToken(t, tn, &byte)) {
      if (np == 0) run_begin = sink.o;
      sink.o = Put(sink.to->buf, sink.o, bcap, &byte, 1);
      ++np;
      continue;
    }
    flush();
    const size_t begin = sink.o;
    sink.o = Put(sink.to->buf, sink.o, bcap, t, tn);
    sink.Push(begin);
  }
  flush();
  return Status::Ok();
}

// Fuse: all tokens into one.
Status DecodeFuse(const fb::DecoderStep& step, Tokens& cur, StepOutput& sink, size_t bcap) {
  for (size_t i = 0; i < cur.n; ++i) {
    sink.o = Put(sink.to->buf, sink.o, bcap, cur.buf + cur.spans[i].begin, cur.spans[i].end - cur.spans[i].begin);
  }
  sink.Push(0);
  return Status::Ok();
}

// Strip: up to start / stop copies of the content character off each token's ends.
Status DecodeStrip(const fb::DecoderStep& step, Tokens& cur, StepOutput& sink, size_t bcap) {
  size_t k = 0;
  const uint32_t content = Str(step.content()) ? Utf8Decode(step.content()->data(), &k) : 0;
  for (size_t i = 0; i < cur.n; ++i) {
    const uint8_t* t = cur.buf + cur.spans[i].begin;
    const size_t tn = cur.spans[i].end - cur.spans[i].begin;
    size_t b0 = 0, e0 = tn;
    for (uint32_t s = 0; s < step.start() && b0 < tn; ++s) {
      size_t j = b0;
      if (Utf8Decode(Chars(t), &j) != content) break;
      b0 = j;
    }
    for (uint32_t s = 0; s < step.stop() && e0 > b0; ++s) {
      size_t p = e0 - 1;
      while (p > b0 && Utf8IsContinuation(t[p])) --p;
      size_t j = p;
      if (Utf8Decode(Chars(t), &j) != content) break;
      e0 = p;
    }
    const size_t begin = sink.o;
    sink.o = Put(sink.to->buf, sink.o, bcap, t + b0, e0 - b0);
    sink.Push(begin);
  }
  return Status::Ok();
}

// Replace: every occurrence of the pattern by the content.
Status DecodeReplace(const fb::DecoderStep& step, Tokens& cur, StepOutput& sink, size_t bcap) {
  const auto* p = reinterpret_cast<const uint8_t*>(step.pattern() ? step.pattern()->data() : "");
  const auto* c = reinterpret_cast<const uint8_t*>(step.content() ? step.content()->data() : "");
  for (size_t i = 0; i < cur.n; ++i) {
    const size_t begin = sink.o;
    sink.o = ReplaceAll(cur.buf + cur.spans[i].begin, cur.spans[i].end - cur.spans[i].begin, p,
                   Str(step.pattern()), c, Str(step.content()), sink.to->buf, sink.o, bcap);
    sink.Push(begin);
  }
  return Status::Ok();
}

// Metaspace: the replacement character back to spaces.
Status DecodeMetaspace(const fb::DecoderStep& step, Tokens& cur, StepOutput& sink, size_t bcap) {
  size_t k = 0;
  const uint32_t rep = Str(step.replacement()) ? Utf8Decode(step.replacement()->data(), &k) : 0x2581;
  for (size_t i = 0; i < cur.n; ++i) {
    const uint8_t* t = cur.buf + cur.spans[i].begin;
    const size_t tn = cur.spans[i].end - cur.spans[i].begin;
    const size_t begin = sink.o;
    for (size_t j = 0; j < tn;) {
      const size_t at = j;
      const uint32_t ch = Utf8Decode(Chars(t), &j);
      if (ch == rep) {
        if (i == 0 && step.prepend_scheme() != fb::PrependScheme::Never) continue;
        sink.o = Put(sink.to->buf, sink.o, bcap, " ", 1);
      } else {
        sink.o = Put(sink.to->buf, sink.o, bcap, t + at, j - at);
      }
    }
    sink.Push(begin);
  }
  return Status::Ok();
}

// WordPiece: continuation prefixes off, spaces between words, optional cleanup.
Status DecodeWordPiece(const fb::DecoderStep& step, Tokens& cur, StepOutput& sink, size_t bcap) {
  const auto* pre = reinterpret_cast<const uint8_t*>(step.prefix() ? step.prefix()->data() : "");
  const size_t pn = Str(step.prefix());
  uint8_t* tmp = cur.buf + cur.used;  // room after the tokens for one cleaned token
  for (size_t i = 0; i < cur.n; ++i) {
    const uint8_t* t = cur.buf + cur.spans[i].begin;
    size_t tn = cur.spans[i].end - cur.spans[i].begin;
    size_t w = 0;
    if (cur.used + tn + 1 > bcap) return Status(StatusCode::kInternal, "tokenizer: decode outgrew the workspace");
    if (i != 0) {
      if (tn >= pn && std::memcmp(t, pre, pn) == 0) {
        t += pn;
        tn -= pn;
      } else {
        tmp[w++] = ' ';
      }
    }
    std::memcpy(tmp + w, t, tn);
    w += tn;
    if (step.cleanup()) {
      for (const auto& rule : kCleanups) {
        const size_t fn = std::strlen(rule[0]), rn = std::strlen(rule[1]);
        size_t r = 0, j = 0;
        while (j < w) {
          if (w - j >= fn && std::memcmp(tmp + j, rule[0], fn) == 0) {
            std::memcpy(tmp + r, rule[1], rn);  // rn <= fn: in place
            r += rn;
            j += fn;
          } else {
            tmp[r++] = tmp[j++];
          }
        }
        w = r;
      }
    }
    const size_t begin = sink.o;
    sink.o = Put(sink.to->buf, sink.o, bcap, tmp, w);
    sink.Push(begin);
  }
  return Status::Ok();
}

// BpeSuffix: the end-of-word suffix becomes a space (none after the last token).
Status DecodeBpeSuffix(const fb::DecoderStep& step, Tokens& cur, StepOutput& sink, size_t bcap) {
  const auto* suf = reinterpret_cast<const uint8_t*>(step.prefix() ? step.prefix()->data() : "");
  for (size_t i = 0; i < cur.n; ++i) {
    const size_t begin = sink.o;
    const char* with = i + 1 == cur.n ? "" : " ";
    sink.o = ReplaceAll(cur.buf + cur.spans[i].begin, cur.spans[i].end - cur.spans[i].begin, suf,
                   Str(step.prefix()), reinterpret_cast<const uint8_t*>(with), std::strlen(with),
                   sink.to->buf, sink.o, bcap);
    sink.Push(begin);
  }
  return Status::Ok();
}

}  // namespace

Status TokenizerImpl::DecodeIds(const int32_t* ids, size_t n, bool skip_special,
                                TokenizerWorkspace& ws, char* out_chars, size_t cap,
                                size_t* n_out) const {
  if (n > ws.max_decode_ids()) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "%zu ids to decode; the tokenizer workspace takes %zu", n,
                         ws.max_decode_ids());
  }
  const Layout l = LayoutFor(ws.max_text_bytes(), ws.max_decode_ids());
  uint8_t* base = ws.memory_.get();
  Tokens a{base + l.off_dec_a, reinterpret_cast<Span*>(base + l.off_dec_spans_a), 0, 0};
  Tokens b{base + l.off_dec_b, reinterpret_cast<Span*>(base + l.off_dec_spans_b), 0, 0};
  const size_t bcap = l.dec_bytes;
  for (size_t i = 0; i < n; ++i) {
    const int32_t id = ids[i];
    if (id < 0 || static_cast<uint32_t>(id) >= vocab_size) {
      return Status::Error(StatusCode::kInvalidArgument, "token id %d is outside the vocabulary (%u)",
                           id, vocab_size);
    }
    if (skip_special && special[static_cast<size_t>(id)]) continue;
    size_t tn;
    const uint8_t* t = Token(id, &tn);
    const uint32_t begin = static_cast<uint32_t>(a.used);
    a.used = Put(a.buf, a.used, bcap, t, tn);
    a.spans[a.n++] = Span{begin, static_cast<uint32_t>(a.used)};
  }
  if (a.used > bcap) return Status(StatusCode::kInternal, "tokenizer: decode outgrew the workspace");
  if (!decoders.empty() && decoders[0].step->kind() == fb::DecoderKind::SentencePiece) {
    return DecodeSentencePiece(*decoders[0].step, ids, n, skip_special, b.buf, bcap, out_chars, cap,
                               n_out);
  }
  auto* out = reinterpret_cast<uint8_t*>(out_chars);

  if (decoders.empty()) {
    size_t o = 0;
    for (size_t i = 0; i < a.n; ++i) {
      if (i > 0) o = Put(out, o, cap, " ", 1);
      o = Put(out, o, cap, a.buf + a.spans[i].begin, a.spans[i].end - a.spans[i].begin);
    }
    if (o > cap) return Status(StatusCode::kOutOfMemory, "decode: the output buffer is too small");
    *n_out = o;
    return Status::Ok();
  }

  Tokens* cur = &a;
  Tokens* nxt = &b;
  for (const DecoderOp& op : decoders) {
    const fb::DecoderStep& step = *op.step;
    nxt->n = 0;
    nxt->used = 0;
    StepOutput sink{nxt};
    Status st;
    switch (step.kind()) {
      case fb::DecoderKind::ByteLevel: st = DecodeByteLevel(step, *cur, sink, bcap); break;
      case fb::DecoderKind::ByteFallback: st = DecodeByteFallback(step, *cur, sink, bcap); break;
      case fb::DecoderKind::Fuse: st = DecodeFuse(step, *cur, sink, bcap); break;
      case fb::DecoderKind::Strip: st = DecodeStrip(step, *cur, sink, bcap); break;
      case fb::DecoderKind::Replace: st = DecodeReplace(step, *cur, sink, bcap); break;
      case fb::DecoderKind::Metaspace: st = DecodeMetaspace(step, *cur, sink, bcap); break;
      case fb::DecoderKind::WordPiece: st = DecodeWordPiece(step, *cur, sink, bcap); break;
      case fb::DecoderKind::BpeSuffix: st = DecodeBpeSuffix(step, *cur, sink, bcap); break;
      default: return Status(StatusCode::kInternal, "decoder kind");
    }
    OCTET_RETURN_IF_ERROR(st);
    if (sink.o > bcap) return Status(StatusCode::kInternal, "tokenizer: decode outgrew the workspace");
    nxt->used = sink.o;
    Tokens* t = cur;
    cur = nxt;
    nxt = t;
  }
  size_t o = 0;
  for (size_t i = 0; i < cur->n; ++i) {
    o = Put(out, o, cap, cur->buf + cur->spans[i].begin, cur->spans[i].end - cur->spans[i].begin);
  }
  if (o > cap) return Status(StatusCode::kOutOfMemory, "decode: the output buffer is too small");
  *n_out = o;
  return Status::Ok();
}

}  // namespace text
}  // namespace octet
