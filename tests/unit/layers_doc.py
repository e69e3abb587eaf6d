#!/usr/bin/env python3
"""docs/architecture.md's picture of src/'s layers against the build.

The build holds the code to its layers: each folder of src/ is compiled
with only the headers of the folders its meson.build declares, and linked
into a module that may leave no symbol undefined (src/meson.build), so an
include or a call outside them fails.  What the build cannot see is the
picture in docs/architecture.md ("The layers of src/").  This checks that
the picture names every layer src/meson.build builds and no other, and
that every dependency a layer declares points to a layer drawn below it,
with the roles (drawn side by side) never depending on each other.

    layers_doc.py [ROOT]   exit 0 when they agree, 1 with the differences
                           (ROOT: the tree this file is in)
"""
import re
import sys
from pathlib import Path


def picture_levels(doc):
    """The folders of each level of the picture, top first."""
    text = doc.read_text()
    at = text.index("## The layers of src/")
    start = text.index("```", at) + 3
    block = text[start:text.index("```", start)]
    levels = []
    for line in block.splitlines():
        # A level's line begins with its folders ("requester/  responder/
        # ..."), then the description after a wider gap.
        head = re.match(r"\s*((?:[a-z]+/\s+)+)", line + " ")
        if head:
            levels.append(re.findall(r"([a-z]+)/", head.group(1)))
    return levels


def built_layers(src):
    """The layers src/meson.build builds, and each one's declared deps."""
    text = (src / "meson.build").read_text()
    names = re.findall(r"^\s*'(\w+)',", text[text.index("layers = ["):],
                       re.M)
    deps = {}
    for name in names:
        build = (src / name / "meson.build").read_text()
        m = re.search(r"^deps\s*=\s*\[([^\]]*)\]", build, re.M)
        deps[name] = re.findall(r"(\w+)_dep\b", m.group(1)) if m else []
    return deps


def main(root):
    root = Path(root)
    levels = picture_levels(root / "docs" / "architecture.md")
    level_of = {f: i for i, fs in enumerate(levels) for f in fs}
    deps = built_layers(root / "src")
    errors = []
    for name in deps:
        if name not in level_of:
            errors.append(f"{name}/ is built but not in the picture")
    for name in level_of:
        if name not in deps and name != "core":
            errors.append(f"{name}/ is in the picture but not built")
    for name, ds in deps.items():
        for d in ds:
            if name in level_of and d in level_of and \
                    level_of[d] <= level_of[name]:
                errors.append(f"{name}/ depends on {d}/, which the picture "
                              "does not draw below it")
    for e in errors:
        print(e)
    if not errors:
        print(f"{len(deps)} layers on {len(levels)} levels, "
              f"{sum(map(len, deps.values()))} dependencies: as drawn")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1
                  else Path(__file__).resolve().parents[2]))
