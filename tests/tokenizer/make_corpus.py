#!/usr/bin/env python3
"""Writes corpus.jsonl: one JSON string per line, the texts every tokenizer golden is made from.

The hand-written lines come first; the generated ones cover what is tedious to type (NFC/NFD pairs,
numbers of every length, whitespace runs, each model's special-token strings and near-misses).
Escapes (\\uXXXX) keep invisible characters visible in this file. Run: python3 make_corpus.py
"""
import json
import os
import unicodedata

HAND = [
    # English prose (Austen, public domain) and plain sentences.
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.",
    "The family of Dashwood had long been settled in Sussex.",
    "Emma Woodhouse, handsome, clever, and rich, with a comfortable home and happy disposition, seemed to unite some of the best blessings of existence;",
    "Sir Walter Elliot, of Kellynch Hall, in Somersetshire, was a man who, for his own amusement, never took up any book but the Baronetage;",
    "No one who had ever seen Catherine Morland in her infancy would have supposed her born to be an heroine.",
    "About thirty years ago Miss Maria Ward, of Huntingdon, with only seven thousand pounds, had the good luck to captivate Sir Thomas Bertram.",
    "\"My dear Mr. Bennet,\" said his lady to him one day, \"have you heard that Netherfield Park is let at last?\"",
    "Mr. Bennet replied that he had not.\n\n\"But it is,\" returned she; \"for Mrs. Long has just been here, and she told me all about it.\"",
    "I'M here. I'm here. I'm HERE! Don't. DON'T. don't. Won't you? WON'T YOU? they'll, THEY'LL, we've, WE'VE, she'd, SHE'D, it's, IT'S",
    "Hello world",
    "hello",
    " Hello",
    "HELLO WORLD!!!",
    "The quick brown fox jumps over the lazy dog.",
    "A man, a plan, a canal: Panama.",
    "e.g. i.e. etc. Mr. Mrs. Dr. St. a.m. p.m. U.S.A.",
    "Well—I never! It's a so-called \"state-of-the-art\" … thing; isn't it?",
    "\u2018single quotes\u2019 and \u201cdouble quotes\u201d and \u00abguillemets\u00bb and \u201elow\u201c",
    # Chinese, Japanese, Korean.
    "\u6211\u7231\u5317\u4eac\u5929\u5b89\u95e8\u3002",
    "\u4eca\u5929\u5929\u6c14\u5f88\u597d\uff0c\u6211\u4eec\u53bb\u516c\u56ed\u6563\u6b65\u5427\uff01",
    "\u4eba\u5de5\u667a\u80fd\uff08AI\uff09\u6b63\u5728\u6539\u53d8\u4e16\u754c\uff0c2024\u5e74\u7684\u6a21\u578b\u66f4\u5927\u4e86\u3002",
    "\u7e41\u9ad4\u4e2d\u6587\uff1a\u9019\u662f\u4e00\u500b\u6e2c\u8a66\u3002",
    "\u543e\u8f29\u306f\u732b\u3067\u3042\u308b\u3002\u540d\u524d\u306f\u307e\u3060\u7121\u3044\u3002",
    "\u3072\u3089\u304c\u306a\u3068\u30ab\u30bf\u30ab\u30ca\u3068\u6f22\u5b57\u3092\u6df7\u305c\u305f\u6587\u7ae0\u3067\u3059\u3002",
    "\u30b3\u30f3\u30d4\u30e5\u30fc\u30bf\u30fc\u3067\u30d7\u30ed\u30b0\u30e9\u30df\u30f3\u30b0\u3092\u3057\u307e\u3057\u3087\u3046\uff01",
    "\uff76\uff80\uff76\uff85 \uff8a\uff9d\uff76\uff78 (half-width katakana)",
    "\uc548\ub155\ud558\uc138\uc694, \uc138\uacc4! \ud55c\uad6d\uc5b4 \ubb38\uc7a5\uc785\ub2c8\ub2e4.",
    "\ub300\ud55c\ubbfc\uad6d\uc758 \uc218\ub3c4\ub294 \uc11c\uc6b8\uc774\ub2e4.",
    # Korean with decomposed (conjoining) jamo: \u1100.. leading, \u1161.. vowel, \u11a8.. trailing.
    "\u1112\u1161\u11ab\u1100\u1173\u11af decomposed jamo",
    "\u1100\u1161\u1102\u1161\u1103\u1161 \u3131\u314f \u314e\u314f\u3134 (compatibility jamo)",
    # Arabic (with and without harakat), Hebrew.
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\u0627\u0644\u0652\u0639\u064e\u0631\u064e\u0628\u0650\u064a\u064e\u0651\u0629\u064f \u0644\u064f\u063a\u064e\u0629\u064c \u062c\u064e\u0645\u0650\u064a\u0644\u064e\u0629\u064c",
    "\u0628\u0650\u0633\u0652\u0645\u0650 \u0671\u0644\u0644\u0651\u064e\u0670\u0647\u0650 \u0671\u0644\u0631\u0651\u064e\u062d\u0652\u0645\u064e\u0670\u0646\u0650",
    "\u0627\u0644\u0631\u0642\u0645 \u0661\u0662\u0663\u0664\u0665 \u0648\u0627\u0644\u0639\u062f\u062f 12345",
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd! \u05d6\u05d4\u05d5 \u05de\u05d1\u05d7\u05df.",
    "\u05d1\u05bc\u05b0\u05e8\u05b5\u05d0\u05e9\u05c1\u05b4\u05d9\u05ea \u05d1\u05bc\u05b8\u05e8\u05b8\u05d0",
    # Devanagari with conjuncts, Bengali, Tamil, Thai.
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e",
    "\u0915\u094d\u0937\u0924\u094d\u0930\u093f\u092f \u091c\u094d\u091e\u093e\u0928 \u0936\u094d\u0930\u0940 \u0926\u094d\u0935\u093e\u0930 \u0939\u093f\u0928\u094d\u0926\u0940",
    "\u0938\u0902\u0938\u094d\u0915\u0943\u0924\u092e\u094d \u092d\u093e\u0937\u093e \u0966\u0967\u0968\u0969",
    "\u0986\u09ae\u09bf \u09ac\u09be\u0982\u09b2\u09be\u09af\u09bc \u0997\u09be\u09a8 \u0997\u09be\u0987",
    "\u0bb5\u0ba3\u0b95\u0bcd\u0b95\u0bae\u0bcd \u0ba4\u0bae\u0bbf\u0bb4\u0bcd",
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31\u0e1a \u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\u0e44\u0e21\u0e48\u0e21\u0e35\u0e0a\u0e48\u0e2d\u0e07\u0e27\u0e48\u0e32\u0e07\u0e23\u0e30\u0e2b\u0e27\u0e48\u0e32\u0e07\u0e04\u0e33",
    # Cyrillic, Greek (final sigma, accents), Armenian, Georgian.
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u042d\u0442\u043e \u0442\u0435\u0441\u0442 \u043d\u0430 \u0440\u0443\u0441\u0441\u043a\u043e\u043c \u044f\u0437\u044b\u043a\u0435.",
    "\u0423\u041a\u0420\u0410\u0407\u041d\u0421\u042c\u041a\u0410 \u043c\u043e\u0432\u0430: \u0457\u0436\u0430\u043a, \u0491\u0430\u043d\u043e\u043a, \u0454\u0434\u043d\u0456\u0441\u0442\u044c",
    "\u039f\u0394\u03a5\u03a3\u03a3\u0395\u03a5\u03a3 \u1f48\u03b4\u03c5\u03c3\u03c3\u03b5\u03cd\u03c2 \u03bf\u03b4\u03c5\u03c3\u03c3\u03b5\u03c5\u03c2",
    "\u039a\u03b1\u03bb\u03b7\u03bc\u03ad\u03c1\u03b1 \u03ba\u03cc\u03c3\u03bc\u03b5! \u0397 \u03b3\u03bb\u03ce\u03c3\u03c3\u03b1 \u03bc\u03bf\u03c5 \u03b5\u03af\u03bd\u03b1\u03b9 \u03b5\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ae; \u03a3\u03a3\u03a3 \u03c3\u03c3\u03c2",
    "\u1f08\u03c1\u03c7\u1f74 \u1f66 \u1fc6 \u1fb3 \u1f00\u03b3\u03ac\u03c0\u03b7",
    "\u0532\u0561\u0580\u0565\u0582 \u0561\u0577\u056d\u0561\u0580\u0570 \u10d2\u10d0\u10db\u10d0\u10e0\u10ef\u10dd\u10d1\u10d0",
    # Latin with diacritics, German sharp s, Turkish dotted i, Vietnamese.
    "Cr\u00e8me br\u00fbl\u00e9e, na\u00efve caf\u00e9, se\u00f1or, \u00c5ngstr\u00f6m, Stra\u00dfe, STRASSE, \u1e9e",
    "\u0130stanbul \u0131\u015f\u0131k \u0130I\u0131i",
    "Ti\u1ebfng Vi\u1ec7t c\u00f3 nhi\u1ec1u d\u1ea5u: \u0111\u01b0\u1eddng ph\u1ed1 H\u00e0 N\u1ed9i",
    "Za\u017c\u00f3\u0142\u0107 g\u0119\u015bl\u0105 ja\u017a\u0144. P\u0159\u00edli\u0161 \u017elu\u0165ou\u010dk\u00fd k\u016f\u0148.",
    # Emoji: simple, skin tones, ZWJ families and professions, flags, keycaps, variation selectors.
    "I love \U0001f600 and \U0001f355!",
    "\U0001f44d\U0001f3fb \U0001f44d\U0001f3fc \U0001f44d\U0001f3fd \U0001f44d\U0001f3fe \U0001f44d\U0001f3ff",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 family",
    "\U0001f469\U0001f3fd\u200d\U0001f4bb\U0001f9d1\U0001f3ff\u200d\U0001f692 \U0001f3f3\ufe0f\u200d\U0001f308 \U0001f3f4\u200d\u2620\ufe0f",
    "\U0001f1fa\U0001f1f8\U0001f1ef\U0001f1f5\U0001f1e9\U0001f1ea\U0001f1eb\U0001f1f7 flags \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
    "1\ufe0f\u20e3 #\ufe0f\u20e3 \u2764\ufe0f \u2764 \u263a\ufe0e \u2603",
    "\U0001f602\U0001f602\U0001f602\U0001f602\U0001f602\U0001f602\U0001f602\U0001f602",
    "\U0001f9d1\u200d\U0001f91d\u200d\U0001f9d1 \U0001f46f\u200d\u2640\ufe0f \U0001fac3\U0001f3fe",
    # Full-width forms, ligatures, Roman numerals, superscripts, circled, math alphanumerics.
    "\uff28\uff45\uff4c\uff4c\uff4f\u3000\uff37\uff4f\uff52\uff4c\uff44\uff01 \uff11\uff12\uff13 \uff21\uff22\uff23",
    "\ufb01nance \ufb00ort \ufb02ow \ufb03ce \ufb04e \ufb06 ligatures",
    "Chapter \u2163, \u2167, \u216b and \u217b; Louis \u2169\u2163",
    "x\u00b2 + y\u00b3 = z\u2074, H\u2082O, CO\u2082, 10\u207b\u00b3, \u00bd \u00bc \u2153",
    "\u2460\u2461\u2462 \u24b6\u24b7 \u3251 \u2474",
    "\U0001d400\U0001d401\U0001d402 \U0001d4d0\U0001d4d1 \U0001d7ce\U0001d7cf",
    "\u2122 \u00a9 \u00ae \u2120 \u2103 \u2109 \u212b \u2126 \u00b5",
    # Whitespace: runs, tabs, CRLF, NBSP, ideographic space, zero-width chars, controls.
    "two  spaces   three    four     five",
    "tab\there\t\tand\t\t\tmore",
    "line one\r\nline two\r\n\r\nline four\rcr only\n",
    "\n\n\nleading newlines",
    "trailing newlines\n\n\n",
    "non\u00a0breaking\u00a0space and\u202fnarrow\u2009thin\u2003em",
    "ideographic\u3000space\u3000\u3000twice",
    "zero\u200bwidth\u200cnon\u200djoiner\u2060word\ufeffbom",
    "soft\u00adhyphen and\u034fcgj",
    "control \x01\x02\x03 chars \x07 bell \x1b[0m escape \x7f del",
    "null\x00byte inside",
    "form\x0cfeed and vertical\x0btab",
    "line\u2028separator paragraph\u2029separator",
    "\u0085next line",
    # Combining marks (beyond the NFC/NFD pairs generated below).
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dA\u0334\u0335\u031c\u0330\u0354L\u0341\u0368\u0345\u0318G\u0334\u0358\u0314O",
    "a\u0301\u0302\u0303 e\u0308\u0304 o\u031b\u0323",
    "\u0301 starts with a combining mark",
    # Long words and long repeats.
    "Pneumonoultramicroscopicsilicovolcanoconiosis and supercalifragilisticexpialidocious",
    "Donaudampfschifffahrtselektrizit\u00e4tenhauptbetriebswerkbauunterbeamtengesellschaft",
    "a" * 300,
    "ab" * 150,
    "\u6f22" * 120,
    "!" * 64,
    "-" * 80,
    "=" * 33 + ">",
    # Numbers.
    "3.14159 2.71828 1,000,000 1.000.000 1 000 000 -42 +7 0.5 .5 5. 1e10 6.022e23 0x1F 0b1010 007",
    "Call 555-0123 or +1 (555) 012-3456 by 12:30pm on 2024-03-15T09:08:07Z.",
    "$1,234.56 \u20ac99,99 \u00a3100 \u00a55000 \u20b9250 \u20bf0.001 50% 3/4 1:2",
    # Code.
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "class Foo:\n\tdef __init__(self, x=None):\n\t\tself._x = x  # comment\n",
    "import numpy as np\nprint(f\"{np.pi:.3f}\", end='')\n",
    "#include <vector>\nint main() {\n  std::vector<int> v{1, 2, 3};\n  for (auto& x : v) x *= 2;\n  return v.size() > 2 ? 0 : 1;\n}\n",
    "template <typename T> constexpr T sq(T x) noexcept { return x * x; } // C++17",
    "if (a != b && c <= d || !e) { x += y >> 2; p->q = &r; }",
    "{\"name\": \"octet\", \"version\": [1, 2], \"ok\": true, \"nested\": {\"k\": null, \"s\": \"\\u00e9\\n\"}}",
    "<html><head><title>Test</title></head><body class=\"main\">&amp; &lt;tag&gt; &#169;</body></html>",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name DESC LIMIT 10;",
    "$ ls -la /tmp && grep -rn 'TODO' . | wc -l > out.txt 2>&1",
    "fn main() { let v: Vec<u8> = vec![0; 4]; println!(\"{:?}\", v); }",
    "x=1;y=2;z=x+y*3-4/5%6**7//8",
    "    four leading spaces of indentation",
    "        eight leading spaces\n            twelve",
    # URLs, e-mails, paths, hashtags.
    "https://example.com/path/to/page?query=1&lang=en#section",
    "Visit http://www.example.org:8080/~user/index.html or ftp://files.example.net/pub/file.tar.gz",
    "mailto:jane.austen@example.co.uk, first.last+tag@sub.example.com",
    "C:\\Users\\Public\\Documents\\file.txt and ./relative/path/../x.py",
    "#hashtag @mention r/subreddit u/user $TICKER",
    # Mixed scripts in one line.
    "English \u4e2d\u6587 \u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4 \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u0939\u093f\u0928\u094d\u0926\u0940 \u0e44\u0e17\u0e22 \u0420\u0443\u0441\u0441\u043a\u0438\u0439 \u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac \U0001f30d",
    "The word \u201ccaf\u00e9\u201d in \u65e5\u672c\u8a9e is \u30ab\u30d5\u30a7 and in \ud55c\uad6d\uc5b4 is \uce74\ud398.",
    "CamelCaseIdentifier snake_case_identifier kebab-case-identifier SCREAMING_CASE",
    "ALL CAPS SENTENCE WITH NUMBERS 123 AND PUNCTUATION!?",
    "MiXeD cAsE wOrDs",
    # Private use, unassigned, noncharacters, replacement char.
    "private \ue000\uf8ff use \U000f0000",
    "unassigned \u0378 \U0001fbff and nonchar \ufdd0 \uffff",
    "replacement \ufffd char",
    "surrogate-range neighbours \ud7ff \ue000",
    # Byte-fallback bait: rare characters unlikely to be single pieces.
    "\U00013000\U00013001 hieroglyphs \U0001f700 alchemy \U00010330 gothic \u16a0\u16a2 runes",
    "\u2800\u2801\u2803 braille \u4dc0 hexagram \u0f00 tibetan \u1780 khmer",
    "\U00020000\U0002a6d6 CJK extension B",
]


def special_token_lines():
    specials = ["<s>", "</s>", "<unk>", "<pad>", "<mask>", "[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]",
                "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|begin_of_text|>", "<|end_of_text|>",
                "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|reserved_special_token_0|>",
                "<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<|fim_prefix|>", "<extra_id_0>"]
    out = []
    for s in specials:
        out.append(s)
        out.append(f"Hello{s}world")
        out.append(f"Hello {s} world")
    out += [
        "<s>Hello</s>",
        "<s> Hello </s>",
        "[CLS] what is this? [SEP] a test [SEP]",
        "<|im_start|>user\nHi there!<|im_end|>\n<|im_start|>assistant\n",
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>",
        "<start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
        "text<|endoftext|>more text<|endoftext|>",
        "<s><s></s></s>",
        "<s >", "< s>", "<<s>>", "</ s>", "<s/>", "<S>", "[cls]", "[ CLS ]", "[CLS", "CLS]",
        "<|endoftext|", "|endoftext|>", "<|ENDOFTEXT|>", "<|endoftext|>>", "<<|endoftext|>",
        "<|im_start>", "<im_start|>", "<pad><pad><pad>", "<unk>?", "<|begin_of_text|><|begin_of_text|>",
        "<start_of_turn >", "<start_of_turnx>", "<|reserved_special_token_250|>",
    ]
    return out


def nfc_nfd_lines():
    words = ["caf\u00e9", "na\u00efve", "\u00c5ngstr\u00f6m", "r\u00e9sum\u00e9", "\u1ea0\u1ea1\u1ec7", "\u01d5\u01ff",
             "\uac00\ud7a3", "\u304c\u30d1", "\u1e9b\u0323", "\u212b \u2126"]
    out = []
    for w in words:
        nfc = unicodedata.normalize("NFC", w)
        nfd = unicodedata.normalize("NFD", w)
        out.append(f"NFC {nfc} / NFD {nfd}")
        out.append(nfd)
    out.append(unicodedata.normalize("NFKD", "\ufb01 \u2460 \uff21 \u00b2"))
    return out


def number_lines():
    out = []
    digits = "1234567890123456789012345"
    for n in range(1, 26):
        out.append(digits[:n])
    out += ["12", "123", "1234567", "3.14159", "1,000,000", "0", "00", "000", "0.000001",
            "1 2 3 4 5 6 7 8 9 10", "9999999999999999999999", "-0", "1/2", "12th 21st 3rd",
            "\u0967\u0968\u0969 \u0661\u0662\u0663 \uff11\uff12\uff13 \u4e00\u4e8c\u4e09 \u2160\u2161"]
    return out


def whitespace_lines():
    return ["", " ", "  ", "   ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u200b", " \n ", "\t \t",
            " leading", "trailing ", "  both  ", " a", "a ", "\n\ntext\n\n", "word" + " " * 17 + "word",
            "a\tb\nc\rd\x0be\x0cf", "  \u00a0  \u3000  ", "x\u00a0\u00a0y", "end with space ",
            "end with tab\t", "end with newline\n", " \U0001f600 ", "   \u4e2d   "]


def contraction_lines():
    base = ["i'm", "don't", "can't", "won't", "you're", "we've", "he'll", "she'd", "it's", "they're",
            "o'clock", "rock'n'roll", "'quoted'", "y'all'd've"]
    out = []
    for w in base:
        out.append(f"{w} {w.upper()} {w.capitalize()}")
    out.append("I'M DON'T CAN'T ISN'T I\u2019m don\u2019t")
    return out


def main():
    lines = HAND + special_token_lines() + nfc_nfd_lines() + number_lines() + whitespace_lines() \
        + contraction_lines()
    seen, uniq = set(), []
    for t in lines:
        if t not in seen:
            seen.add(t)
            uniq.append(t)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.jsonl")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for t in uniq:
            f.write(json.dumps(t, ensure_ascii=True) + "\n")
    print(f"{len(uniq)} lines -> {path}")


if __name__ == "__main__":
    main()
