/* Text: tokenizers, streaming decode, generation with text and chat templates,
 * on models with real tokenizers (the c_api_text_models fixture, host builds
 * with the Hugging Face importer; tests/c_api/make_text_models.cmake):
 *   llama2_chat.octet  a random Llama with Llama 2's tokenizer (SentencePiece
 *                      BPE, byte fallback) and Qwen2.5's chat template
 *   austen.octet       models/austen (byte-level BPE), no chat template
 *   t5_text.octet      a random T5 with the trained T5 Unigram tokenizer and
 *                      Mistral v0.1's chat template (it raises on a bad turn order)
 *   cli_unicode.txt    `octet chat-template llama2_chat.octet --messages
 *                      tests/text/chat_templates/messages/unicode.json`
 * Known ids and texts are Hugging Face tokenizers' (tests/tokenizer/goldens/,
 * the line named), chat renders jinja2's (tests/text/chat_templates/goldens/). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>

#include "harness.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Encode and decode against Hugging Face's ids ------------------------------------- */

/* encode(text, flags) == want, with the exact-size retry of a short buffer. */
static void expect_ids(octet_tokenizer* tok, const char* text, uint32_t flags, const int32_t* want,
                       size_t n, const char* what) {
  int32_t ids[128];
  size_t got = 0;
  REQUIRE(n < N(ids));
  EXPECT_OK(octet_tokenizer_encode(tok, text, strlen(text), flags, ids, N(ids), &got));
  if (got != n || memcmp(ids, want, n * sizeof(int32_t)) != 0) {
    size_t i;
    fprintf(stderr, "%s: encode gave", what);
    for (i = 0; i < got; ++i) fprintf(stderr, " %d", ids[i]);
    fprintf(stderr, "\n");
    ++g_failures;
  }
  /* A buffer one short: the count needed, then a retry with it. */
  got = 0;
  EXPECT_FAIL(octet_tokenizer_encode(tok, text, strlen(text), flags, ids, n - 1, &got),
              OCTET_BUFFER_TOO_SMALL, "ids");
  EXPECT(got == n);
  got = 0;
  EXPECT_FAIL(octet_tokenizer_encode(tok, text, strlen(text), flags, NULL, 0, &got),
              OCTET_BUFFER_TOO_SMALL, "ids");
  EXPECT(got == n);
  memset(ids, 0, sizeof(ids));
  EXPECT_OK(octet_tokenizer_encode(tok, text, strlen(text), flags, ids, got, &got));
  EXPECT(got == n && memcmp(ids, want, n * sizeof(int32_t)) == 0);
}

/* decode(ids, flags) == want, with the exact-size retry. */
static void expect_text(octet_tokenizer* tok, const int32_t* ids, size_t n, uint32_t flags,
                        const char* want, const char* what) {
  char text[512];
  size_t len = 0, want_len = strlen(want);
  EXPECT_OK(octet_tokenizer_decode(tok, ids, n, flags, text, sizeof(text), &len));
  if (len != want_len || memcmp(text, want, len) != 0) {
    fprintf(stderr, "%s: decode gave '%.*s'\n", what, (int)len, text);
    ++g_failures;
  }
  if (want_len == 0) return;
  len = 0;
  EXPECT_FAIL(octet_tokenizer_decode(tok, ids, n, flags, text, want_len - 1, &len),
              OCTET_BUFFER_TOO_SMALL, "bytes");
  EXPECT(len == want_len);
  len = 0;
  EXPECT_FAIL(octet_tokenizer_decode(tok, ids, n, flags, NULL, 0, &len), OCTET_BUFFER_TOO_SMALL,
              "bytes");
  EXPECT(len == want_len);
  memset(text, 0, sizeof(text));
  EXPECT_OK(octet_tokenizer_decode(tok, ids, n, flags, text, len, &len));
  EXPECT(len == want_len && memcmp(text, want, len) == 0);
}

static void check_llama2_tokenizer(const octet_model* model) {
  /* tests/tokenizer/goldens/llama2.jsonl line 203: '<s>Hello</s>' */
  static const int32_t special[] = {1, 1, 15043, 2};
  static const int32_t special_none[] = {1, 15043, 2};
  static const int32_t special_split[] = {529, 29879, 29958, 10994, 829, 29879, 29958};
  /* line 54: 'I love 😀 and 🍕!' (the emoji in byte-fallback tokens) */
  static const int32_t emoji[] = {1,   306,   5360, 29871, 243, 162, 155,  131,
                                  322, 29871, 243,  162,   144, 152, 29991};
  /* line 20: '我爱北京天安门。' (爱 in three byte tokens) */
  static const int32_t cjk[] = {1,     29871, 30672, 234,   139,   180,
                                30662, 30675, 30408, 30670, 31649, 30267};
  octet_tokenizer* tok = NULL;
  octet_special_token st;
  const char* bytes = NULL;
  size_t len = 0, n = 0;
  int32_t ids[8];

  REQUIRE_OK(octet_tokenizer_create(model, &tok));
  EXPECT(octet_tokenizer_vocab_size(tok) == 32000);
  expect_ids(tok, "<s>Hello</s>", 0, special, N(special), "llama2 specials");
  expect_ids(tok, "<s>Hello</s>", OCTET_ENCODE_NO_SPECIAL, special_none, N(special_none),
             "llama2 no special");
  expect_ids(tok, "<s>Hello</s>", OCTET_ENCODE_NO_SPECIAL | OCTET_ENCODE_SPLIT_SPECIAL,
             special_split, N(special_split), "llama2 split special");
  expect_ids(tok, "I love \xF0\x9F\x98\x80 and \xF0\x9F\x8D\x95!", 0, emoji, N(emoji),
             "llama2 emoji");
  expect_ids(tok, "我爱北京天安门。", 0, cjk, N(cjk), "llama2 cjk");
  expect_text(tok, special, N(special), 0, "Hello", "llama2 decode");
  expect_text(tok, special, N(special), OCTET_DECODE_KEEP_SPECIAL, "<s><s> Hello</s>",
              "llama2 decode, keep special");
  expect_text(tok, emoji, N(emoji), 0, "I love \xF0\x9F\x98\x80 and \xF0\x9F\x8D\x95!",
              "llama2 decode emoji");
  expect_text(tok, cjk, N(cjk), 0, "我爱北京天安门。", "llama2 decode cjk");
  expect_text(tok, NULL, 0, 0, "", "nothing");
  /* The empty text: the template's BOS alone, or nothing. */
  EXPECT_OK(octet_tokenizer_encode(tok, NULL, 0, 0, ids, N(ids), &n));
  EXPECT(n == 1 && ids[0] == 1);
  EXPECT_OK(octet_tokenizer_encode(tok, "", 0, OCTET_ENCODE_NO_SPECIAL, ids, N(ids), &n));
  EXPECT(n == 0);

  /* Errors. */
  EXPECT_FAIL(octet_tokenizer_encode(NULL, "a", 1, 0, ids, 8, &n), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_tokenizer_encode(tok, "a", 1, 0, ids, 8, NULL), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_tokenizer_encode(tok, NULL, 1, 0, ids, 8, &n), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_tokenizer_encode(tok, "a", 1, 0, NULL, 8, &n), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_tokenizer_encode(tok, "a", 1, 4, ids, 8, &n), OCTET_INVALID_ARGUMENT, "flags");
  EXPECT_FAIL(octet_tokenizer_encode(tok, "ab\xC3(", 4, 0, ids, 8, &n), OCTET_INVALID_ARGUMENT,
              "2");
  EXPECT_FAIL(octet_tokenizer_decode(NULL, emoji, 2, 0, NULL, 0, &len), OCTET_INVALID_ARGUMENT,
              "null");
  EXPECT_FAIL(octet_tokenizer_decode(tok, emoji, 2, 0, NULL, 0, NULL), OCTET_INVALID_ARGUMENT,
              "null");
  EXPECT_FAIL(octet_tokenizer_decode(tok, NULL, 2, 0, NULL, 0, &len), OCTET_INVALID_ARGUMENT,
              "null");
  EXPECT_FAIL(octet_tokenizer_decode(tok, emoji, 2, 0, NULL, 8, &len), OCTET_INVALID_ARGUMENT,
              "null");
  EXPECT_FAIL(octet_tokenizer_decode(tok, emoji, 2, 2, NULL, 0, &len), OCTET_INVALID_ARGUMENT,
              "flags");
  ids[0] = 32000;
  EXPECT_FAIL(octet_tokenizer_decode(tok, ids, 1, 0, NULL, 0, &len), OCTET_INVALID_ARGUMENT,
              "32000");
  ids[0] = -1;
  EXPECT_FAIL(octet_tokenizer_decode(tok, ids, 1, 0, NULL, 0, &len), OCTET_INVALID_ARGUMENT, "-1");

  /* Token strings as the vocabulary spells them. */
  EXPECT_OK(octet_tokenizer_token(tok, 1, &bytes, &len));
  EXPECT(len == 3 && memcmp(bytes, "<s>", 3) == 0);
  EXPECT_OK(octet_tokenizer_token(tok, 15043, &bytes, &len));
  EXPECT(len == 8 && memcmp(bytes, "\xE2\x96\x81Hello", 8) == 0);
  EXPECT_OK(octet_tokenizer_token(tok, 243, &bytes, &len));
  EXPECT(len == 6 && memcmp(bytes, "<0xF0>", 6) == 0);
  EXPECT_FAIL(octet_tokenizer_token(tok, 32000, &bytes, &len), OCTET_INVALID_ARGUMENT,
              "vocabulary");
  EXPECT_FAIL(octet_tokenizer_token(tok, -1, &bytes, &len), OCTET_INVALID_ARGUMENT, "vocabulary");
  EXPECT_FAIL(octet_tokenizer_token(NULL, 1, &bytes, &len), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_tokenizer_token(tok, 1, NULL, &len), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_tokenizer_token(tok, 1, &bytes, NULL), OCTET_INVALID_ARGUMENT, "null");

  /* Special tokens: <unk>, <s>, </s>. */
  EXPECT(octet_tokenizer_special_count(tok) == 3);
  EXPECT(octet_tokenizer_special_count(NULL) == 0);
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  EXPECT_OK(octet_tokenizer_special(tok, 0, &st));
  EXPECT(st.id == 0 && strcmp(st.content, "<unk>") == 0 && st.content_len == 5);
  EXPECT_OK(octet_tokenizer_special(tok, 2, &st));
  EXPECT(st.id == 2 && strcmp(st.content, "</s>") == 0 && st.content_len == 4 && st.lstrip == 0 &&
         st.rstrip == 0);
  EXPECT_FAIL(octet_tokenizer_special(tok, 3, &st), OCTET_INVALID_ARGUMENT, "3");
  EXPECT_FAIL(octet_tokenizer_special(NULL, 0, &st), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_tokenizer_special(tok, 0, NULL), OCTET_INVALID_ARGUMENT, "null");
  st.struct_size = 0;
  EXPECT_FAIL(octet_tokenizer_special(tok, 0, &st), OCTET_INVALID_ARGUMENT, "struct_size");
  {
    /* An older caller's struct (up to content): the rest is left alone. */
    unsigned char buffer[sizeof(octet_special_token)];
    octet_special_token* older = (octet_special_token*)(void*)buffer;
    const size_t covered = offsetof(octet_special_token, content_len);
    memset(buffer, 0xAB, sizeof(buffer));
    older->struct_size = covered;
    EXPECT_OK(octet_tokenizer_special(tok, 1, older));
    EXPECT(strcmp(older->content, "<s>") == 0 && older->struct_size == covered);
    EXPECT(buffer[covered] == 0xAB && buffer[sizeof(buffer) - 1] == 0xAB);
  }
  octet_tokenizer_free(tok);
}

static void check_austen_tokenizer(const octet_model* model) {
  /* tests/tokenizer/goldens/austen.jsonl line 203: '<s>Hello</s>' */
  static const int32_t special[] = {0, 0, 41, 570, 80, 1};
  static const int32_t special_none[] = {0, 41, 570, 80, 1};
  static const int32_t special_split[] = {29, 84, 31, 41, 570, 80, 29, 16, 84, 31};
  /* line 54: 'I love 😀 and 🍕!' (byte-level pieces) */
  static const int32_t emoji[] = {0,   42,  895, 222, 174, 255, 248, 224,
                                  284, 222, 174, 255, 237, 245, 2};
  /* line 318: '   中   ' */
  static const int32_t cjk[] = {0, 222, 222, 222, 162, 118, 257, 222, 222, 222};
  octet_tokenizer* tok = NULL;
  octet_special_token st;
  const char* bytes = NULL;
  size_t len = 0;
  REQUIRE_OK(octet_tokenizer_create(model, &tok));
  EXPECT(octet_tokenizer_vocab_size(tok) == 2048);
  expect_ids(tok, "<s>Hello</s>", 0, special, N(special), "austen specials");
  expect_ids(tok, "<s>Hello</s>", OCTET_ENCODE_NO_SPECIAL, special_none, N(special_none),
             "austen no special");
  expect_ids(tok, "<s>Hello</s>", OCTET_ENCODE_NO_SPECIAL | OCTET_ENCODE_SPLIT_SPECIAL,
             special_split, N(special_split), "austen split special");
  expect_ids(tok, "I love \xF0\x9F\x98\x80 and \xF0\x9F\x8D\x95!", 0, emoji, N(emoji),
             "austen emoji");
  expect_ids(tok, "   中   ", 0, cjk, N(cjk), "austen cjk");
  expect_text(tok, special, N(special), 0, "Hello", "austen decode");
  expect_text(tok, special, N(special), OCTET_DECODE_KEEP_SPECIAL, "<s><s>Hello</s>",
              "austen decode, keep special");
  expect_text(tok, emoji, N(emoji), 0, "I love \xF0\x9F\x98\x80 and \xF0\x9F\x8D\x95!",
              "austen decode emoji");
  expect_text(tok, cjk, N(cjk), 0, "   中   ", "austen decode cjk");
  EXPECT_OK(octet_tokenizer_token(tok, 222, &bytes, &len));
  EXPECT(len == 2 && memcmp(bytes, "\xC4\xA0", 2) == 0); /* Ġ: a space, byte-level */
  EXPECT(octet_tokenizer_special_count(tok) == 2);
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  EXPECT_OK(octet_tokenizer_special(tok, 1, &st));
  EXPECT(st.id == 1 && strcmp(st.content, "</s>") == 0);
  EXPECT(octet_model_is_eos(model, 1) == 1 && octet_model_is_eos(model, 0) == 0);
  octet_tokenizer_free(tok);
}

/* A long text (workspaces grow): decode(encode(text)) gives it back. */
static void check_long_text(const octet_model* model) {
  static const char kPiece[] = "Hello, 你好 \xF0\x9F\x98\x80 world. ";
  const size_t piece = strlen(kPiece), copies = 2000;
  char* text = (char*)malloc(piece * copies + 1);
  char* back;
  int32_t* ids;
  size_t i, n = 0, len = 0;
  octet_tokenizer* tok = NULL;
  REQUIRE(text != NULL);
  for (i = 0; i < copies; ++i) memcpy(text + i * piece, kPiece, piece);
  REQUIRE_OK(octet_tokenizer_create(model, &tok));
  EXPECT_FAIL(
      octet_tokenizer_encode(tok, text, piece * copies, OCTET_ENCODE_NO_SPECIAL, NULL, 0, &n),
      OCTET_BUFFER_TOO_SMALL, "ids");
  REQUIRE(n > copies);
  ids = (int32_t*)malloc(n * sizeof(int32_t));
  back = (char*)malloc(piece * copies);
  REQUIRE(ids != NULL && back != NULL);
  EXPECT_OK(octet_tokenizer_encode(tok, text, piece * copies, OCTET_ENCODE_NO_SPECIAL, ids, n, &n));
  EXPECT_OK(octet_tokenizer_decode(tok, ids, n, 0, back, piece * copies, &len));
  EXPECT(len == piece * copies && memcmp(back, text, len) == 0);
  free(back);
  free(ids);
  free(text);
  octet_tokenizer_free(tok);
}

/* ---- Streams ---------------------------------------------------------------------------- */

/* Pushes ids[0, n) into a fresh stream, then finish: every piece whole UTF-8,
 * the pieces and finish's together decode(ids). Returns how many pushes held
 * text back (gave nothing). */
static int check_stream(const octet_model* model, octet_tokenizer* tok, const int32_t* ids,
                        size_t n, uint32_t flags, int clean, const char* what) {
  octet_text_stream* stream = NULL;
  char joined[1024], decoded[1024];
  size_t joined_len = 0, decoded_len = 0, i, len;
  const char* piece;
  int held = 0;
  REQUIRE_OK(octet_text_stream_create(model, flags, &stream));
  for (i = 0; i < n; ++i) {
    EXPECT_OK(octet_text_stream_push(stream, ids[i], &piece, &len));
    if (len == 0) ++held;
    if (!utf8_valid(piece, len) || (clean && has_replacement_char(piece, len))) {
      fprintf(stderr, "%s: push %u gave a broken piece\n", what, (unsigned)i);
      ++g_failures;
    }
    REQUIRE(joined_len + len <= sizeof(joined));
    memcpy(joined + joined_len, piece, len);
    joined_len += len;
  }
  EXPECT_OK(octet_text_stream_finish(stream, &piece, &len));
  REQUIRE(joined_len + len <= sizeof(joined));
  memcpy(joined + joined_len, piece, len);
  joined_len += len;
  EXPECT_OK(octet_tokenizer_decode(tok, ids, n, flags, decoded, sizeof(decoded), &decoded_len));
  if (joined_len != decoded_len || memcmp(joined, decoded, decoded_len) != 0) {
    fprintf(stderr, "%s: stream '%.*s' != decode '%.*s'\n", what, (int)joined_len, joined,
            (int)decoded_len, decoded);
    ++g_failures;
  }
  /* After finish the stream is empty: the same ids give the same pieces. */
  joined_len = 0;
  for (i = 0; i < n; ++i) {
    EXPECT_OK(octet_text_stream_push(stream, ids[i], &piece, &len));
    memcpy(joined + joined_len, piece, len);
    joined_len += len;
  }
  EXPECT_OK(octet_text_stream_finish(stream, &piece, &len));
  memcpy(joined + joined_len, piece, len);
  joined_len += len;
  EXPECT(joined_len == decoded_len && memcmp(joined, decoded, decoded_len) == 0);
  octet_text_stream_free(stream);
  return held;
}

static void check_streams(const octet_model* model) {
  static const char* const kTexts[] = {
      "我爱北京天安门。",
      "I love \xF0\x9F\x98\x80 and \xF0\x9F\x8D\x95!",
      "\xF0\x9F\x91\xA8\u200D\xF0\x9F\x91\xA9\u200D\xF0\x9F\x91\xA7 family",
      "\xF0\xA0\x80\x80\xF0\xAA\x9B\x96 CJK extension B, 吾輩は猫である。",
      " \xF0\x9F\x98\x80 ",
      "Hello <s> world </s> again"};
  octet_tokenizer* tok = NULL;
  octet_text_stream* stream = NULL;
  int32_t ids[128];
  size_t n = 0, i, len;
  const char* piece;
  int held = 0;
  REQUIRE_OK(octet_tokenizer_create(model, &tok));
  for (i = 0; i < N(kTexts); ++i) {
    REQUIRE_OK(octet_tokenizer_encode(tok, kTexts[i], strlen(kTexts[i]), 0, ids, N(ids), &n));
    held += check_stream(model, tok, ids, n, 0, 1, kTexts[i]);
    held += check_stream(model, tok, ids, n, OCTET_DECODE_KEEP_SPECIAL, 1, kTexts[i]);
  }
  EXPECT(held > 0); /* characters were split over tokens, and held back */

  /* A character cut short: finish gives what decode gives for the prefix. */
  REQUIRE_OK(octet_tokenizer_encode(tok, kTexts[4], strlen(kTexts[4]), OCTET_ENCODE_NO_SPECIAL, ids,
                                    N(ids), &n));
  check_stream(model, tok, ids, 3, 0, 0, "cut emoji");
  /* Reset drops the held-back bytes: the next text starts clean. */
  REQUIRE_OK(octet_text_stream_create(model, 0, &stream));
  for (i = 0; i < 3; ++i) EXPECT_OK(octet_text_stream_push(stream, ids[i], &piece, &len));
  octet_text_stream_reset(stream);
  REQUIRE_OK(octet_tokenizer_encode(tok, kTexts[0], strlen(kTexts[0]), OCTET_ENCODE_NO_SPECIAL, ids,
                                    N(ids), &n));
  {
    char joined[256];
    size_t joined_len = 0;
    for (i = 0; i < n; ++i) {
      EXPECT_OK(octet_text_stream_push(stream, ids[i], &piece, &len));
      memcpy(joined + joined_len, piece, len);
      joined_len += len;
    }
    EXPECT_OK(octet_text_stream_finish(stream, &piece, &len));
    memcpy(joined + joined_len, piece, len);
    joined_len += len;
    EXPECT(joined_len == strlen(kTexts[0]) && memcmp(joined, kTexts[0], joined_len) == 0);
  }
  /* Errors. */
  EXPECT_FAIL(octet_text_stream_push(stream, 1 << 20, &piece, &len), OCTET_INVALID_ARGUMENT,
              "vocabulary");
  EXPECT_FAIL(octet_text_stream_push(stream, -1, &piece, &len), OCTET_INVALID_ARGUMENT,
              "vocabulary");
  EXPECT_FAIL(octet_text_stream_push(NULL, 1, &piece, &len), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_text_stream_push(stream, 1, NULL, &len), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_text_stream_push(stream, 1, &piece, NULL), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_text_stream_finish(NULL, &piece, &len), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_text_stream_finish(stream, NULL, &len), OCTET_INVALID_ARGUMENT, "null");
  octet_text_stream_free(stream);
  stream = (octet_text_stream*)&n;
  EXPECT_FAIL(octet_text_stream_create(NULL, 0, &stream), OCTET_INVALID_ARGUMENT, "null");
  EXPECT(stream == NULL);
  EXPECT_FAIL(octet_text_stream_create(model, 2, &stream), OCTET_INVALID_ARGUMENT, "flags");
  EXPECT(stream == NULL);
  EXPECT_FAIL(octet_text_stream_create(model, 0, NULL), OCTET_INVALID_ARGUMENT, "null");
  octet_tokenizer_free(tok);
}

/* ---- Generation with text ----------------------------------------------------------------- */

/* The text the callback saw, and the tokens. */
typedef struct text_log {
  char text[4096];
  size_t len;
  int32_t ids[256];
  uint32_t n;
  int broken;      /* a piece that is not whole UTF-8 */
  int replacement; /* a piece with U+FFFD */
  int eos_with_text;
  int null_text;
  int tail_events; /* id -1 */
  uint32_t tail_index;
} text_log;

static int log_text(void* user, const octet_token_event* e) {
  text_log* log = (text_log*)user;
  if (e->text == NULL) {
    log->null_text = 1;
    return 0;
  }
  if (!utf8_valid(e->text, e->text_len)) log->broken = 1;
  if (has_replacement_char(e->text, e->text_len)) log->replacement = 1;
  if (e->is_eos && e->text_len != 0) log->eos_with_text = 1;
  if (log->len + e->text_len <= sizeof(log->text)) {
    memcpy(log->text + log->len, e->text, e->text_len);
    log->len += e->text_len;
  }
  if (e->id == -1) {
    ++log->tail_events;
    log->tail_index = e->index;
  } else if (log->n < 256) {
    log->ids[log->n++] = e->id;
  }
  return 0;
}

/* Forces the tokens forced[0, n) one per sample (sequence 0). */
typedef struct forcing {
  const int32_t* ids;
  uint32_t n;
  uint32_t at;
} forcing;

static int force_ids(void* user, uint32_t sequence, float* logits, uint32_t vocab) {
  forcing* f = (forcing*)user;
  uint32_t i;
  if (sequence != 0 || f->at >= f->n) return 0;
  for (i = 0; i < vocab; ++i) {
    if ((int32_t)i != f->ids[f->at]) logits[i] = -INFINITY;
  }
  ++f->at;
  return 0;
}

/* decode(prompt + generated) minus decode(prompt): the text the stream must give. */
static size_t continuation_text(octet_tokenizer* tok, const int32_t* prompt, size_t n_prompt,
                                const int32_t* generated, size_t n_generated, uint32_t flags,
                                char* out, size_t capacity) {
  int32_t all[512];
  char head[4096];
  size_t head_len = 0, all_len = 0;
  REQUIRE(n_prompt + n_generated <= N(all));
  memcpy(all, prompt, n_prompt * sizeof(int32_t));
  memcpy(all + n_prompt, generated, n_generated * sizeof(int32_t));
  REQUIRE_OK(octet_tokenizer_decode(tok, prompt, n_prompt, flags, head, sizeof(head), &head_len));
  REQUIRE_OK(
      octet_tokenizer_decode(tok, all, n_prompt + n_generated, flags, out, capacity, &all_len));
  REQUIRE(all_len >= head_len && memcmp(out, head, head_len) == 0);
  memmove(out, out + head_len, all_len - head_len);
  return all_len - head_len;
}

static void expect_log_text(const text_log* log, const char* want, size_t want_len, int clean,
                            const char* what) {
  if (log->len != want_len || memcmp(log->text, want, want_len) != 0) {
    fprintf(stderr, "%s: streamed '%.*s', decode gives '%.*s'\n", what, (int)log->len, log->text,
            (int)want_len, want);
    ++g_failures;
  }
  EXPECT(!log->broken && !log->null_text && !log->eos_with_text);
  if (clean) EXPECT(!log->replacement);
}

static void check_generate_text(const octet_model* model, const char* prompt_text, int check_eos) {
  octet_tokenizer* tok = NULL;
  octet_session* session;
  octet_generate_options g;
  text_log log;
  forcing force;
  int32_t prompt[64], forced[64];
  uint32_t length[1], count = 0;
  size_t n_prompt = 0, n_forced = 0, want_len;
  char want[4096];
  static const char kForced[] = " 我爱北京 \xF0\x9F\x98\x80 and \xF0\x9F\x8D\x95!";

  REQUIRE_OK(octet_tokenizer_create(model, &tok));
  REQUIRE_OK(octet_tokenizer_encode(tok, prompt_text, strlen(prompt_text), 0, prompt, N(prompt),
                                    &n_prompt));
  length[0] = (uint32_t)n_prompt;
  session = make_session(model, 1, (uint32_t)n_prompt, 48, 0);

  /* Sampled: the pieces are the continuation's text. */
  octet_generate_options_init(&g);
  g.max_new_tokens = 40;
  g.temperature = 0.8f;
  g.top_p = 0.95f;
  g.seed = 7;
  g.on_token = log_text;
  g.on_token_user = &log;
  memset(&log, 0, sizeof(log));
  EXPECT_OK(octet_generate(session, prompt, length, 1, (uint32_t)n_prompt, &g, &count));
  EXPECT(count == log.n && count >= 1);
  want_len = continuation_text(tok, prompt, n_prompt, log.ids, log.n, 0, want, sizeof(want));
  expect_log_text(&log, want, want_len, 0, "sampled");

  /* Forced: emoji and CJK in tokens that split them. */
  REQUIRE_OK(octet_tokenizer_encode(tok, kForced, strlen(kForced), OCTET_ENCODE_NO_SPECIAL, forced,
                                    N(forced), &n_forced));
  force.ids = forced;
  force.n = (uint32_t)n_forced;
  force.at = 0;
  g.logits_hook = force_ids;
  g.logits_hook_user = &force;
  g.max_new_tokens = (uint32_t)n_forced;
  g.flags = OCTET_GENERATE_IGNORE_EOS;
  memset(&log, 0, sizeof(log));
  EXPECT_OK(octet_generate(session, prompt, length, 1, (uint32_t)n_prompt, &g, &count));
  EXPECT(count == n_forced && log.n == n_forced && memcmp(log.ids, forced, n_forced * 4) == 0);
  want_len = continuation_text(tok, prompt, n_prompt, forced, n_forced, 0, want, sizeof(want));
  expect_log_text(&log, want, want_len, 1, "forced");
  EXPECT(log.tail_events == 0);
  /* Cut inside the last emoji: the held-back text comes last, with id -1. */
  force.at = 0;
  g.max_new_tokens = (uint32_t)n_forced - 2;
  memset(&log, 0, sizeof(log));
  EXPECT_OK(octet_generate(session, prompt, length, 1, (uint32_t)n_prompt, &g, &count));
  want_len = continuation_text(tok, prompt, n_prompt, forced, n_forced - 2, 0, want, sizeof(want));
  expect_log_text(&log, want, want_len, 0, "cut");
  EXPECT(log.tail_events == 1 && log.tail_index == n_forced - 2);

  if (check_eos) {
    /* An eos id: its event has no text; with IGNORE_EOS and KEEP_SPECIAL its
     * string is text. */
    int32_t with_eos[3];
    with_eos[0] = forced[0];
    with_eos[1] = 2; /* </s> */
    with_eos[2] = forced[1];
    force.ids = with_eos;
    force.n = 3;
    force.at = 0;
    g.max_new_tokens = 3;
    g.flags = 0;
    memset(&log, 0, sizeof(log));
    EXPECT_OK(octet_generate(session, prompt, length, 1, (uint32_t)n_prompt, &g, &count));
    EXPECT(count == 2 && log.n == 2);
    want_len = continuation_text(tok, prompt, n_prompt, with_eos, 1, 0, want, sizeof(want));
    expect_log_text(&log, want, want_len, 1, "eos");
    force.at = 0;
    g.flags = OCTET_GENERATE_IGNORE_EOS | OCTET_GENERATE_KEEP_SPECIAL;
    memset(&log, 0, sizeof(log));
    EXPECT_OK(octet_generate(session, prompt, length, 1, (uint32_t)n_prompt, &g, &count));
    EXPECT(count == 3);
    want_len = continuation_text(tok, prompt, n_prompt, with_eos, 3, OCTET_DECODE_KEEP_SPECIAL,
                                 want, sizeof(want));
    EXPECT(strstr(want, "</s>") != NULL);
    expect_log_text(&log, want, want_len, 1, "keep special");
    /* And back without: the special string is dropped again. */
    force.at = 0;
    g.flags = OCTET_GENERATE_IGNORE_EOS;
    memset(&log, 0, sizeof(log));
    EXPECT_OK(octet_generate(session, prompt, length, 1, (uint32_t)n_prompt, &g, &count));
    want_len = continuation_text(tok, prompt, n_prompt, with_eos, 3, 0, want, sizeof(want));
    expect_log_text(&log, want, want_len, 1, "skip special");
  }
  octet_session_free(session);
  octet_tokenizer_free(tok);
}

/* A batch of two prompts: each sequence's pieces are its own continuation. */
typedef struct batch_log {
  text_log sequences[2];
} batch_log;

static int log_batch_text(void* user, const octet_token_event* e) {
  batch_log* log = (batch_log*)user;
  return e->sequence < 2 ? log_text(&log->sequences[e->sequence], e) : 1;
}

static void check_batch_text(const octet_model* model) {
  static const char* const kPrompts[2] = {"The first prompt",
                                          "A second, longer prompt 你好 than the first"};
  octet_tokenizer* tok = NULL;
  octet_session* session;
  octet_generate_options g;
  batch_log log;
  int32_t prompts[2 * 32];
  uint32_t lengths[2], counts[2], b;
  size_t n = 0, want_len;
  char want[4096];
  REQUIRE_OK(octet_tokenizer_create(model, &tok));
  memset(prompts, 0, sizeof(prompts));
  for (b = 0; b < 2; ++b) {
    REQUIRE_OK(
        octet_tokenizer_encode(tok, kPrompts[b], strlen(kPrompts[b]), 0, prompts + b * 32, 32, &n));
    lengths[b] = (uint32_t)n;
  }
  session = make_session(model, 2, 32, 24, 0);
  octet_generate_options_init(&g);
  g.max_new_tokens = 24;
  g.temperature = 1.0f;
  g.seed = 11;
  g.on_token = log_batch_text;
  g.on_token_user = &log;
  memset(&log, 0, sizeof(log));
  EXPECT_OK(octet_generate(session, prompts, lengths, 2, 32, &g, counts));
  for (b = 0; b < 2; ++b) {
    const text_log* l = &log.sequences[b];
    EXPECT(counts[b] == l->n);
    want_len =
        continuation_text(tok, prompts + b * 32, lengths[b], l->ids, l->n, 0, want, sizeof(want));
    expect_log_text(l, want, want_len, 0, b == 0 ? "batch, sequence 0" : "batch, sequence 1");
  }
  octet_session_free(session);
  octet_tokenizer_free(tok);
}

/* Encoder-decoder: the text is the target's alone. */
static void check_translation_text(const octet_model* model) {
  static const char kSource[] = "translate this sentence";
  static const char kTarget[] = "the sentence, translated";
  octet_tokenizer* tok = NULL;
  octet_session* session = make_session(model, 2, 16, 16, 0);
  octet_generate_options g;
  text_log log;
  forcing force;
  int32_t source[32], target[32];
  uint32_t lengths[2], counts[2];
  size_t n_source = 0, n_target = 0;
  REQUIRE_OK(octet_tokenizer_create(model, &tok));
  REQUIRE_OK(octet_tokenizer_encode(tok, kSource, strlen(kSource), 0, source, 16, &n_source));
  REQUIRE_OK(
      octet_tokenizer_encode(tok, kTarget, strlen(kTarget), 0, target, N(target), &n_target));
  REQUIRE(n_target >= 2 && octet_model_is_eos(model, target[n_target - 1]));
  memcpy(source + 16, source, n_source * sizeof(int32_t)); /* [2, 16]: the same source twice */
  lengths[0] = lengths[1] = (uint32_t)n_source;
  force.ids = target;
  force.n = (uint32_t)n_target;
  force.at = 0;
  octet_generate_options_init(&g);
  g.max_new_tokens = 16;
  g.temperature = 0.0f;
  g.logits_hook = force_ids;
  g.logits_hook_user = &force;
  g.on_token = log_text;
  g.on_token_user = &log;
  memset(&log, 0, sizeof(log));
  EXPECT_OK(octet_generate(session, source, lengths, 1, 16, &g, counts));
  EXPECT(counts[0] == n_target && log.n == n_target); /* eos included */
  expect_log_text(&log, kTarget, strlen(kTarget), 1, "translation");
  octet_session_free(session);
  octet_tokenizer_free(tok);
}

/* ---- Chat templates ---------------------------------------------------------------------- */

/* The render of `name` (with or without the generation prompt) in a golden
 * file of tests/text/chat_templates/goldens: "case NAME 1|0 ok LEN\n" + LEN bytes. */
static const char* golden_render(const char* golden, size_t size, const char* name, int prompt,
                                 size_t* len) {
  char header[128];
  const char* at;
  int header_len = snprintf(header, sizeof(header), "case %s %d ok ", name, prompt);
  for (at = golden; at != NULL && at < golden + size; at = strchr(at, '\n')) {
    if (*at == '\n') ++at;
    if (strncmp(at, header, (size_t)header_len) == 0) {
      char* end;
      *len = (size_t)strtoul(at + header_len, &end, 10);
      REQUIRE(*end == '\n' && end + 1 + *len <= golden + size);
      return end + 1;
    }
  }
  fprintf(stderr, "no golden for %s %d\n", name, prompt);
  exit(1);
}

static void expect_render(const octet_model* model, const octet_chat_message* messages, size_t n,
                          uint32_t flags, const char* want, size_t want_len, const char* what) {
  octet_chat_options o;
  char text[2048];
  size_t len = 0;
  octet_chat_options_init(&o);
  o.flags = flags;
  EXPECT_OK(octet_chat_render(model, messages, n, &o, text, sizeof(text), &len));
  if (len != want_len || memcmp(text, want, len) != 0) {
    fprintf(stderr, "%s: rendered\n%.*s\nexpected\n%.*s\n", what, (int)len, text, (int)want_len,
            want);
    ++g_failures;
  }
  len = 0;
  EXPECT_FAIL(octet_chat_render(model, messages, n, &o, text, want_len - 1, &len),
              OCTET_BUFFER_TOO_SMALL, "bytes");
  EXPECT(len == want_len);
  len = 0;
  EXPECT_FAIL(octet_chat_render(model, messages, n, &o, NULL, 0, &len), OCTET_BUFFER_TOO_SMALL,
              "bytes");
  EXPECT(len == want_len);
  memset(text, 0, sizeof(text));
  EXPECT_OK(octet_chat_render(model, messages, n, &o, text, len, &len));
  EXPECT(len == want_len && memcmp(text, want, len) == 0);
}

static void check_chat(const octet_model* chat, const octet_model* austen,
                       const octet_model* mistral, const char* golden_dir) {
  /* tests/text/chat_templates/messages/{single_user,no_system,unicode,bad_alternation}.json */
  static const octet_chat_message single_user[] = {{"user", "Write a haiku about the sea."}};
  static const octet_chat_message no_system[] = {
      {"user", "Hello, how are you?"},
      {"assistant", "I'm doing great. How can I help you today?"},
      {"user", "I'd like to show off how chat templating works!"}};
  static const octet_chat_message unicode[] = {
      {"system", "Réponds en français, s\u2019il te plaît.\u00A0"},
      {"user",
       "\u3000你好，世界！こんにちは 안녕하세요 مرحبا नमस्ते "
       "\U0001F469\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 \U0001F44D\U0001F3FD "
       "e\u0301 \uFB01 ＡＢＣ\u3000"},
      {"assistant", "\u2003Héllo \U0001F30D\u2028"},
      {"user", "Ünïcödé ✓"}};
  static const octet_chat_message bad_alternation[] = {{"user", "first"}, {"user", "second"}};
  octet_chat_message broken[1];
  octet_chat_options o;
  char path[4096], text[256];
  unsigned char *golden, *cli;
  size_t size, cli_size, len = 0, want_len;
  const char* want;
  struct tm now;
  octet_model_info info;

  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  EXPECT_OK(octet_model_get_info(chat, &info));
  EXPECT(info.has_tokenizer == 1 && info.has_chat_template == 1);
  EXPECT_OK(octet_model_get_info(austen, &info));
  EXPECT(info.has_tokenizer == 1 && info.has_chat_template == 0);

  snprintf(path, sizeof(path), "%s/goldens/qwen2_5.golden", golden_dir);
  golden = read_file(path, &size);
  want = golden_render((const char*)golden, size, "single_user", 1, &want_len);
  expect_render(chat, single_user, 1, 0, want, want_len, "single_user");
  want = golden_render((const char*)golden, size, "single_user", 0, &want_len);
  expect_render(chat, single_user, 1, OCTET_CHAT_NO_GENERATION_PROMPT, want, want_len,
                "single_user, no generation prompt");
  want = golden_render((const char*)golden, size, "no_system", 1, &want_len);
  expect_render(chat, no_system, 3, 0, want, want_len, "no_system");
  want = golden_render((const char*)golden, size, "unicode", 1, &want_len);
  expect_render(chat, unicode, 4, 0, want, want_len, "unicode");
  /* The CLI renders the same bytes. */
  cli = read_file(model_path("cli_unicode.txt"), &cli_size);
  EXPECT(cli_size == want_len && memcmp(cli, want, want_len) == 0);
  free(cli);
  want = golden_render((const char*)golden, size, "unicode", 0, &want_len);
  expect_render(chat, unicode, 4, OCTET_CHAT_NO_GENERATION_PROMPT, want, want_len,
                "unicode, no generation prompt");
  free(golden);
  /* NULL options: the defaults; a fixed time. */
  EXPECT_FAIL(octet_chat_render(chat, single_user, 1, NULL, NULL, 0, &len), OCTET_BUFFER_TOO_SMALL,
              "bytes");
  memset(&now, 0, sizeof(now));
  now.tm_year = 124;
  now.tm_mon = 6;
  now.tm_mday = 26;
  octet_chat_options_init(&o);
  o.now = &now;
  {
    char fixed[2048];
    size_t fixed_len = 0;
    EXPECT_OK(octet_chat_render(chat, single_user, 1, &o, fixed, sizeof(fixed), &fixed_len));
    EXPECT(fixed_len == len);
  }

  /* A template's own error: its message, OCTET_INVALID_ARGUMENT. */
  snprintf(path, sizeof(path), "%s/goldens/mistral_v0_1.golden", golden_dir);
  golden = read_file(path, &size);
  EXPECT(strstr((const char*)golden, "case bad_alternation 1 raise") != NULL);
  free(golden);
  EXPECT_FAIL(octet_chat_render(mistral, bad_alternation, 2, NULL, text, sizeof(text), &len),
              OCTET_INVALID_ARGUMENT, "Conversation roles must alternate user/assistant");

  /* Errors. */
  EXPECT_FAIL(octet_chat_render(austen, single_user, 1, NULL, text, sizeof(text), &len),
              OCTET_UNSUPPORTED, "chat template");
  EXPECT_FAIL(octet_chat_render(NULL, single_user, 1, NULL, text, sizeof(text), &len),
              OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_chat_render(chat, NULL, 1, NULL, text, sizeof(text), &len),
              OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_chat_render(chat, single_user, 1, NULL, text, sizeof(text), NULL),
              OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_chat_render(chat, single_user, 1, NULL, NULL, 8, &len), OCTET_INVALID_ARGUMENT,
              "null");
  o.flags = 2;
  EXPECT_FAIL(octet_chat_render(chat, single_user, 1, &o, text, sizeof(text), &len),
              OCTET_INVALID_ARGUMENT, "flags");
  octet_chat_options_init(&o);
  o.struct_size = 0;
  EXPECT_FAIL(octet_chat_render(chat, single_user, 1, &o, text, sizeof(text), &len),
              OCTET_INVALID_ARGUMENT, "struct_size");
  broken[0].role = "user";
  broken[0].content = NULL;
  EXPECT_FAIL(octet_chat_render(chat, broken, 1, NULL, text, sizeof(text), &len),
              OCTET_INVALID_ARGUMENT, "message 0");
  broken[0].role = NULL;
  broken[0].content = "hi";
  EXPECT_FAIL(octet_chat_render(chat, broken, 1, NULL, text, sizeof(text), &len),
              OCTET_INVALID_ARGUMENT, "message 0");
}

/* ---- Models without a tokenizer ---------------------------------------------------------- */

static void check_no_tokenizer(const char* synthetic_dir) {
  static const octet_chat_message hello[] = {{"user", "hi"}};
  octet_model* llama = NULL;
  char path[4096];
  octet_tokenizer* tok = (octet_tokenizer*)&path;
  octet_text_stream* stream = (octet_text_stream*)&path;
  char text[64];
  size_t len;
  snprintf(path, sizeof(path), "%s/llama.octet", synthetic_dir);
  REQUIRE_OK(octet_model_load(path, &llama));
  EXPECT_FAIL(octet_tokenizer_create(llama, &tok), OCTET_UNSUPPORTED, "no tokenizer");
  EXPECT(tok == NULL);
  EXPECT_FAIL(octet_tokenizer_create(NULL, &tok), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_tokenizer_create(llama, NULL), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_text_stream_create(llama, 0, &stream), OCTET_UNSUPPORTED, "no tokenizer");
  EXPECT(stream == NULL);
  EXPECT_FAIL(octet_chat_render(llama, hello, 1, NULL, text, sizeof(text), &len), OCTET_UNSUPPORTED,
              "chat template");
  EXPECT(octet_tokenizer_vocab_size(NULL) == 0);
  octet_model_free(llama);
}

void test_text(const char* golden_dir, const char* synthetic_dir) {
  octet_model* chat = load_model("llama2_chat.octet");
  octet_model* austen = load_model("austen.octet");
  octet_model* t5 = load_model("t5_text.octet");
  check_no_tokenizer(synthetic_dir);
  check_llama2_tokenizer(chat);
  check_austen_tokenizer(austen);
  check_long_text(chat);
  check_long_text(austen);
  check_streams(chat);
  check_streams(austen);
  check_generate_text(chat, "Hello, world! Grüße, 你好", 1);
  check_generate_text(austen, "It is a truth universally acknowledged, that", 0);
  check_batch_text(chat);
  check_translation_text(t5);
  check_chat(chat, austen, t5, golden_dir);
  octet_model_free(t5);
  octet_model_free(austen);
  octet_model_free(chat);
}
