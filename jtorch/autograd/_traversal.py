"""The order of a backward: the nodes reachable from its roots, which of them matter and
how many edges feed each, and PyTorch's engine order (most recently created first)."""

from __future__ import annotations

import heapq


def post_order(roots) -> list:
    """The nodes reachable from `roots`, children before parents."""
    visited, post, stack = set(), [], [(r, False) for r in roots]
    while stack:
        n, done = stack.pop()
        if done:
            post.append(n)
            continue
        if n in visited:
            continue
        visited.add(n)
        stack.append((n, True))
        for e in n._edges:
            if e is not None and e[0] not in visited:
                stack.append((e[0], False))
    return post


def dependencies(roots, targets=None):
    """Nodes that matter for a backward from `roots`, with their dependency counts.

    With `targets`, only nodes from which a target is reachable matter (`autograd.grad`
    runs no more of the graph than it needs).
    """
    post = post_order(roots)
    if targets is None:
        needed = set(post)
    else:
        needed = set()
        for n in post:
            if n in targets or any(e is not None and e[0] in needed for e in n._edges):
                needed.add(n)
    deps = dict.fromkeys(needed, 0)
    for n in needed:
        for e in n._edges:
            if e is not None and e[0] in needed:
                deps[e[0]] += 1
    return needed, deps


def schedule(roots, needed, deps) -> list:
    """The order the backward runs `needed` nodes in, as PyTorch's engine orders them: a node
    runs once every node feeding it has, the most recently created first.

    The order depends on the structure only; the node-by-node engine and the fused backward
    both follow it, so gradients meeting at a node are summed in the same order by both.
    """
    deps = dict(deps)
    ready = [(-n._seq, n) for n in roots if n in needed and deps[n] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        node = heapq.heappop(ready)[1]
        order.append(node)
        for e in node._edges:
            if e is None or e[0] not in needed:
                continue
            child = e[0]
            deps[child] -= 1
            if deps[child] == 0:
                heapq.heappush(ready, (-child._seq, child))
    return order
