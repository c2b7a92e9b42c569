#!/usr/bin/env python3
"""Lists the import circles among a crate's files: each strongly connected set of two or
more files, where a file's imports are every `crate::`, `super::` and `self::` path it
names outside its tests (in `use` trees, re-exports included, and inline). A path points
at the deepest module file it reaches: `crate::store::Store` at `store/mod.rs`,
`crate::store::sqlite::Pool` at `store/sqlite/mod.rs`.

Usage: scripts/import_circles.py [SRC_DIR] [--max N] [--imports MODULE]
  SRC_DIR        the crate's `src` (default: server/src)
  --max N        fail (exit 1) when a circle holds more than N files
  --imports M    also print the crate modules that module M's files import
  --edges        also print each circle's imports among its own files

Exit 0 otherwise. Pure standard library, so the test command runs it anywhere.
"""

import os
import re
import sys
from pathlib import Path

TEST_MODULE = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*mod\s+\w+\s*\{")
TEST_FILE = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*mod\s+(\w+)\s*;")
PATH_ATTR = re.compile(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;')
USE = re.compile(r"\b(pub(?:\([^)]*\))?\s+)?use\s+((?:::)?[A-Za-z_{][^;]*);", re.S)
INLINE = re.compile(r"\b(?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+")


def module_of(src: Path, file: Path) -> tuple:
    rel = file.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def blank_literals(text: str) -> str:
    """Drops comments and the insides of string and char literals (raw strings too), so
    that only code is left to read paths from."""
    out, at, n = [], 0, len(text)
    while at < n:
        ch = text[at]
        two = text[at : at + 2]
        if two == "//":
            end = text.find("\n", at)
            at = n if end < 0 else end
        elif two == "/*":
            depth, at = 1, at + 2
            while at < n and depth:
                if text[at : at + 2] == "/*":
                    depth, at = depth + 1, at + 2
                elif text[at : at + 2] == "*/":
                    depth, at = depth - 1, at + 2
                else:
                    at += 1
        elif ch == "r" and re.match(r'r#*"', text[at:]) and not (at and (text[at - 1].isalnum() or text[at - 1] == "_")):
            hashes = len(re.match(r"r(#*)", text[at:]).group(1))
            close = '"' + "#" * hashes
            end = text.find(close, at + 2 + hashes)
            out.append('""')
            at = n if end < 0 else end + len(close)
        elif ch == '"':
            at += 1
            while at < n and text[at] != '"':
                at += 2 if text[at] == "\\" else 1
            out.append('""')
            at += 1
        elif ch == "'" and re.match(r"'(\\.[^']*|[^\\'])'", text[at:]):
            # A char literal ('"', '\n', '\u{..}'); a lifetime has no closing quote.
            at += len(re.match(r"'(\\.[^']*|[^\\'])'", text[at:]).group(0))
            out.append("' '")
        else:
            out.append(ch)
            at += 1
    return "".join(out)


def strip_tests(text: str) -> str:
    """Drops comments, literals and `#[cfg(test)] mod x { … }` blocks."""
    text = blank_literals(text)
    while True:
        found = TEST_MODULE.search(text)
        if not found:
            return text
        depth, at = 1, found.end()
        while at < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[at], 0)
            at += 1
        text = text[: found.start()] + text[at:]


def expand(tree: str) -> list:
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e'] (renames and globs dropped)."""
    tree = re.sub(r"\s+", "", tree)
    brace = tree.find("{")
    if brace < 0:
        return [tree.split(" as ")[0].removesuffix("::*")]
    prefix = tree[:brace]
    inner = tree[brace + 1 : tree.rfind("}")]
    parts, depth, start = [], 0, 0
    for at, ch in enumerate(inner):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(inner[start:at])
            start = at + 1
    parts.append(inner[start:])
    out = []
    for part in parts:
        if not part:
            continue
        if part == "self":
            out.append(prefix.removesuffix("::"))
        else:
            out.extend(expand(prefix + part))
    return out


def main() -> int:
    args = sys.argv[1:]
    limit = None
    show_imports = None
    if "--max" in args:
        at = args.index("--max")
        limit = int(args[at + 1])
        del args[at : at + 2]
    show_edges = "--edges" in args
    if show_edges:
        args.remove("--edges")
    if "--imports" in args:
        at = args.index("--imports")
        show_imports = tuple(args[at + 1].split("::"))
        del args[at : at + 2]
    src = Path(args[0] if args else "server/src").resolve()
    files = sorted(p for p in src.rglob("*.rs"))
    texts = {f: f.read_text() for f in files}
    # Files included only under cfg(test), and files moved by #[path].
    skipped = set()
    modules = {}
    for f in files:
        modules[f] = module_of(src, f)
    for f, text in texts.items():
        here = f.parent if f.name in ("mod.rs", "lib.rs", "main.rs") else f.with_suffix("")
        for name in TEST_FILE.findall(text):
            for candidate in (here / f"{name}.rs", here / name / "mod.rs"):
                skipped.add(candidate)
        for target, name in PATH_ATTR.findall(text):
            moved = (f.parent / target).resolve()
            if moved in modules:
                modules[moved] = modules[f] + (name,)
    by_module = {m: f for f, m in modules.items() if f not in skipped}
    texts = {f: strip_tests(texts[f]) for f in by_module.values()}

    def absolute(me: tuple, path: str, uses: set):
        """A path as written in module `me` -> its segments from the crate root."""
        segs = [s for s in path.split("::") if s]
        if not segs:
            return None
        if segs[0] == "crate":
            return tuple(segs[1:])
        if segs[0] in ("super", "self"):
            base = me
            while segs and segs[0] in ("super", "self"):
                if segs[0] == "super":
                    base = base[:-1]
                segs = segs[1:]
            return base + tuple(segs)
        if (me + (segs[0],)) in by_module and path in uses:
            # `use child::Item`: a relative path into a child module.
            return me + tuple(segs)
        return None

    # What each module re-exports (`pub use child::Item;`): looked through, so a path to
    # the facade points at the file that defines the item.
    reexports = {}
    written = {}
    for f in by_module.values():
        me = modules[f]
        mine, paths = {}, []
        for public, tree in USE.findall(texts[f]):
            expanded = expand(tree)
            uses = set(expanded)
            for path in expanded:
                segs = absolute(me, path, uses)
                if segs is None:
                    continue
                if public:
                    mine[segs[-1]] = segs
                else:
                    paths.append(segs)
        for path in INLINE.findall(texts[f]):
            segs = absolute(me, path, set())
            if segs is not None:
                paths.append(segs)
        reexports[me] = mine
        written[f] = paths

    def resolve(segs: tuple, depth: int = 0):
        for n in range(len(segs), -1, -1):
            module = segs[:n]
            if module in by_module:
                rest = segs[n:]
                if rest and depth < 8 and rest[0] in reexports.get(module, {}):
                    target = reexports[module][rest[0]]
                    if target != segs[: n + 1]:
                        return resolve(target + rest[1:], depth + 1)
                return by_module[module]
        return None

    edges = {f: set() for f in by_module.values()}
    for f, paths in written.items():
        for segs in paths:
            target = resolve(segs)
            if target is not None and target != f:
                edges[f].add(target)

    if show_imports is not None:
        imported = set()
        for f, outs in edges.items():
            if modules[f][: len(show_imports)] != show_imports:
                continue
            for target in outs:
                module = modules[target]
                if module[: len(show_imports)] != show_imports:
                    imported.add("::".join(module[:1]) or "crate")
        label = "::".join(show_imports)
        print(f"{label} imports: {', '.join(sorted(imported)) or 'nothing of the crate'}")

    circles = strongly_connected(edges)
    circles = sorted((c for c in circles if len(c) > 1), key=len, reverse=True)
    print(f"{len(circles)} import circles among {len(edges)} files")
    for circle in circles:
        names = sorted(str(f.relative_to(src)) for f in circle)
        print(f"  {len(circle)} files: {' '.join(names)}")
        if show_edges:
            for member in sorted(circle):
                inside = sorted(str(t.relative_to(src)) for t in edges[member] if t in circle)
                print(f"    {member.relative_to(src)} -> {' '.join(inside)}")
    if limit is not None and circles and len(circles[0]) > limit:
        print(f"a circle holds {len(circles[0])} files, more than {limit}", file=sys.stderr)
        return 1
    return 0


def strongly_connected(edges: dict) -> list:
    """Tarjan's algorithm, iterative."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                out.append(group)
    return out


if __name__ == "__main__":
    sys.exit(main())
