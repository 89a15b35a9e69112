"""Maximum bipartite matching by augmenting paths.

OpenEvals pairs tool calls first fit: each reference call takes the first unused agent call
that matches it. With an argument rule that is not an equivalence (``subset``,
``superset``, a custom matcher) that can use up the one agent call a later reference call
needed, and report a mismatch where a pairing exists. An augmenting path re-pairs earlier
choices instead, so the matching found is always as large as possible (Berge's theorem).

``Matching`` grows edge by edge, because the in-order mode widens its window of agent calls
one message at a time and only needs to extend the pairs it already has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator


class Matching:
    """A matching between ``left_size`` left vertices and right vertices named by integers.

    Kuhn's algorithm: ``augment(left)`` searches an alternating path from an unpaired left
    vertex to an unpaired right one and flips it, so the matching grows by one pair. Once
    ``augment`` fails for a vertex it keeps failing until edges are added, so trying every
    unpaired left vertex once after the last edge was added leaves the matching maximum.
    """

    def __init__(self, left_size: int) -> None:
        self._adjacency: list[list[int]] = [[] for _ in range(left_size)]
        self._left_mate: list[int | None] = [None] * left_size
        self._right_mate: dict[int, int] = {}

    def add_edge(self, left: int, right: int) -> None:
        """Allow ``left`` to be paired with ``right``."""
        self._adjacency[left].append(right)

    def augment(self, left: int) -> bool:
        """Pair ``left`` (which must be unpaired) if an augmenting path allows it."""
        right_mate = self._right_mate
        # A free neighbour is the common case and needs no search.
        for right in self._adjacency[left]:
            if right not in right_mate:
                self._pair(left, right)
                return True
        # Iterative depth-first search: paths can be as long as the trajectory.
        visited: set[int] = set()
        stack: list[tuple[int, Iterator[int]]] = [(left, iter(self._adjacency[left]))]
        through: list[int] = []  # the right vertex by which each deeper level was reached
        while stack:
            _, edges = stack[-1]
            for right in edges:
                if right in visited:
                    continue
                visited.add(right)
                mate = right_mate.get(right)
                if mate is None:
                    for (vertex, _), partner in zip(stack, [*through, right], strict=True):
                        self._pair(vertex, partner)
                    return True
                through.append(right)
                stack.append((mate, iter(self._adjacency[mate])))
                break
            else:
                stack.pop()
                if through:
                    through.pop()
        return False

    def is_free(self, right: int) -> bool:
        """True when ``right`` is not paired."""
        return right not in self._right_mate

    @property
    def size(self) -> int:
        """The number of pairs."""
        return len(self._right_mate)

    def mate_of_left(self, left: int) -> int | None:
        """The right vertex paired with ``left``, if any."""
        return self._left_mate[left]

    @property
    def complete(self) -> bool:
        """True when every left vertex is paired."""
        return len(self._right_mate) == len(self._left_mate)

    def _pair(self, left: int, right: int) -> None:
        self._left_mate[left] = right
        self._right_mate[right] = left


def maximum_matching(
    left_size: int, right_size: int, neighbours: Callable[[int], Iterable[int]]
) -> list[int | None]:
    """A maximum matching of a bipartite graph: for each left vertex, its right mate or None.

    ``neighbours(i)`` yields the right vertices that left vertex ``i`` may be paired with,
    lazily if it likes: each left vertex first takes its first free neighbour (first fit,
    which usually pairs everything and stops asking early), and only when that leaves
    vertices unpaired on both sides are all edges listed and augmenting paths searched.
    O(V·E) at worst.

    Example:
        >>> edges = [[0, 1], [0]]  # first fit pairs 0 with 0 and leaves left vertex 1 alone
        >>> maximum_matching(2, 2, edges.__getitem__)
        [1, 0]
    """
    matching = Matching(left_size)
    first_fit: list[int | None] = [None] * left_size
    for left in range(left_size):
        right = next((r for r in neighbours(left) if matching.is_free(r)), None)
        if right is not None:
            first_fit[left] = right
            matching.add_edge(left, right)
            matching.augment(left)
    if not matching.complete and matching.size < right_size:
        for left in range(left_size):
            for right in neighbours(left):
                if right != first_fit[left]:
                    matching.add_edge(left, right)
        for left in range(left_size):
            if matching.mate_of_left(left) is None:
                matching.augment(left)
    return [matching.mate_of_left(left) for left in range(left_size)]
