"""The six Jane Austen novels from Debian's r-cran-janeaustenr, as plain text, and the split.

The package stores each novel as an R character vector (one element per printed line of the
Project Gutenberg text). Rscript writes them out; here hard-wrapped lines are joined into
paragraphs and the last HELDOUT_FRACTION of each novel (whole paragraphs) is held out.
"""
import os
import subprocess

# In publication order. The names are the package's data sets.
NOVELS = ["sensesensibility", "prideprejudice", "mansfieldpark", "emma", "northangerabbey",
          "persuasion"]
HELDOUT_FRACTION = 0.02

R_EXPORT = r"""
args <- commandArgs(trailingOnly = TRUE)
suppressPackageStartupMessages(library(janeaustenr))
for (name in args[-1]) {
  writeLines(enc2utf8(get(name)), file.path(args[1], paste0(name, ".txt")), useBytes = TRUE)
}
cat(as.character(packageVersion("janeaustenr")), "\n")
"""


def export_novels(out_dir):
    """Writes out_dir/<novel>.txt with Rscript; returns the janeaustenr version."""
    os.makedirs(out_dir, exist_ok=True)
    try:
        done = subprocess.run(["Rscript", "-e", R_EXPORT, out_dir] + NOVELS, check=True,
                              capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"Rscript could not export the novels ({e}); "
                         "install them with: apt-get install -y r-cran-janeaustenr") from e
    return done.stdout.strip()


def paragraphs(raw):
    """Lines -> paragraphs: blank lines separate paragraphs, the lines of one are joined by a
    space (each stripped of its indentation)."""
    out, cur = [], []
    for line in raw.splitlines():
        line = line.strip()
        if line:
            cur.append(line)
        elif cur:
            out.append(" ".join(cur))
            cur = []
    if cur:
        out.append(" ".join(cur))
    return out


def split(paras, fraction):
    """(train paragraphs, held-out paragraphs): the held-out part is the shortest tail of whole
    paragraphs holding at least `fraction` of the characters."""
    total = sum(len(p) for p in paras)
    tail, k = 0, len(paras)
    while k > 0 and tail < fraction * total:
        k -= 1
        tail += len(paras[k])
    return paras[:k], paras[k:]


def load(raw_dir):
    """{novel: (train text, held-out text)}, paragraphs separated by a blank line."""
    out = {}
    for name in NOVELS:
        with open(os.path.join(raw_dir, name + ".txt"), encoding="utf-8") as f:
            train, held = split(paragraphs(f.read()), HELDOUT_FRACTION)
        out[name] = ("\n\n".join(train), "\n\n".join(held))
    return out
