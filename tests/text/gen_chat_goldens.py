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
    print("wrote %d golden files to %s" % (len(templates), os.path.relpath(out_dir, HERE)))


if __name__ == "__main__":
    main()
