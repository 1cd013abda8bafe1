"""Read replicas of the PostgreSQL memory store (``store.readDsn``): which server a read goes to, and why.

A replica is a hot standby of the primary (``store.dsn``): streaming replication copies every committed write to it,
a little later. The store learns the agent's generation from the primary (one small cached query), and a replica
serves a read only once it has replayed that generation: every write the caller could know of is then on the
replica too, so its answer is the one the primary would give. A replica that has not yet replayed it leaves that read
to the primary; one that stays behind longer than ``store.replicaMaxLagMs``, or does not answer, is left alone for
:data:`RETRY_S` and ``status()['replica']['warning']`` says so. With several replicas, reads take turns among those
that have replayed the generation. While the primary does not answer (a restart), reads go to a replica that does,
whatever it has replayed, and the warning says answers may miss writes it has not received; writes fail as they
would without replicas. A replica that is no longer a standby (promoted by a failover) still serves reads, and the
warning says writes go to ``store.dsn`` still: point it at the new primary.

>>> from memsift.errors import StoreError
>>> replicas = Replicas([], 'main', 1000, lambda dsn, setting: None)
>>> replicas.reader(7) is None, replicas.state(7, 'postgresql://primary/memory')['readsFrom']
(True, 'postgresql://primary/memory')
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memsift._record import field, record
from memsift.errors import MemsiftError

if TYPE_CHECKING:
    from memsift._postgres import Postgres
    from memsift.results import ReplicaInfo, ReplicaState

__all__ = ['PROBE_EVERY_S', 'RETRY_S', 'Replicas']

RETRY_S = 1.0
"""How long a replica that failed or fell behind the bound (or a primary that failed) is left before it is asked
again: a server that is down is not waited for on every read."""
PROBE_EVERY_S = 0.05
"""How often a replica found behind is asked again for its generation (the primary's is cached as long): a read in
between goes to the primary."""

_PROBE = (
    'SELECT (SELECT generation FROM memory_agents WHERE agent = %s), '
    # Replay lag as the replica sees it: 0 when it has replayed all it received, else the age of its last replay.
    'CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0 '
    'ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 END, '
    'pg_is_in_recovery()'
)


@record(frozen=False, slots=False)
class _Replica:
    pg: Postgres
    generation: int = -1
    """Replayed at least this far (a lower bound: replay only moves forward)."""
    probed_at: float = -math.inf
    reachable: bool = True
    lag_s: float | None = None
    waiting: tuple[int, float] | None = None
    """``(generation, since)``: the first generation a read needed that this replica had not replayed, and when."""
    skip_until: float = -math.inf
    problem: str | None = None
    standby: bool = True
    """``False``: the server is no longer in recovery (promoted by a failover)."""
    reads: int = 0


@record(frozen=False, slots=False)
class Replicas:
    """The read replicas of one store, and where its reads go.

    Args:
        dsns: ``(dsn, setting)`` of each replica, in the order reads prefer them.
        agent: Whose generation decides whether a replica has replayed enough.
        max_lag_ms: ``store.replicaMaxLagMs``: how long a replica may stay behind a generation a read needed.
        connect: Makes the (lazy, check-only) :class:`~memsift._postgres.Postgres` of a replica.
    """

    dsns: Sequence[tuple[str, str]]
    agent: str
    max_lag_ms: int
    connect: Callable[[str, str], Postgres | None]
    replica_reads: int = 0
    primary_reads: int = 0
    last: Postgres | None = None
    """Where the last read went (``None``: the primary)."""
    primary_error: MemsiftError | None = None
    primary_retry_at: float = -math.inf
    _replicas: list[_Replica] = field(default_factory=list)
    _turn: int = 0
    """Where the next read starts looking, so reads take turns among the replicas that can serve them."""

    def __post_init__(self) -> None:
        self._replicas = [_Replica(pg) for dsn, setting in self.dsns if (pg := self.connect(dsn, setting))]

    # ------------------------------------------------------------------ routing

    @property
    def primary_away(self) -> bool:
        """The primary failed less than :data:`RETRY_S` ago: reads go to a replica, not to it."""
        return self.primary_error is not None and time.monotonic() < self.primary_retry_at

    def reader(self, wanted: int) -> Postgres | None:
        """The replica a read goes to when the caller knows generation ``wanted``: one that has replayed it (or,
        while the primary is away, one that answers), each in turn; ``None``: the primary."""
        now = time.monotonic()
        away = self.primary_away
        count = len(self._replicas)
        for step in range(count):
            replica = self._replicas[(self._turn + step) % count]
            if now < replica.skip_until:
                continue
            if replica.generation < wanted and (away or now - replica.probed_at >= PROBE_EVERY_S):
                try:
                    self._probe(replica)
                except MemsiftError as exc:
                    self.failed(replica.pg, exc)
                    continue
            if away or replica.generation >= wanted:
                self._turn = (self._turn + step + 1) % count
                return replica.pg
            if replica.waiting is None:
                replica.waiting = (wanted, now)
            elif now - replica.waiting[1] > self.max_lag_ms / 1000:
                replica.problem = (
                    f'has not replayed generation {replica.waiting[0]} within {self.max_lag_ms} ms '
                    f'(store.replicaMaxLagMs; it is at {replica.generation})'
                )
                replica.skip_until = now + RETRY_S
        return None

    def _probe(self, replica: _Replica) -> None:
        """Ask ``replica`` its generation and replay lag."""
        rows = replica.pg.execute(_PROBE, (self.agent,)).fetchall()
        generation, lag, replica.standby = rows[0]
        replica.generation = max(replica.generation, int(generation or 0))
        replica.lag_s = None if lag is None else max(0.0, float(lag))
        replica.probed_at, replica.reachable = time.monotonic(), True
        if replica.waiting is not None and replica.generation >= replica.waiting[0]:
            replica.waiting = None
        if replica.problem is not None and replica.waiting is None:
            replica.problem = None  # caught up, or answering again

    def failed(self, pg: Postgres, exc: BaseException) -> None:
        """A read on replica ``pg`` failed: its reads go to the primary for :data:`RETRY_S`."""
        for replica in self._replicas:
            if replica.pg is pg:
                replica.reachable = pg.connected
                replica.problem = f'failed: {exc}'
                replica.skip_until = time.monotonic() + RETRY_S
                replica.generation = -1  # asked again before it serves: it may have been rebuilt meanwhile

    def served(self, pg: Postgres | None) -> None:
        """Count a read served by ``pg`` (``None``: the primary)."""
        self.last = pg
        if pg is None:
            self.primary_reads += 1
            return
        self.replica_reads += 1
        for replica in self._replicas:
            if replica.pg is pg:
                replica.reads += 1

    def primary_failed(self, exc: MemsiftError | None) -> tuple[int, Postgres]:
        """The primary did not answer (``exc``; ``None``: it failed less than :data:`RETRY_S` ago): the generation
        of the first replica that answers, and that replica, which serves reads meanwhile.

        Raises:
            MemsiftError: ``exc`` (or the primary's last error): no replica answers either.
        """
        if exc is not None:
            self.primary_error, self.primary_retry_at = exc, time.monotonic() + RETRY_S
        for replica in self._replicas:
            if time.monotonic() < replica.skip_until and not replica.reachable:
                continue
            try:
                self._probe(replica)
            except MemsiftError as error:
                self.failed(replica.pg, error)
                continue
            return replica.generation, replica.pg
        assert self.primary_error is not None
        raise self.primary_error

    def primary_answered(self) -> None:
        self.primary_error = None

    # ------------------------------------------------------------------ status

    def state(self, wanted: int, primary: str) -> ReplicaState:
        """``status()['replica']``: each replica asked now (unless it is being left alone), against generation
        ``wanted``; ``primary``: the primary's DSN, masked."""
        infos: list[ReplicaInfo] = []
        warnings = []
        if self.primary_error is not None:
            serving = self.last.shown if self.last is not None else 'no replica'
            warnings.append(
                f'the primary {primary} does not answer ({self.primary_error}): reads go to {serving}, whose '
                'answers may miss writes it has not received; writes fail until the primary is back'
            )
        for replica in self._replicas:
            if time.monotonic() >= replica.skip_until:
                try:
                    self._probe(replica)
                except MemsiftError as exc:
                    self.failed(replica.pg, exc)
            if replica.problem is not None:
                warnings.append(f'replica {replica.pg.shown} ({replica.pg.setting}) {replica.problem}: reads go to '
                                'the primary')  # fmt: skip
            if not replica.standby:
                warnings.append(f'replica {replica.pg.shown} ({replica.pg.setting}) is no longer a standby (promoted '
                                f'by a failover?): it still serves reads, but writes go to {primary} (store.dsn); '
                                'if it is the new primary, point store.dsn at it')  # fmt: skip
            known = replica.generation >= 0
            infos.append({
                'dsn': replica.pg.shown,
                'reachable': replica.reachable,
                'generation': replica.generation if known else None,
                'behind': max(0, wanted - replica.generation) if known else None,
                'lagMs': None if replica.lag_s is None else round(replica.lag_s * 1000, 1),
                'standby': replica.standby,
                'reads': replica.reads,
                'problem': replica.problem,
            })  # fmt: skip
        return {
            'replicas': infos,
            'readsFrom': self.last.shown if self.last is not None else primary,
            'replicaReads': self.replica_reads,
            'primaryReads': self.primary_reads,
            'maxLagMs': self.max_lag_ms,
            'warning': '; '.join(warnings) or None,
        }

    def close(self) -> None:
        for replica in self._replicas:
            replica.pg.close()
