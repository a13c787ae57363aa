#!/usr/bin/python3
"""Writes tests/text/data/regex_golden.txt: reference matches for runtime/text/regex.

Run with Debian's interpreter, which has python3-regex (apt-get install python3-regex):
    /usr/bin/python3 tests/text/gen_regex_cases.py

The reference is the `regex` module (mrab-regex), which follows Perl priorities like
Oniguruma. Hugging Face tokenizers runs these patterns with Oniguruma (onig crate Regex::new:
ONIG_SYNTAX_ONIGURUMA, no options, UTF-8), so
each pattern is first rewritten into the `regex` spelling of Oniguruma's meaning where the two
differ (checked one by one, see to_reference()):
  - \\w: Oniguruma's Unicode Word is Alphabetic | M | Nd | Pc; `regex` adds Join_Control
    (U+200C, U+200D), so \\w, \\W and \\b \\B are spelled with that explicit class.
  - ^ and $ are line anchors in Oniguruma: MULTILINE. \\Z, \\z, \\e, \\x{..} have no
    `regex` spelling or another meaning; they are written out.
  - nested classes and && exist only in `regex`'s V1 mode, used for those patterns (V1 would
    switch (?i) to full case folding, so no pattern here combines them).
  - \\s (White_Space), \\d (Nd), \\p{..} General_Category values and (?i) on literals
    (s ~ U+017F, k ~ U+212A) already agree; the class table below checks every code point.
  - (?i) on a class: Oniguruma closes the class under CaseFolding.txt's simple folds (C, S)
    before negating it; `regex` also equates simple case mappings (U+0130 ~ i) and widens
    (?i)\\p{Lu} to all cased letters. The class table spells those as "the class without (?i)
    holds for some member of the code point's fold orbit", orbits from the UCD file
    (Debian unicode-data, /usr/share/unicode/CaseFolding.txt).
The iteration is the onig crate's FindMatches, which HF's SysRegex::find_iter is: search from
the end of the previous match; an empty match moves the next search one character on, and an
empty match right after a non-empty one is dropped.

Output format (all offsets in UTF-8 bytes; sizes in bytes; one record per line, except that
P and T are followed by their raw bytes and a newline):
  P <size>\\n<pattern>\\n          patterns, numbered from 0 in order
  T <k>\\n then k segments         texts, numbered from 0 in order; a segment is
      <repeat> <size>\\n<bytes>\\n     `bytes` repeated `repeat` times (long runs stay small)
  M <p> <t> <count> b e b e ...    every match of pattern p in text t
  H <p> <t> <count> <fnv1a64>      the same, hashed (long texts): FNV-1a 64 over "b,e;" per match
  C <p> <count> lo hi lo hi ...    code point ranges that pattern p matches as a whole (one char)
"""
import os
import random
import sys

import regex

SEED = 20261201
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "regex_golden.txt")

WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}"

# Real patterns, with where they come from. The HF tokenizer.json files hold them as Split
# pre-tokenizer / Replace normalizer regexes (ByteLevel's built-in one is GPT-2's).
REAL = [
    ("gpt2", r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
     "GPT-2 ByteLevel pre-tokenizer (HF tokenizers byte_level.rs)"),
    ("llama3", r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
     "Llama 3 tokenizer.json Split (also GLM-4, cl100k in HF form)"),
    ("qwen2", r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
     "Qwen2 / Qwen3 tokenizer.json Split"),
    ("cl100k_tiktoken", r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",
     "tiktoken cl100k_base (possessive form)"),
    ("o200k", r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
     "GPT-4o o200k_base (Phi-4 tokenizer.json)"),
    ("tekken", r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
     "Mistral Tekken (Mistral-Nemo tokenizer.json)"),
    ("deepseek3_digits", r"\p{N}{1,3}", "DeepSeek-V3 tokenizer.json Split 1"),
    ("deepseek3_cjk", "[一-龥\u3040-ゟ゠-ヿ]+", "DeepSeek-V3 tokenizer.json Split 2"),
    ("deepseek3_main", r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
     "DeepSeek-V3 tokenizer.json Split 3"),
    ("deepseek_llm_nl", "[\r\n]", "DeepSeek LLM tokenizer.json Split 1"),
    ("deepseek_llm_latin", "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼ\u1fbeῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212a-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
     "DeepSeek LLM tokenizer.json Split 2 (as llama.cpp copies it; escapes where NFC would fold)"),
    ("deepseek_llm_punct", "\\s?[!-/:-~！-／：-～‘-‟　-。]+", "DeepSeek LLM tokenizer.json Split 3"),
    ("deepseek_llm_trailing", r"\s+$", "DeepSeek LLM tokenizer.json Split 4"),
    ("deepseek_llm_cjk", "[一-龥ࠀ-一가-퟿]+", "DeepSeek LLM tokenizer.json Split 5"),
    ("deepseek_llm_num", r"\p{N}+", "DeepSeek LLM tokenizer.json Split 6"),
    ("deepseek_coder_letters", r"\s?\p{L}+", "DeepSeek Coder tokenizer.json Split"),
    ("deepseek_coder_punct", r"\s?\p{P}+", "DeepSeek Coder tokenizer.json Split"),
    ("falcon_punct", r"[\p{P}\$\+<=>\^~\|`]+", "Falcon tokenizer.json Split"),
    ("falcon_main", r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)",
     "Falcon tokenizer.json Split"),
    ("falcon_digits", r"[0-9][0-9][0-9]", "Falcon tokenizer.json Split"),
    ("bloom", r" ?[^(\s|[.,!?…。，、।۔،])]+", "BLOOM tokenizer.json Split (a nested class)"),
    ("thousands", r"\d{1,3}(?=(?:\d{3})*\b)", "Split example: digits grouped from the right"),
    ("whitespace_pre", r"\w+|[^\w\s]+", "HF Whitespace pre-tokenizer's pattern"),
    ("replace_spaces", r" {2,}", "Replace normalizer (collapse spaces)"),
    ("replace_ws", r"\s+", "Replace normalizer"),
    ("replace_strip", r"^\s+|\s+$", "Replace normalizer (strip, line anchors)"),
    ("metaspace", "\u2581", "Replace normalizer (SentencePiece space)"),
]

# One construct at a time: (pattern, texts).
CONSTRUCTS = [
    ("abc", ["abc", "xabcabcx", "ab", ""]),
    ("a|ab|abc", ["abc", "ab", "xa"]),
    ("ab|a", ["abc", "a"]),
    (r"\t\n\r\f\v\a", ["\t\n\r\f\v\a", "x"]),
    (r"\x41\x{42}\x{1F600}\u00e9\u3042", ["AB\U0001F600\u00e9\u3042"]),
    (r"\.\*\+\?\(\)\[\]\{\}\|\\\/\-\^\$\#\ \'", [".*+?()[]{}|\\/-^$# '"]),
    ("é日😀", ["é日😀", "e日😀"]),
    (".", ["a\nb", "\r\n", "日😀\u0301"]),
    (".+", ["ab\ncd\n\nef"]),
    ("[abc]", ["xaybzc"]),
    ("[a-z0-9_]+", ["Hello_World 42 x-y"]),
    ("[^a-z]+", ["abcDEFghi123"]),
    ("[-a]+", ["a-b--a"]),
    ("[a-]+", ["a-b--a"]),
    (r"[\]\[\\^-]+", ["x[]\\^-x"]),
    (r"[^\s\p{L}\p{N}]+", ["a!!b ..c,;d 日本。、 ١٢ ‘’ 😀👍🏽"]),
    (r"[\s\d]+", ["a 1 2\t3\u00a0٣x"]),
    (r"[\S]+", ["ab cd\u3000ef"]),
    (r"[\D]+", ["ab12cd٣٤ef"]),
    (r"[\w]+", ["héllo wörld_1 ٣ \u200d x"]),
    (r"\s+", [" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u180e\u2000\u200a\u200b\u2028\u2029\u202f\u205f\u3000\ufeffx"]),
    (r"\S+", ["a b\u00a0c\u3000d\u200be"]),
    (r"\d+", ["0123 ٠١٢ ०१२ ০১ ①② Ⅻ ¹²³ ３４"]),
    (r"\D+", ["ab12cd"]),
    (r"\w+", ["héllo wörld_1 ٣ \u200d x\u0301 日本 ‿ ①"]),
    (r"\W+", ["a, b! c\u200dd"]),
    (r"\p{L}+", ["héllo 日本語 ひらがな カタカナ 한국어 مرحبا नमस्ते ǅ ʰ"]),
    (r"\p{Lu}+|\p{Ll}+|\p{Lt}+|\p{Lm}+|\p{Lo}+", ["ABcdǅʰʱ日本ΣσAb"]),
    (r"\p{M}+", ["e\u0301\u0302 n\u0303 क्ष ि \u20dd"]),
    (r"\p{Mn}|\p{Mc}|\p{Me}", ["\u0301\u0903\u20dd"]),
    (r"\p{N}+", ["123 ٣ Ⅻ ½ ²"]),
    (r"\p{Nd}+|\p{Nl}+|\p{No}+", ["12Ⅻ½²"]),
    (r"\p{P}+", ["a.,;:!? ()[]{} «» ‘’ “” — – ‿ 、。 ¿¡"]),
    (r"\p{Pc}|\p{Pd}|\p{Ps}|\p{Pe}|\p{Pi}|\p{Pf}|\p{Po}", ["_-()«»!"]),
    (r"\p{S}+", ["$+<=>^`|~ ¢£¥ © ® ° ± × ÷ 😀 ∑"]),
    (r"\p{Sm}|\p{Sc}|\p{Sk}|\p{So}", ["+$^©"]),
    (r"\p{Z}+", [" \u00a0\u2028\u2029\u3000 x"]),
    (r"\p{Zs}|\p{Zl}|\p{Zp}", [" \u2028\u2029"]),
    (r"\p{C}+", ["a\x00\x01\x7f\u200b\u00ad\ue000b"]),
    (r"\p{Cc}|\p{Cf}|\p{Co}", ["\x01\u200b\ue000"]),
    (r"\P{L}+", ["ab12 cd"]),
    (r"\p{^L}+", ["ab12 cd"]),
    (r"[\P{L}]+", ["ab12 cd"]),
    (r"\p{Letter}+\p{Number}+", ["abc123"]),
    (r"\p{Uppercase_Letter}\p{lowercase letter}+", ["Hello"]),
    (r"\p{Punctuation}|\p{Symbol}|\p{Separator}|\p{Other}|\p{Mark}", [".$ \x01\u0301"]),
    (r"(?:ab)+", ["abababa"]),
    (r"(ab)+c", ["ababc abx"]),
    (r"(?<name>ab)c", ["abc"]),
    (r"a*", ["aaa", "baaac", ""]),
    (r"a+", ["baaac"]),
    (r"a?b", ["ab b aab"]),
    (r"a{2}", ["aaaaa"]),
    (r"a{2,}", ["a aa aaaaa"]),
    (r"a{2,3}", ["aaaaaaa"]),
    (r"a{,2}", ["aaaaa"]),
    (r"a{0}b", ["ab"]),
    (r"a{x}", ["a{x}"]),
    (r"a{", ["a{"]),
    (r"a+{x", ["aa{x"]),
    (r"\p{N}{1,3}", ["1234567 12 ٣٤٥٦"]),
    (r"a*?b", ["aaab"]),
    (r"a+?", ["aaa"]),
    (r"a??b", ["ab"]),
    (r"a{2,3}?", ["aaaaaaa"]),
    (r"<.+?>", ["<a><b>"]),
    (r"(?:ab)*?c", ["ababc"]),
    (r"a*+a", ["aaaa"]),
    (r"a++b", ["aaab"]),
    (r"a?+a", ["a aa"]),
    (r"(?:ab)++a", ["ababa"]),
    (r"(?>a+)b", ["aab"]),
    (r"(?>ab|a)c", ["abc ac"]),
    (r"a(?=b)", ["ab ac"]),
    (r"a(?!b)", ["ab ac a"]),
    (r"\s+(?!\S)", ["a   b  "]),
    (r"(?<=a)b", ["ab cb"]),
    (r"(?<!a)b", ["ab cb b"]),
    (r"(?<=ab|c)d", ["abd cd bd"]),
    (r"(?<!ab|c)d", ["abd cd bd d"]),
    (r"(?<=日)本", ["日本 本"]),
    (r"(?=a)", ["bab"]),
    (r"", ["abc", ""]),
    (r"^a", ["a\na\nba"]),
    (r"a$", ["a\nba\na"]),
    (r"^$", ["\n\nx\n"]),
    (r"\Aa", ["aa\na"]),
    (r"a\z", ["a\na"]),
    (r"a\Z", ["a\na\n", "a\na"]),
    (r"\b", ["hello, world_1 é"]),
    (r"\B", ["ab, c"]),
    (r"\bé\w*\b", ["été é-t café"]),
    (r"(?i)abc", ["ABC aBc abc"]),
    (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)", ["'S 'T 'RE 'Ve 'M 'LL 'D 'ſ 'K 'x"]),
    (r"(?i)k", ["kKK\u212a"]),
    (r"(?i)s", ["sSſ"]),
    (r"(?i)[a-c]+", ["ABCabc"]),
    (r"(?i)[^a]+", ["aAbB"]),
    (r"(?i)σ", ["Σσς"]),
    (r"(?i)ǆ", ["ǄǅǆDž"]),
    (r"(?i:a)b", ["ab Ab aB"]),
    (r"(?i:a(?-i:b))", ["ab Ab aB AB"]),
    (r"(?i)a|b", ["A B"]),
    (r"x(?:(?i)a|b)", ["xA xB"]),
    (r"[[a-c][x-z]]+", ["abxyzdw"]),
    (r"[a-z&&[^aeiou]]+", ["hello world"]),
    (r"[\p{L}&&\p{Lu}]+", ["abCDe"]),
    (r"[^[^a]]", ["ab"]),
    (r"\x{1F600}+", ["\U0001F600\U0001F600x"]),
    (r"[\x{1F300}-\x{1F5FF}]+", ["\U0001F300\U0001F5FF\U0001F600"]),
    (r"\s*[\r\n]+", ["a \r\n\r\n b\n"]),
    (r"[\r\n/]*", ["/\r\n/x"]),
]

# Classes checked over every code point.
CLASS_PATTERNS = [
    r"\s", r"\S", r"\d", r"\D", r"\w", r"\W", r".",
    r"\p{L}", r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}",
    r"\p{M}", r"\p{Mn}", r"\p{Mc}", r"\p{Me}",
    r"\p{N}", r"\p{Nd}", r"\p{Nl}", r"\p{No}",
    r"\p{P}", r"\p{Pc}", r"\p{Pd}", r"\p{Ps}", r"\p{Pe}", r"\p{Pi}", r"\p{Pf}", r"\p{Po}",
    r"\p{S}", r"\p{Sm}", r"\p{Sc}", r"\p{Sk}", r"\p{So}",
    r"\p{Z}", r"\p{Zs}", r"\p{Zl}", r"\p{Zp}",
    r"\p{C}", r"\p{Cc}", r"\p{Cf}", r"\p{Co}", r"\p{Cn}",
    r"[^\s\p{L}\p{N}]", r"[^\r\n\p{L}\p{N}]", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", r"[^\r\n\p{L}\p{P}\p{S}]", r"[\p{P}\p{S}]",
    r"(?i)[a-z]", r"(?i)[^k]", r"(?i)[^\p{Lu}]", r"(?i)[α-ω]", r"[a-z&&[^aeiou]]",
    r"[^(\s|[.,!?…。，、।۔،])]",
]

SHORT_TEXTS = [
    "Hello world! It's a test. We'LL see, DON'T worry; I'M fine, YOU'RE right, they'VE gone, he'D go.",
    "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D 'ſ 'K don'ſ",
    "  leading spaces and trailing   ",
    "tabs\tand\t\tnew\nlines\r\nand\r\n\r\nCRLF\n\n\n end",
    "non-breaking\u00a0space, ideographic\u3000space, thin\u2009space, nel\u0085, ls\u2028ps\u2029",
    "中文字符测试，标点符号。还有英文mixed在一起！",
    "日本語のテキスト：ひらがな、カタカナ、漢字。ｶﾀｶﾅ全角ＡＢＣ１２３",
    "한국어 텍스트입니다. 안녕하세요!",
    "مرحبا بالعالم! هذا نص عربي ١٢٣٤٥ مع أرقام.",
    "नमस्ते दुनिया। यह हिंदी पाठ है १२३४।",
    "Emoji: 👨‍👩‍👧‍👦 family, 👍🏽 thumbs, 🏳️‍🌈 flag, 🇫🇷 flag, ❤️ heart, 😀😃😄",
    "Combining: e\u0301 cafe\u0301 n\u0303 a\u0308\u0304 Z\u0351\u0352\u0353 précis naïve",
    "Digits: 0 12 123 1234 12345 1234567890 ٣٤٥٦ ৩৪৫ १२३४५ ①②③ Ⅻ ½ ²³ ３４５",
    "Code: def f(x):\n    return x**2 + 1  # comment\n\tif (a && b) { c[i] = d->e; }",
    "URLs: https://example.com/path?q=1&r=2 and e-mail user@example.org",
    "Quotes “double” ‘single’ «guillemets» „German“ — dash – en ... …",
    "MiXeD CaSe WORDS and CamelCaseIdentifiers HTTPServer XMLHttpRequest",
    "Ligatures ﬁ ﬂ ﬀ and ß Straße STRASSE ǅ ǈ ǋ",
    "Controls \x00\x01\x07\x1b\x7f and zero-width \u200b\u200c\u200d\ufeff marks",
    "Greek Σίσυφος and Cyrillic Привет мир, Armenian Բարեւ, Georgian გამარჯობა",
    "Thai ภาษาไทย Lao ພາສາລາວ Tibetan བོད་ཡིག Khmer ភាសាខ្មែរ",
    "Math ∑∫√∞ ≤≥≠ ±×÷ arrows ←→↑↓ box ┌─┐ currency $€£¥₹",
    "a",
    "",
    " ",
    "\n",
    "\r\n",
    "    ",
    "x" * 50 + " " * 30 + "y",
    "1" * 40,
    "!!!???...,,,;;;",
    "word/slash/path\n/next",
    "numbers 1,234,567 and 1000000 and 12 345",
    "'''''",
    " ' s ' t",
]

FRAGMENTS = SHORT_TEXTS + [
    "The quick brown fox jumps over the lazy dog. ",
    "It was the best of times, it was the worst of times; ",
    "\u4e00\u4e8c\u4e09\u56db\u4e94\u516d\u4e03\u516b\u4e5d\u5341",
]


def random_char(rng):
    """A code point from a mix of scripts, categories and whitespace kinds."""
    pools = [
        (0x20, 0x7E), (0x20, 0x7E), (0x20, 0x7E), (0x61, 0x7A), (0x41, 0x5A), (0x30, 0x39),
        (0xA0, 0x17F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x6FF),
        (0x900, 0x97F), (0x2000, 0x206F), (0x3000, 0x30FF), (0x4E00, 0x4FFF), (0xAC00, 0xACFF),
        (0xFF00, 0xFFEF), (0x1F300, 0x1F64F), (0x1F900, 0x1F9FF), (0x10400, 0x1044F),
    ]
    ws = ["\t", "\n", "\r", "\r\n", " ", "  ", "\u00a0", "\u3000", "\u2028", "\x0b", "\x0c",
          "\x85", "\u200d", "\ufe0f"]
    if rng.random() < 0.12:
        return rng.choice(ws)
    lo, hi = rng.choice(pools)
    while True:
        cp = rng.randint(lo, hi)
        if not 0xD800 <= cp <= 0xDFFF:
            return chr(cp)


def long_text(rng, size):
    parts = []
    total = 0
    while total < size:
        if rng.random() < 0.6:
            s = rng.choice(FRAGMENTS)
        else:
            s = "".join(random_char(rng) for _ in range(rng.randint(1, 40)))
        if rng.random() < 0.1:
            s = s.upper()
        parts.append(s)
        parts.append(rng.choice([" ", "", "\n", "  ", "'s ", "'LL ", "123"]))
        total += len(parts[-2].encode()) + len(parts[-1].encode())
    return "".join(parts)


def to_reference(pattern):
    """The `regex` spelling of what Oniguruma means by `pattern`."""
    out = []
    i = 0
    depth = 0  # class nesting
    v1 = False
    multiline = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            if e == "w":
                out.append(WORD if depth else "[" + WORD + "]")
            elif e == "W":
                if depth:
                    raise ValueError("\\W inside a class has no flat spelling")
                out.append("[^" + WORD + "]")
            elif e == "b":
                w = "[" + WORD + "]"
                out.append("(?:(?<=%s)(?!%s)|(?<!%s)(?=%s))" % (w, w, w, w))
            elif e == "B":
                w = "[" + WORD + "]"
                out.append("(?:(?<=%s)(?=%s)|(?<!%s)(?!%s))" % (w, w, w, w))
            elif e == "z":
                out.append(r"(?![\s\S])")
            elif e == "Z":
                out.append(r"(?=\n?(?![\s\S]))")
            elif e == "e":
                out.append(r"\x1b")
            elif e == "x" and pattern[i + 2:i + 3] == "{":
                close = pattern.index("}", i)
                out.append("\\U%08x" % int(pattern[i + 3:close], 16))
                i = close + 1
                continue
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[":
            if depth:
                v1 = True
            depth += 1
            out.append(c)
            i += 1
            if i < len(pattern) and pattern[i] == "^":
                out.append("^")
                i += 1
            continue
        if c == "]" and depth:
            depth -= 1
        elif c == "&" and depth and pattern[i:i + 2] == "&&":
            v1 = True
        elif c in "^$" and not depth:
            multiline = True
        out.append(c)
        i += 1
    flags = (regex.V1 if v1 else regex.V0) | (regex.MULTILINE if multiline else 0)
    if v1 and "(?i" in pattern:
        raise ValueError("V1 would fold case fully: " + pattern)
    return "".join(out), flags


def fold_orbits(path="/usr/share/unicode/CaseFolding.txt"):
    """Code point -> the code points with the same simple case fold (C and S entries)."""
    groups = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            code, status, mapping = [x.strip() for x in line.split(";")[:3]]
            if status in ("C", "S"):
                target = int(mapping, 16)
                groups.setdefault(target, {target}).add(int(code, 16))
    orbit = {}
    for members in groups.values():
        for m in members:
            orbit[m] = members
    return orbit


def class_member_fn(pattern, orbit):
    """fullmatch of one character, with Oniguruma's (?i) closure for class patterns."""
    if not pattern.startswith("(?i)"):
        ref, flags = to_reference(pattern)
        rx = regex.compile(ref, flags)
        return lambda c: rx.fullmatch(c) is not None
    body = pattern[len("(?i)"):]
    negate = body.startswith("[^")
    if negate:
        body = "[" + body[2:]
    ref, flags = to_reference(body)
    rx = regex.compile(ref, flags)

    def member(c):
        cp = ord(c)
        hit = any(rx.fullmatch(chr(o)) is not None for o in orbit.get(cp, (cp,)))
        return hit != negate
    return member


def onig_matches(rx, text):
    """The onig crate's FindMatches over `text`, in character offsets."""
    res = []
    last_end = 0
    skip_next_empty = False
    while last_end <= len(text):
        m = rx.search(text, last_end)
        if m is None:
            break
        s, e = m.span()
        last_end = e
        if s == e:
            last_end += 1
            if skip_next_empty:
                skip_next_empty = False
                continue
        else:
            skip_next_empty = True
        res.append((s, e))
    return res


def byte_offsets(text):
    offs = [0]
    for ch in text:
        offs.append(offs[-1] + len(ch.encode("utf-8")))
    return offs


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    rng = random.Random(SEED)
    patterns = []
    texts = []
    records = []
    segments = {}  # text -> [(repeat, unit)] for the long runs

    def add_pattern(p):
        if p not in patterns:
            patterns.append(p)
        return patterns.index(p)

    def add_text(t):
        if t not in texts:
            texts.append(t)
        return texts.index(t)

    def add_case(p, t, hashed=False):
        pi, ti = add_pattern(p), add_text(t)
        ref, flags = to_reference(p)
        rx = regex.compile(ref, flags)
        offs = byte_offsets(t)
        ms = [(offs[s], offs[e]) for s, e in onig_matches(rx, t)]
        if hashed:
            h = fnv1a64("".join("%d,%d;" % m for m in ms).encode())
            records.append("H %d %d %d %016x" % (pi, ti, len(ms), h))
        else:
            flat = " ".join("%d %d" % m for m in ms)
            records.append(("M %d %d %d %s" % (pi, ti, len(ms), flat)).rstrip())

    for pattern, ts in CONSTRUCTS:
        for t in ts:
            add_case(pattern, t)
    big = [long_text(rng, 120_000), long_text(rng, 30_000)]
    run_segments = [[(60_000, " "), (1, "x"), (40_000, " ")],
                    [(50_000, "a"), (50_000, "A"), (20_000, "1")],
                    [(30_000, "\r\n"), (20_000, "\n"), (20_000, " \t")]]
    runs = []
    for segs in run_segments:
        t = "".join(u * k for k, u in segs)
        segments[t] = segs
        runs.append(t)
    for _, pattern, _ in REAL:
        for t in SHORT_TEXTS:
            add_case(pattern, t)
        for t in big:
            add_case(pattern, t, hashed=True)
        for t in runs:
            if "$" in pattern or "(?=(?:" in pattern:
                continue  # quadratic on long runs in every backtracking engine (Oniguruma too)
            add_case(pattern, t, hashed=True)
    orbit = fold_orbits()
    for p in CLASS_PATTERNS:
        pi = add_pattern(p)
        member = class_member_fn(p, orbit)
        ranges = []
        start = None
        for cp in range(0x110001):
            m = cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF and member(chr(cp))
            if 0xD800 <= cp <= 0xDFFF:
                continue  # not characters: ranges may span them, the test skips them
            if m and start is None:
                start = cp
            elif not m and start is not None:
                ranges.append((start, cp - 1))
                start = None
        flat = " ".join("%d %d" % r for r in ranges)
        records.append(("C %d %d %s" % (pi, len(ranges), flat)).rstrip())

    with open(OUT, "wb") as f:
        f.write(b"# Reference matches for runtime/text/regex (Oniguruma semantics, HF find_iter).\n")
        # The regex module carries its own Unicode tables (not unicodedata's).
        tables = "15.0 or later" if regex.match(r"\p{L}", "\U00011F04") else "before 15.0"
        f.write(("# Made by tests/text/gen_regex_cases.py (seed %d) with Python %s, regex %s "
                 "(Unicode %s). Do not edit.\n" % (SEED, sys.version.split()[0],
                                                   regex.__version__, tables)).encode())
        f.write(("# Patterns: %s\n" % "; ".join("%s = %s" % (n, s) for n, _, s in REAL)).encode())
        for p in patterns:
            b = p.encode()
            f.write(b"P %d\n" % len(b) + b + b"\n")
        for t in texts:
            segs = segments.get(t, [(1, t)])
            f.write(b"T %d\n" % len(segs))
            for k, u in segs:
                b = u.encode()
                f.write(b"%d %d\n" % (k, len(b)) + b + b"\n")
        for r in records:
            f.write(r.encode() + b"\n")
    print("wrote %s: %d patterns, %d texts, %d records" % (OUT, len(patterns), len(texts),
                                                           len(records)))


if __name__ == "__main__":
    main()
