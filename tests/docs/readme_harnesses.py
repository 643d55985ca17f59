#!/usr/bin/python3
"""README.md's agent sections say what the harness tests find (issue 36).

README.md said for months that Claude Code newer than 2.1.197 crashes under
the shim, while tests/harnesses ran the newest release (2.1.332) and it
passed every check. So, on README.md's section of each agent ("### Claude
Code (`@anthropic-ai/claude-code` 2.1.197)" and the others):

- the package and version in its heading are the pinned ones of
  tests/harnesses/test_harnesses.py (PACKAGES);
- a line that names a version and says it fails (crashes, segfaults, fails,
  does not work...) is allowed only while that harness has a known failure
  in the harness tests' list (KNOWN_CASE, KNOWN), and such a failure must
  have its line there: the README says what is true of each agent's newest
  release, and only what the tests found.

No network, no harness is run: the lists are read from test_harnesses.py.
TAP on stdout. Usage: readme_harnesses.py SOURCE_DIR
"""
import os
import re
import sys

FAILS = re.compile(r"\b(crash\w*|segfault\w*|SIGSEGV|fails?|failing|failed|broken|"
                   r"does not (work|start|run)|can not (start|run))\b", re.I)
VERSION = re.compile(r"\b\d+\.\d+\.\d+\b")
HEADING = re.compile(r"^### (?P<title>.+?) \(`(?P<pkg>[^`]+)` (?P<ver>[^)\s]+)\)\s*$")


def sections(readme):
    """{package: (heading line number, version, [(line number, text)])} for
    each agent's section, from its heading to the next heading, as blocks:
    a bullet with its wrapped lines, or a paragraph, joined into one text
    (a claim is often wrapped: "newer than 2.1.197 calls ... and" / "crashes")."""
    out, cur, block = {}, None, None
    for n, line in enumerate(readme.splitlines(), 1):
        m = HEADING.match(line)
        if m or line.startswith("#"):
            cur = out.setdefault(m["pkg"], (n, m["ver"], [])) if m else None
            block = None
            continue
        if not cur:
            continue
        if not line.strip():
            block = None
        elif block is None or re.match(r"^\s*([-*]|\d+\.) ", line):
            block = [n, line.strip()]
            cur[2].append(block)
        else:
            block[1] += " " + line.strip()
    return {k: (at, v, [tuple(b) for b in blocks]) for k, (at, v, blocks) in out.items()}


def prose(text):
    """TEXT without its `code` spans: what a harness or git prints is quoted
    that way (Gemini's "Failed to resolve path", `git version 2.39.5`)."""
    return re.sub(r"`[^`]*`", "", text)


def known_failures(th, name):
    """The reasons the harness tests list for NAME, whole cases and checks."""
    why = [r for (h, _), r in th.KNOWN_CASE.items() if h == name]
    why += [r for k, r in th.KNOWN.items() if k and k[0] == name]
    return why


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    sys.dont_write_bytecode = True  # nothing written into the checkout
    sys.path.insert(0, os.path.join(src, "tests", "harnesses"))
    import test_harnesses as th  # noqa: E402 (its PACKAGES, KNOWN, KNOWN_CASE)
    with open(os.path.join(src, "README.md"), encoding="utf-8") as f:
        secs = sections(f.read())
    n, failed = 0, 0

    def check(ok, desc, detail=""):
        nonlocal n, failed
        n += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", n, desc))
        if not ok:
            failed += 1
            for line in detail.splitlines():
                print("#   " + line)

    for name, (pkg, ver, _) in sorted(th.PACKAGES.items()):
        sec = secs.get(pkg)
        check(sec is not None, "README.md has a section for %s (%s)" % (name, pkg),
              "no heading '### ... (`%s` %s)'" % (pkg, ver))
        if not sec:
            continue
        at, said, lines = sec
        check(said == ver, "%s: README.md names the pinned version %s" % (name, ver),
              "line %d names %s; tests/harnesses pins %s" % (at, said, ver))
        claims = [(k, t) for k, t in lines if VERSION.search(prose(t)) and FAILS.search(prose(t))]
        why = known_failures(th, name)
        check(not claims or why,
              "%s: a failure README.md states is in the harness tests' list" % name,
              "".join("line %d says a version fails: %s\n" % (k, t) for k, t in claims) +
              "tests/harnesses (KNOWN_CASE, KNOWN) lists no failure of %s: "
              "it passes every check, pinned and @latest; say so, or add the failure there"
              % name)
        said_fails = [t for _, t in lines if FAILS.search(prose(t))]
        check(not why or said_fails,
              "%s: a known failure of the harness tests is in README.md" % name,
              "tests/harnesses lists: %s\nbut README.md's section says nothing fails"
              % "; ".join(why))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
