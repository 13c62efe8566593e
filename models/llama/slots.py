"""Which llama.cpp server slot a request goes to: one slot per conversation, kept warm.

llama.cpp's server has ``n_parallel`` slots; each keeps the KV cache of the last prompt it computed,
so a request sent to the slot that computed its conversation's previous request only evaluates the
new tokens (the server's ``cache_n`` / ``prompt_n`` timings). A request names its conversation
with :func:`wildtoolbench.models.prefix.continuing` (an evaluation session, a generation role); the
:class:`SlotTable` gives every key a slot of its own while there are enough, and the request is
sent with ``id_slot`` so the server computes it there (:func:`wildtoolbench.models.llama.chat.adapt_payload`).

Assignment (:meth:`SlotTable.claim`): a key keeps its slot while nothing else takes it; a new key
takes, in order of preference, a slot no key holds, else the idle slot used least recently
(its old key moves to another slot on its next request), else the busy slot used least recently
(and waits for it). A request without a key goes to an idle slot without taking it over. At most
one request per slot is in flight: the others wait client-side, so the HTTP timeout measures
the server's work, not queueing.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import weakref
from collections.abc import AsyncIterator, Iterator


class SlotTable:
    """The slots of one server and the conversation each holds.

    Args:
        n_slots: the server's slot count (``n_parallel``), at least 1.

    Thread-safe; the waiting of :meth:`lease` (threads) and :meth:`alease` (one event loop's tasks)
    is per slot, so requests on different slots run at once.
    """

    def __init__(self, n_slots: int) -> None:
        if n_slots < 1:
            raise ValueError(f"a server has at least 1 slot, got {n_slots}")
        self.n_slots = n_slots
        self._lock = threading.Lock()
        self._owner: list[str | None] = [None] * n_slots
        self._slot_of: dict[str, int] = {}
        self._busy = [0] * n_slots  # requests claimed and not yet released, per slot
        self._last_used = [0] * n_slots  # tick of the last release (0 = never used)
        self._ticks = itertools.count(1)
        self._thread_locks = [threading.Lock() for _ in range(n_slots)]
        self._loop_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[asyncio.Lock]] = (
            weakref.WeakKeyDictionary()
        )
        self._evicted: set[str] = set()  # keys whose slot another key took
        self.claims = 0
        self.moves = 0  # claims of a key that had lost its slot to another key

    def owners(self) -> list[str | None]:
        """The key each slot holds, by slot id (``None``: no key yet)."""
        with self._lock:
            return list(self._owner)

    def claim(self, key: str | None) -> int:
        """The slot for one request of conversation ``key`` (``None``: no conversation), marked busy.

        Returns:
            A slot id in ``range(n_slots)``; pair every claim with one :meth:`release`.
        """
        with self._lock:
            self.claims += 1
            slot = self._slot_of.get(key) if key is not None else None
            if slot is None:
                free = [s for s in range(self.n_slots) if self._owner[s] is None and not self._busy[s]]
                idle = [s for s in range(self.n_slots) if not self._busy[s]]
                pool = free or idle or list(range(self.n_slots))
                slot = min(pool, key=lambda s: (self._last_used[s], s))
                if key is not None:
                    if key in self._evicted:
                        self._evicted.discard(key)
                        self.moves += 1
                    old = self._owner[slot]
                    if old is not None:
                        self._slot_of.pop(old, None)
                        self._evicted.add(old)
                    self._owner[slot] = key
                    self._slot_of[key] = slot
            self._busy[slot] += 1
            return slot

    def release(self, slot: int) -> None:
        """End one request on ``slot`` (claimed by :meth:`claim`)."""
        with self._lock:
            self._busy[slot] -= 1
            self._last_used[slot] = next(self._ticks)

    @contextlib.contextmanager
    def lease(self, key: str | None) -> Iterator[int]:
        """Claim a slot for ``key`` and hold it (one request per slot) while the block runs; yields the slot id."""
        slot = self.claim(key)
        try:
            with self._thread_locks[slot]:
                yield slot
        finally:
            self.release(slot)

    @contextlib.asynccontextmanager
    async def alease(self, key: str | None) -> AsyncIterator[int]:
        """:meth:`lease` for a task of the running event loop."""
        loop = asyncio.get_running_loop()
        with self._lock:
            locks = self._loop_locks.get(loop)
            if locks is None:
                locks = self._loop_locks[loop] = [asyncio.Lock() for _ in range(self.n_slots)]
        slot = self.claim(key)
        try:
            async with locks[slot]:
                yield slot
        finally:
            self.release(slot)
