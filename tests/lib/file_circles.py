# SPDX-License-Identifier: MIT
"""No circles between librecd's files, or the daemon's: by #include (lib/src and lib/include, or
every file under the daemon's folder) and by calls, where file A calling a function defined in
file B while B calls one defined in A is a circle. Calls are read from the compiled objects'
symbol tables (nm), so macros and static functions do not count; static inline functions defined
in headers do: a file calling one calls the header's module (x.h belongs with x.c), and what the
inline function calls, that module calls.

Circles listed in KNOWN_CIRCLES are reported but do not fail: each names a circle another change
is removing; delete its line when it is gone (the check then fails if it comes back).

A reference to a format's descriptor (the data symbols recd_format__NAME that
lib/src/formats/format_table.c lists) is not a call: the lower layers (message model, wire)
dispatch through the descriptor's hooks, which call back down into them, and that inversion is
the point of the descriptor.

usage: file_circles.py LIB_DIR|DAEMON_DIR OBJECT_LIST_FILE
       file_circles.py --self-test   (shows a circle made only by an inline helper is caught)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def strongly_connected(graph):
    """Tarjan's algorithm; returns the components with more than one node."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


# Circles another change is removing, as "kind: file, file" (the members sorted, as reported).
# None today; a change that leaves one for another to remove names it here for that time.
KNOWN_CIRCLES = set()


def source_roots(lib_dir):
    roots = [os.path.join(lib_dir, "src"), os.path.join(lib_dir, "include"),
             os.path.join(lib_dir, "internal")]
    if not os.path.isdir(roots[0]):
        roots = [lib_dir]  # the daemon: includes are relative to daemon/
    return [r for r in roots if os.path.isdir(r)]


def include_graph(lib_dir):
    roots = source_roots(lib_dir)
    files = {}
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                if name.endswith((".c", ".h")):
                    path = os.path.join(folder, name)
                    files[os.path.relpath(path, root)] = path
    graph = {}
    for rel, path in files.items():
        with open(path, encoding="utf-8") as f:
            included = re.findall(r'^#include "([^"]+)"', f.read(), re.M)
        here = os.path.dirname(rel)
        found = {i if i in files else os.path.join(here, i) for i in included}
        # a module is x.c with x.h: x.c including y.h and y.c including x.h is a circle
        modules = {module_of(i) for i in found if i in files} - {module_of(rel)}
        graph.setdefault(module_of(rel), set()).update(modules)
    return graph


def module_of(path):
    return os.path.splitext(path)[0]


CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
INLINE = re.compile(r"^static inline\b[^;{]*?\b([A-Za-z_]\w*)\s*\(", re.M)


def without_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)


def body_after(text, pos):
    """The {...} block starting at the first brace from pos ('' for a declaration)."""
    brace, semi = text.find("{", pos), text.find(";", pos)
    if brace < 0 or (0 <= semi < brace):
        return ""
    depth = 0
    for i in range(brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[brace:i + 1]
    return text[brace:]


def inline_functions(lib_dir):
    """name -> (module, body) for every static inline function defined in a header. A header's
    module is named like the object of its .c file (x.h -> x.c), the call graph's node names."""
    found = {}
    for root in source_roots(lib_dir):
        for folder, _, names in os.walk(root):
            for name in names:
                if not name.endswith(".h"):
                    continue
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    text = without_comments(f.read())
                for m in INLINE.finditer(text):
                    found[m.group(1)] = (name[:-2] + ".c", body_after(text, m.end()))
    return found


def source_of(obj):
    """The source file an object was compiled from, relative to LIB_DIR|DAEMON_DIR (CMake names
    the object TARGET.dir/PATH.c.o)."""
    return obj.split(".dir/", 1)[-1].removesuffix(".o")


def add_inline_edges(graph, lib_dir, objects, defined_in):
    inlines = inline_functions(lib_dir)
    for name, (module, body) in inlines.items():
        for callee in CALL.findall(body):
            target = defined_in.get(callee) or inlines.get(callee, (None,))[0]
            if target and target != module:
                graph.setdefault(module, set()).add(target)
    for obj in objects:
        node = os.path.basename(obj).removesuffix(".o")
        rel = source_of(obj)
        path = os.path.join(lib_dir, rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = without_comments(f.read())
        for callee in set(CALL.findall(text)):
            if callee in inlines and inlines[callee][0] != node:
                graph.setdefault(node, set()).add(inlines[callee][0])


def call_graph(lib_dir, objects):
    defined_in, used_by = {}, {}
    # One nm for every object (a process each took most of a minute on a loaded machine); -A
    # puts "OBJECT:" before each symbol line.
    out = subprocess.run(["nm", "-A", *objects], capture_output=True, text=True,
                         check=True).stdout if objects else ""
    for tagged in out.splitlines():
        obj, _, line = tagged.partition(".o:")
        name = os.path.basename(obj)
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBR":
            if parts[1] in "DR" and parts[2].startswith("recd_format__"):
                continue  # a descriptor: dispatch, not a call
            defined_in[parts[2]] = name
        elif len(parts) == 2 and parts[0] == "U":
            used_by.setdefault(name, set()).add(parts[1])
    graph = {user: {defined_in[s] for s in syms if s in defined_in and defined_in[s] != user}
             for user, syms in used_by.items()}
    add_inline_edges(graph, lib_dir, objects, defined_in)
    return graph


# a.c calls c_run(), which b.c defines; b.c calls a.h's inline a_twice(): a circle only the inline
# helper closes (the includes, a.c -> c.h and b.c -> a.h, c.h, have none).
SELF_TEST_TREE = {
    "a.h": "int a_run(void);\nstatic inline int a_twice(int x) { return 2 * x; }\n",
    "a.c": '#include "a.h"\n#include "c.h"\nint a_run(void) { return c_run(); }\n',
    "c.h": "int c_run(void);\n",
    "b.c": '#include "a.h"\n#include "c.h"\nint c_run(void) { return a_twice(1); }\n',
}


def self_test():
    cc = os.environ.get("CC", "cc")
    if not shutil.which(cc) or not shutil.which("nm"):
        print(f"SKIP: {cc} or nm not found")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "tree")
        os.mkdir(tree)
        for name, text in SELF_TEST_TREE.items():
            with open(os.path.join(tree, name), "w", encoding="utf-8") as f:
                f.write(text)
        objects = []
        for name in ("a.c", "b.c"):
            obj = os.path.join(tmp, "t.dir", name + ".o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            subprocess.run([cc, "-c", os.path.join(tree, name), "-o", obj], check=True)
            objects.append(obj)
        circles = strongly_connected(call_graph(tree, objects))
        if circles != [["a.c", "b.c"]]:
            print(f"self-test: the inline helper's circle was not caught (found {circles})",
                  file=sys.stderr)
            return 1
        # b.h for b.c, included by a.c while b.c includes a.h: modules a and b include each other
        with open(os.path.join(tree, "b.h"), "w", encoding="utf-8") as f:
            f.write("int b_run(void);\n")
        with open(os.path.join(tree, "a.c"), "a", encoding="utf-8") as f:
            f.write('#include "b.h"\n')
        circles = strongly_connected(include_graph(tree))
        if circles != [["a", "b"]]:
            print(f"self-test: x.c -> y.h with y.c -> x.h was not caught (found {circles})",
                  file=sys.stderr)
            return 1
    print("file_circles: self-test passed (circles closed by an inline helper, and by two modules "
          "including each other's headers, are caught)")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    lib_dir, object_list = sys.argv[1], sys.argv[2]
    with open(object_list, encoding="utf-8") as f:
        objects = [line.strip() for line in f if line.strip()]
    failed = False
    found, nodes = set(), set()
    for kind, graph in (("include", include_graph(lib_dir)), ("call", call_graph(lib_dir, objects))):
        nodes.update(f"{kind}: {n}" for n in graph)
        for circle in strongly_connected(graph):
            text = f"{kind}: " + ", ".join(circle)
            found.add(text)
            if text in KNOWN_CIRCLES:
                print(f"known (another change removes it): {text}", file=sys.stderr)
                continue
            print(f"FAIL: {kind} circle between " + ", ".join(circle), file=sys.stderr)
            failed = True
    for text in sorted(KNOWN_CIRCLES - found):
        kind, members = text.split(": ", 1)
        if all(f"{kind}: {m}" in nodes for m in members.split(", ")):  # this tree's circle
            print(f"note: {text} is gone: delete it from KNOWN_CIRCLES", file=sys.stderr)
    if failed:
        return 1
    known = len(found & KNOWN_CIRCLES)
    print(f"file_circles: no include or call circles among {len(objects)} objects"
          + (f" but the {known} known ones above" if known else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
