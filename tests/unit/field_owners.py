#!/usr/bin/env python3
"""Who writes which part of the QP: docs/architecture.md's table against src/.

core/srnic_qp.h lets every layer see the whole QP, so the compiler cannot
say that port/ leaves the requester's fields alone.  docs/architecture.md
has a table, "field | written by", naming for each part (`qp->snd.`,
`qp->path.`, `qp->on_ack`, ...) the folders and files that may write it.
This finds every write in src/ (an assignment, compound assignment,
increment or decrement, an __atomic store or read-modify-write, a memset
or memcpy into it) of a member a row names, made
through a pointer named as the row names it (src/ calls every QP pointer
`qp`), and fails on one made from a place the row does not list.  It
also fails on a pointer taken to a whole part (`&qp->snd;`), through
which writes would go unseen.

    field_owners.py [ROOT]   exit 0 when the code keeps to the table, 1
                             with each write that does not
"""
import re
import sys
from pathlib import Path

ASSIGN = r"(?:\[[^\]\n]*\])?(?:\.\w+)*\s*(?:[-+*/|&^]|<<|>>)?=(?!=)"
INCDEC = r"(?:\[[^\]\n]*\])?(?:\.\w+)*\s*(?:\+\+|--)"
CALLS = r"(?:__atomic_(?!load)\w+|memset|memcpy|rte_memcpy)\(\s*&"


def table(doc):
    """[(member, [places])]: member as code spells it ("qp->snd.",
    "qp->on_ack"), places as folders ("port/") or files."""
    text = doc.read_text()
    at = text.index("| field | written by |")
    rows = []
    for line in text[at:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        field, places = line.strip("|").split("|")
        members = re.findall(r"`([^`]+)`", field)
        where = re.findall(r"([\w/]+/(?:[\w.]+\.c)?)", places)
        for m in members:
            rows.append((m, where))
    return rows


def allowed(path, places):
    return any(path == p or (p.endswith("/") and path.startswith(p))
               for p in places)


def member_re(member):
    # "qp->snd." matches qp->snd.x; "qp->on_ack" matches qp->on_ack, not
    # qp->on_acks or myqp->on_ack
    tail = "" if member.endswith(".") else r"\b"
    return r"\b" + re.escape(member) + tail


def writes(text, member):
    """Offsets of the writes to member in text."""
    m = member_re(member)
    pats = [m + (r"\w*" if member.endswith(".") else "") + ASSIGN,
            m + (r"\w*" if member.endswith(".") else "") + INCDEC,
            r"(?:\+\+|--)\s*" + m,
            CALLS + m]
    for p in pats:
        for hit in re.finditer(p, text):
            yield hit.start()


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else \
        Path(__file__).resolve().parents[2]
    src = root / "src"
    rows = table(root / "docs" / "architecture.md")
    if not rows:
        print("no table 'field | written by' in docs/architecture.md")
        return 1
    bad = []
    nwrites = 0
    for f in sorted(src.rglob("*.[ch]")):
        rel = f.relative_to(src).as_posix()
        text = f.read_text()
        for member, places in rows:
            for off in writes(text, member):
                nwrites += 1
                if not allowed(rel, places):
                    line = text.count("\n", 0, off) + 1
                    bad.append(f"src/{rel}:{line}: writes {member} "
                               f"(the table allows {', '.join(places)})")
            part = member.rstrip(".")
            if member.endswith("."):
                for hit in re.finditer(r"&\s*\b" + re.escape(part) +
                                       r"\s*[;,)]", text):
                    line = text.count("\n", 0, hit.start()) + 1
                    bad.append(f"src/{rel}:{line}: takes a pointer to "
                               f"{part}: its writes would go unseen")
    for b in bad:
        print(b)
    print(f"{len(rows)} members, {nwrites} writes, {len(bad)} outside "
          f"the table")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
