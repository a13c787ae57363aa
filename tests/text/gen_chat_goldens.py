#!/usr/bin/env python3
"""Renders every chat template in chat_templates/ for every message list in
chat_templates/messages/ with Python's jinja2, set up as transformers'
apply_chat_template sets it up, and writes chat_templates/goldens/<template>.golden.

The environment (transformers, utils/chat_template_utils.py):
  ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                extensions=[AssistantTracker, loopcontrols])
  filters["tojson"] = json.dumps(x, ensure_ascii=False, indent, separators, sort_keys)
  globals["raise_exception"] raises TemplateError(message)
  globals["strftime_now"] = datetime.now().strftime  (fixed here: NOW below)
  render(messages=..., tools=None, documents=None, add_generation_prompt=...,
         bos_token=..., eos_token=...)   (special tokens only when the config has them)

Golden format, per case:
  case <messages> <add_generation_prompt 0|1> <ok|raise|error> <byte length>\\n<bytes>\\n
ok: the rendered text; raise: raise_exception's message; error: jinja2's
exception type and message (the renderer must fail too; its text may differ).

Usage: python3 tests/text/gen_chat_goldens.py   (Debian: apt-get install python3-jinja2)
"""
import datetime
import json
import os
import sys

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "chat_templates")
NOW = datetime.datetime(2024, 7, 26, 10, 30, 0)
NOW_ARG = "2024-07-26 10:30:00"  # chat_template_render --now / the doctest suite


class Raised(Exception):
    pass


class AssistantTracker(jinja2.ext.Extension):
    """transformers' {% generation %} tag: renders its body unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.Scope(body).set_lineno(lineno)


def make_env():
    def raise_exception(message):
        raise Raised(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(fmt):
        return NOW.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, source, messages, add_generation_prompt, bos, eos):
    kwargs = {}
    if bos is not None:
        kwargs["bos_token"] = bos
    if eos is not None:
        kwargs["eos_token"] = eos
    try:
        text = env.from_string(source).render(messages=messages, tools=None, documents=None,
                                              add_generation_prompt=add_generation_prompt,
                                              **kwargs)
        return "ok", text
    except Raised as e:
        return "raise", str(e)
    except Exception as e:  # jinja2's UndefinedError, TypeError, ...
        return "error", "%s: %s" % (type(e).__name__, e)

# One construct each, rendered for messages/basic.json with add_generation_prompt
# true, bos "<s>", eos "</s>"; written to goldens/units.golden as
#   unit <name> <ok|raise|error> <source bytes> <output bytes>\n<source>\n<output>\n
UNITS = [
    ("text", "plain text\nline two"),
    ("trailing_newline", "one newline at the end is dropped\n"),
    ("two_trailing_newlines", "keeps one\n\n"),
    ("crlf", "a\r\nb\rc\n{% if true %}\r\nx{% endif %}"),
    ("comment", "a{# c #}\nb {# another\nline #} c"),
    ("comment_lstrip", "a\n   {# c #}\nb"),
    ("comment_minus", "a   {#- c -#}   b"),
    ("trim_blocks", "{% if true %}\nyes\n{% endif %}\nafter"),
    ("lstrip_blocks", "x\n    {% if true %}\n    y\n    {% endif %}\nz"),
    ("lstrip_not_vars", "x\n    {{ 'v' }}\nz"),
    ("lstrip_plus", "x\n    {%+ if true %}y{% endif %}"),
    ("trim_plus", "{% if true +%}\ny{% endif %}"),
    ("minus_both", "a  \n  {%- if true -%}  \n  b  \n  {%- endif -%}  \n  c"),
    ("var_minus", "a \n {{- 'b' -}} \n c"),
    ("lstrip_text_before", "x {% if true %}y{% endif %}"),
    ("unicode_space_strip", "a\u3000{{- 'b' -}}\u3000c"),
    ("if_elif_else", "{% for x in [1, 2, 3, 4] %}{% if x == 1 %}one{% elif x == 2 %}two{% elif x == 3 %}three{% else %}many{% endif %},{% endfor %}"),
    ("loop_vars", "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}|{% endfor %}"),
    ("loop_prev_next", "{% for x in [1, 2, 3] %}{{ loop.previtem }}<{{ x }}>{{ loop.nextitem }};{% endfor %}"),
    ("loop_else", "{% for x in [] %}x{% else %}empty{% endfor %}{% for x in [1] %}{{ x }}{% else %}no{% endfor %}"),
    ("loop_filter", "{% for m in messages if m.role != 'system' %}{{ loop.index }}/{{ loop.length }}:{{ m.role }} {% endfor %}"),
    ("loop_unpack", "{% for k, v in {'a': 1, 'b': [2, 3]}.items() %}{{ k }}={{ v }};{% endfor %}"),
    ("loop_dict", "{% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %}"),
    ("break_continue", "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}"),
    ("nested_loops", "{% for i in range(3) %}{% for j in range(i) %}{{ i }}{{ j }}{{ loop.index }} {% endfor %}{{ loop.index }}|{% endfor %}"),
    ("set_scope", "{% set x = 1 %}{% for i in [1, 2] %}{{ x }}{% set x = i * 10 %}{{ x }} {% endfor %}{{ x }}{% if true %}{% set x = 5 %}{% endif %}{{ x }}"),
    ("set_tuple", "{% set a, b = 1, 'two' %}{{ a }}{{ b }}{% set t = 1, 2 %}{{ t }}"),
    ("set_block", "{% set block %}Hello {{ messages[1].content }}{% endset %}[{{ block }}]"),
    ("namespace", "{% set ns = namespace(count=0, found=false) %}{% for m in messages %}{% set ns.count = ns.count + 1 %}{% if m.role == 'user' %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.count }} {{ ns.found }} {{ ns.missing is defined }}"),
    ("namespace_new_attr", "{% set ns = namespace() %}{% set ns.index = 0 %}{% set ns.index = ns.index + 2 %}{{ ns.index }}"),
    ("macro", "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('a') }} {{ greet('b', '?') }} {{ greet(punct='.', name='c') }}"),
    ("macro_scope", "{% set outer = 'o' %}{% macro m(x) %}{{ outer }}{{ x }}{% set outer = 'inner' %}{{ outer }}{% endmacro %}{{ m(1) }}{{ outer }}"),
    ("macro_undefined_arg", "{% macro m(a, b) %}[{{ a }}][{{ b }}]{% endmacro %}{{ m(1) }}"),
    ("loop_scratch_escapes", "{% set ns = namespace(items=[], text='') %}{% for m in messages %}{% set tmp = m.role ~ '!' %}{% set ns.items = ns.items + [tmp, m.content[:3]] %}{% set ns.text = ns.text ~ tmp %}{% endfor %}{{ ns.items }} {{ ns.text }}"),
    ("loop_in_macro_capture", "{% macro m(n) %}{% for i in range(n) %}{{ 'abcdefghij' * 3 }}{{ i }}{% set junk = [i] * 20 %}{% endfor %}{% endmacro %}{% set block %}{% for i in range(3) %}<{{ m(i * 10) }}>{% endfor %}{% endset %}{{ block|length }} {{ block[:80] }} {{ m(40)|length }}"),
    ("generation_tag", "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% endif %}{% endfor %}"),
    ("literals", "{{ 1 }} {{ -2 }} {{ 1_000 }} {{ 1.5 }} {{ 2.0 }} {{ 1e3 }} {{ 1.5e-7 }} {{ 'a' 'b' \"c\" }} {{ true }} {{ False }} {{ none }} {{ None }}"),
    ("floats", "{{ 0.1 + 0.2 }} {{ 10 / 4 }} {{ 10 / 5 }} {{ 1e16 }} {{ 1.5e16 }} {{ 123456789012345.6 }} {{ 0.0001 }} {{ 0.00001 }} {{ -0.0 }} {{ 1/3 }} {{ 2 ** 0.5 }} {{ 100.0 * 3 }}"),
    ("int_math", "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 3 * 4 - 5 + 1 }} {{ (1 + 2) * 3 }} {{ -3 ** 2 }} {{ 2 ** 3 ** 2 }}"),
    ("bool_math", "{{ true + 1 }} {{ true == 1 }} {{ 1 == 1.0 }} {{ false * 3 }}"),
    ("string_ops", "{{ 'ab' + 'cd' }} {{ 'ab' ~ 1 ~ none ~ undefined_var ~ [1] }} {{ 'ab' * 3 }} {{ 2 * 'x' }} {{ 'x' * 0 }}"),
    ("list_ops", "{{ [1, 2] + [3] }} {{ [1] * 3 }} {{ [1, 'a', none, true, 1.5, [2], {'k': 'v'}] }} {{ ('a',) }} {{ (1, 2) }} {{ [] }} {{ {} }}"),
    ("repr_strings", "{{ ['it\\'s', 'say \"hi\"', 'both \\' \"', 'new\\nline', 'tab\\t', 'back\\\\slash', '\\x01', 'é'] }}"),
    ("dict_literal", "{% set d = {'a': 1, 'b': 'two', 'a': 3} %}{{ d }} {{ d.a }} {{ d['b'] }} {{ d.get('c', 'dflt') }} {{ d.get('c') }} {{ d.get('a') }} {{ d|length }}"),
    ("dict_methods", "{% set d = {'x': 1, 'y': 2} %}{{ d.keys() }} {{ d.values() }} {{ d.items() }} {{ d.items()|list }} {{ d|items|list }}"),
    ("attr_item", "{{ messages[0].role }} {{ messages[0]['content'] }} {{ messages[-1].content }} {{ messages[10] is defined }} {{ messages.0.role }} {{ messages[0].nope is defined }} {{ 'abc'.nope is defined }}"),
    ("slices", "{{ [1, 2, 3, 4, 5][1:] }} {{ [1, 2, 3, 4, 5][:-2] }} {{ [1, 2, 3, 4, 5][::-1] }} {{ [1, 2, 3, 4, 5][::2] }} {{ [1, 2, 3, 4, 5][4:1:-2] }} {{ [1, 2, 3][5:] }} {{ 'hello'[1:3] }} {{ 'hello'[::-1] }} {{ 'héllo wörld'[1:8] }} {{ 'héllo'[::-1] }} {{ 'ab'[-5:] }}"),
    ("string_index", "{{ 'héllo'[1] }} {{ 'abc'[-1] }} {{ 'abc'[5] is defined }}"),
    ("messages_slice", "{% set rest = messages[1:] %}{{ rest|length }} {{ rest[0].role }} {{ messages[:1][0].content }}"),
    ("compare", "{{ 1 < 2 }} {{ 2 <= 2 }} {{ 'a' < 'b' }} {{ 'b' > 'ab' }} {{ [1, 2] < [1, 3] }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 != 1.0 }} {{ none == none }} {{ 'a' == 'a' }} {{ [1, [2]] == [1, [2]] }} {{ {'a': 1, 'b': 2} == {'b': 2, 'a': 1} }}"),
    ("in_operator", "{{ 'ell' in 'hello' }} {{ '' in 'x' }} {{ 2 in [1, 2] }} {{ 'a' in {'a': 1} }} {{ 'x' not in 'abc' }} {{ 'role' in messages[0] }} {{ 'tool_calls' in messages[0] }} {{ 1 in undefined_thing }}"),
    ("logic", "{{ true and 'x' }} {{ false and 'x' }} {{ '' or 'default' }} {{ 'a' or 'b' }} {{ not '' }} {{ not none }} {{ 0 or [] or 'last' }} {{ none or 0 }}"),
    ("conditional_expr", "{{ 'yes' if messages else 'no' }} {{ 'x' if false }}|{{ 1 if 0 else 2 if 0 else 3 }}"),
    ("undefined", "[{{ nothing }}] {{ nothing is defined }} {{ nothing is undefined }} {{ nothing|length }} {{ nothing|default('d') }} {{ nothing|trim }}|{% for x in nothing %}x{% endfor %}{{ nothing is iterable }} {{ nothing is sequence }} {{ nothing is string }} {{ not nothing }} {{ nothing == nothing }}"),
    ("tests", "{{ 'a' is string }} {{ 1 is number }} {{ 1.5 is number }} {{ true is number }} {{ 1 is integer }} {{ true is integer }} {{ 1.0 is float }} {{ true is boolean }} {{ none is none }} {{ {} is mapping }} {{ [] is mapping }} {{ [] is iterable }} {{ 'x' is iterable }} {{ 1 is iterable }} {{ [] is sequence }} {{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 1 is eq 1 }} {{ 2 is gt 1 }} {{ 'a' is in 'abc' }} {{ none is sameas none }} {{ 1 is not string }} {{ 'x' is equalto 'x' }} {{ messages[0] is defined }}"),
    ("filter_trim", "[{{ '  a b \n'|trim }}] [{{ 'xxaxx'|trim('x') }}] [{{ messages[0].content|trim }}] [{{ 5|trim }}]"),
    ("filter_case", "{{ 'hello WORLD'|upper }} {{ 'Hello WORLD'|lower }} {{ 'hello wORLD-foo (bar)'|title }} {{ 'hello WORLD'|capitalize }} {{ 'user'|title }}"),
    ("filter_length", "{{ messages|length }} {{ messages|count }} {{ 'héllo'|length }} {{ {'a': 1}|length }} {{ ''|length }}"),
    ("filter_first_last", "{{ messages|first }} {{ (messages|last).role }} {{ [1, 2, 3]|first }} {{ [1, 2, 3]|last }} {{ 'abc'|first }} {{ 'abc'|last }} {{ []|first is defined }}"),
    ("filter_join", "{{ [1, 'a', none]|join }} {{ ['a', 'b']|join(', ') }} {{ messages|join(';', attribute='role') }} {{ 'abc'|join('-') }}"),
    ("filter_replace", "{{ 'aaa'|replace('a', 'bb') }} {{ 'aaa'|replace('a', 'b', 2) }} {{ 'abc'|replace('', '-') }} {{ 'héllo'|replace('é', 'e') }} {{ 'a.b'.replace('.', '::') }}"),
    ("filter_default", "{{ undefined_x|default('dflt') }} {{ undefined_x|d('d2') }} {{ ''|default('empty') }} {{ ''|default('empty', true) }} {{ none|default('n') }} {{ 0|default('z', boolean=true) }}"),
    ("filter_string_int_float", "{{ 5|string }} {{ [1]|string }} {{ '42'|int + 1 }} {{ '4.7'|int }} {{ 'x'|int }} {{ 'x'|int(7) }} {{ 3.9|int }} {{ '1_000'|int }} {{ '2.5'|float }} {{ 3|float }} {{ 'no'|float }} {{ true|int }}"),
    ("filter_list_reverse", "{{ 'abc'|list }} {{ {'a': 1}|list }} {{ [1, 2, 3]|reverse|list }} {{ 'héllo'|reverse }} {{ messages|reverse|map(attribute='role')|list }}"),
    ("filter_abs_safe", "{{ -3|abs }} {{ (-3)|abs }} {{ -2.5|abs }} {{ '<b>'|safe }}"),
    ("filter_selectattr", "{{ messages|selectattr('role', 'equalto', 'user')|list|length }} {{ messages|rejectattr('role', 'equalto', 'user')|map(attribute='role')|list }} {% for m in messages|selectattr('role', 'eq', 'assistant') %}{{ m.content }}{% endfor %} {{ [{'a': 1}, {'a': 0}, {}]|selectattr('a')|list }} {{ messages|selectattr('tool_calls', 'undefined')|list|length }} {{ messages|selectattr('tool_calls', 'defined')|list|length }}"),
    ("filter_map", "{{ messages|map(attribute='role')|join(',') }} {{ ['a', 'B']|map('upper')|list }} {{ [{'x': 1}, {}]|map(attribute='x', default=0)|list }}"),
    ("filter_indent", "[{{ 'a\nb\n\nc'|indent }}] [{{ 'a\nb'|indent(2, true) }}] [{{ 'a\n\nb'|indent(2, blank=true) }}] [{{ 'x\n'|indent('> ') }}] [{{ ''|indent }}] [{{ 'a\r\nb'|indent(1) }}]"),
    ("tojson", "{{ messages[0]|tojson }} {{ [1, 2.5, none, true, 'é\"\\\\\n\x01'] | tojson }} {{ {'b': 1, 'a': [1, {}], 'c': []}|tojson(indent=2) }} {{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }} {{ {'a': [1, 2]}|tojson(separators=(',', ':')) }} {{ 'x'|tojson }} {{ {'k': {'n': [[]]}}|tojson(indent=4) }} {{ {1: 'int key', none: 'n'}|tojson }}"),
    ("tojson_undefined", "{{ nothing|tojson }}"),
    ("string_methods", "[{{ '  x  '.strip() }}] [{{ 'xxaxx'.strip('x') }}] [{{ '  x  '.lstrip() }}] [{{ '  x  '.rstrip() }}] [{{ '\n\nx\n'.lstrip('\n') }}] {{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a b c'.split(none, 1) }} {{ 'hello'.startswith('he') }} {{ 'hello'.endswith('lo') }} {{ 'hello'.startswith(('x', 'h')) }} {{ 'hi'.upper() }} {{ 'HI'.lower() }} {{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }} {{ 'a-b'.replace('-', '+') }}"),
    ("split_think", "{% set c = '<think>\nr\n</think>\n\nanswer' %}[{{ c.split('</think>')[-1].lstrip('\n') }}] [{{ c.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') }}]"),
    ("range", "{{ range(3)|list }} {{ range(1, 4)|list }} {{ range(10, 0, -3)|list }} {{ range(0)|list }} {% for i in range(2, 5) %}{{ i }}{% endfor %}"),
    ("strftime_now", "{{ strftime_now('%d %b %Y') }} {{ strftime_now('%Y-%m-%d %H:%M:%S %A %B %j') }} {{ strftime_now('') }}|"),
    ("dict_global", "{{ dict(a=1, b='x') }}"),
    ("special_vars", "{{ bos_token }}|{{ eos_token }}|{{ add_generation_prompt }}|{{ tools }}|{{ documents }}|{{ tools is none }}|{{ unk_token is defined }}"),
    ("raise", "{% if messages|length > 1 %}{{ raise_exception('Too many: ' ~ messages|length) }}{% endif %}"),
    ("error_attr_of_undefined", "{{ nothing.attr }}"),
    ("error_item_of_undefined", "{{ nothing['x'] }}"),
    ("error_add_types", "{{ 'a' + 1 }}"),
    ("error_add_undefined", "{{ 'a' + nothing }}"),
    ("error_call_undefined", "{{ nothing() }}"),
    ("error_not_iterable", "{% for x in 5 %}{% endfor %}"),
    ("error_ns_assign", "{% set x = 1 %}{% set x.y = 2 %}"),
    ("error_compare", "{{ 1 < 'a' }}"),
    ("error_div_zero", "{{ 1 / 0 }}"),
    ("error_range_too_big", "{% for i in range(10**9) %}{% endfor %}"),
    ("error_len_int", "{{ 5|length }}"),
    ("error_in_int", "{{ 1 in 5 }}"),
    ("error_empty_messages_index", "{{ messages[5]['role'] }}"),
    ("error_macro_extra_args", "{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}"),
    ("error_unpack", "{% for a, b in [1, 2] %}{% endfor %}"),
    ("error_strftime_arg", "{{ strftime_now(1) }}"),
]


def write_units(env):
    messages = json.load(open(os.path.join(DIR, "messages", "basic.json"), encoding="utf-8"))
    out = bytearray()
    out += ("# one construct per case, rendered by jinja2 %s (Python %s) for messages/basic.json, "
            "add_generation_prompt true, bos <s>, eos </s>, strftime_now at %s; made by "
            "tests/text/gen_chat_goldens.py\n" % (jinja2.__version__, sys.version.split()[0],
                                                  NOW_ARG)).encode()
    for name, source in UNITS:
        kind, text = render(env, source, messages, True, "<s>", "</s>")
        src = source.encode("utf-8")
        data = text.encode("utf-8")
        out += ("unit %s %s %d %d\n" % (name, kind, len(src), len(data))).encode()
        out += src + b"\n" + data + b"\n"
    with open(os.path.join(DIR, "goldens", "units.golden"), "wb") as f:
        f.write(bytes(out))
    return len(UNITS)


def main():
    env = make_env()
    templates = json.load(open(os.path.join(DIR, "templates.json"), encoding="utf-8"))
    message_dir = os.path.join(DIR, "messages")
    message_names = sorted(f[:-5] for f in os.listdir(message_dir) if f.endswith(".json"))
    out_dir = os.path.join(DIR, "goldens")
    os.makedirs(out_dir, exist_ok=True)
    for t in templates:
        source = open(os.path.join(DIR, t["name"] + ".jinja"), encoding="utf-8").read()
        out = bytearray()
        header = ("# %s.jinja rendered by jinja2 %s (Python %s) with transformers' chat "
                  "environment; strftime_now fixed at %s; made by tests/text/gen_chat_goldens.py\n"
                  % (t["name"], jinja2.__version__, sys.version.split()[0], NOW_ARG))
        out += header.encode()
        for tok in ("bos", "eos"):
            out += (("%s =%s\n" % (tok, t[tok])) if t[tok] is not None else ("%s !\n" % tok)).encode()
        for m in message_names:
            messages = json.load(open(os.path.join(message_dir, m + ".json"), encoding="utf-8"))
            for gen in (1, 0):
                kind, text = render(env, source, messages, bool(gen), t["bos"], t["eos"])
                data = text.encode("utf-8")
                out += ("case %s %d %s %d\n" % (m, gen, kind, len(data))).encode()
                out += data + b"\n"
        with open(os.path.join(out_dir, t["name"] + ".golden"), "wb") as f:
            f.write(bytes(out))
    n = write_units(env)
    print("wrote %d template golden files and %d unit cases to %s"
          % (len(templates), n, os.path.relpath(out_dir, HERE)))


if __name__ == "__main__":
    main()
