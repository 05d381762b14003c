# SPDX-License-Identifier: MIT
"""No circles between librecd's files, or the daemon's: by #include (lib/src and lib/include, or
every file under the daemon's folder) and by calls, where file A calling a function defined in
file B while B calls one defined in A is a circle. Calls are read from the compiled objects'
symbol tables (nm), so macros and static functions do not count.

usage: file_circles.py LIB_DIR|DAEMON_DIR OBJECT_LIST_FILE
"""
import os
import re
import subprocess
import sys


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


def include_graph(lib_dir):
    roots = [os.path.join(lib_dir, d) for d in ("src", "include", "internal")]
    if not os.path.isdir(roots[0]):
        roots = [lib_dir]  # the daemon: includes are relative to daemon/
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
        graph[rel] = {i for i in included if i in files and i != rel}
    return graph


def call_graph(objects):
    defined_in, used_by = {}, {}
    for obj in objects:
        name = os.path.basename(obj).removesuffix(".o")
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defined_in[parts[2]] = name
            elif len(parts) == 2 and parts[0] == "U":
                used_by.setdefault(name, set()).add(parts[1])
    return {user: {defined_in[s] for s in syms if s in defined_in and defined_in[s] != user}
            for user, syms in used_by.items()}


def main():
    lib_dir, object_list = sys.argv[1], sys.argv[2]
    with open(object_list, encoding="utf-8") as f:
        objects = [line.strip() for line in f if line.strip()]
    failed = False
    for kind, graph in (("include", include_graph(lib_dir)), ("call", call_graph(objects))):
        for circle in strongly_connected(graph):
            print(f"FAIL: {kind} circle between " + ", ".join(circle), file=sys.stderr)
            failed = True
    if failed:
        return 1
    print(f"file_circles: no include or call circles among {len(objects)} objects")
    return 0


if __name__ == "__main__":
    sys.exit(main())
