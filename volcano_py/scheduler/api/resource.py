"""``Resource``: a resource vector as integers (milli-cpu, memory bytes, scalar milli-units).

Volcano's ``api.Resource``. Every amount is an ``int`` so sums never drift: cpu in
milli-cores, memory in bytes, every other resource (``nvidia.com/gpu``, ``hugepages-2Mi``,
``ephemeral-storage``...) as its milli-value, like Volcano's ``ScalarResources``. ``pods`` is
not a resource here: a node's pod capacity is ``NodeInfo.max_tasks``.

Quota-only names are not resources either: a PodGroup's ``minResources`` is the pods' quota
usage (``pg-controller``), which spells every request twice (``cpu`` and ``requests.cpu``)
and adds ``limits.*`` and object counts (``count/pods``). Only the plain names describe what
a node must hold, so ``requests.*``, ``limits.*`` and ``count/*`` are skipped, as Kubernetes'
``IsScalarResourceName`` does for the prefixed ones.

Operations mutate in place (``add``/``sub``) because the scheduler adds and removes task
requests millions of times per cycle; ``clone()`` when a copy is needed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from volcano_py.api.quantity import to_quantity

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
QUOTA_ONLY_PREFIXES = ("requests.", "limits.", "count/")


class Resource:
    """A mutable resource vector; a missing scalar counts as zero."""

    __slots__ = ("memory", "milli_cpu", "scalars")

    def __init__(
        self, milli_cpu: int = 0, memory: int = 0, scalars: Mapping[str, int] | None = None
    ) -> None:
        """A vector from its parts."""
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.scalars: dict[str, int] = dict(scalars) if scalars else {}

    @classmethod
    def from_list(cls, resources: Mapping[str, Any] | None, field: str = "") -> Resource:
        """From a ``ResourceList`` such as ``{"cpu": "500m", "nvidia.com/gpu": 2}``.

        ``pods`` and quota-only names (``requests.*``, ``limits.*``, ``count/*``) are skipped
        (see the module docstring).

        Raises:
            FieldError: naming ``field[<name>]`` when a value is not a quantity.
        """
        res = cls()
        for name, raw in (resources or {}).items():
            if name == PODS or name.startswith(QUOTA_ONLY_PREFIXES):
                continue
            q = to_quantity(raw, f"{field}[{name}]")
            if name == CPU:
                res.milli_cpu += q.milli_value()
            elif name == MEMORY:
                res.memory += q.value()
            else:
                res.scalars[name] = res.scalars.get(name, 0) + q.milli_value()
        return res

    def clone(self) -> Resource:
        """An independent copy."""
        return Resource(self.milli_cpu, self.memory, self.scalars)

    def add(self, other: Resource) -> Resource:
        """``self += other``; returns self."""
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        if other.scalars:
            mine = self.scalars
            for name, amount in other.scalars.items():
                mine[name] = mine.get(name, 0) + amount
        return self

    def sub(self, other: Resource) -> Resource:
        """``self -= other``; returns self (may go negative: callers check ``less_equal``)."""
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        if other.scalars:
            mine = self.scalars
            for name, amount in other.scalars.items():
                mine[name] = mine.get(name, 0) - amount
        return self

    def less_equal(self, other: Resource) -> bool:
        """Every dimension of self is at most other's (Volcano's ``LessEqual`` with Zero)."""
        if self.milli_cpu > other.milli_cpu or self.memory > other.memory:
            return False
        if self.scalars:
            theirs = other.scalars
            for name, amount in self.scalars.items():
                if amount > 0 and amount > theirs.get(name, 0):
                    return False
        return True

    def get(self, name: str) -> int:
        """One dimension in its integer unit (milli-cpu, bytes, scalar milli-units)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        return self.scalars.get(name, 0)

    def items(self) -> Iterator[tuple[str, int]]:
        """Non-zero dimensions as ``(name, amount)``, cpu and memory first."""
        if self.milli_cpu:
            yield CPU, self.milli_cpu
        if self.memory:
            yield MEMORY, self.memory
        for name in sorted(self.scalars):
            if self.scalars[name]:
                yield name, self.scalars[name]

    def names(self) -> list[str]:
        """Names of the non-zero dimensions."""
        return [name for name, _ in self.items()]

    def is_empty(self) -> bool:
        """True when every dimension is zero or less."""
        return all(amount <= 0 for _, amount in self.items())

    def max_with(self, other: Resource) -> Resource:
        """``self = max(self, other)`` dimension by dimension; returns self."""
        self.milli_cpu = max(self.milli_cpu, other.milli_cpu)
        self.memory = max(self.memory, other.memory)
        for name, amount in other.scalars.items():
            self.scalars[name] = max(self.scalars.get(name, 0), amount)
        return self

    def scaled(self, factor: float) -> Resource:
        """A copy with every dimension multiplied by ``factor`` (rounded down)."""
        return Resource(
            int(self.milli_cpu * factor),
            int(self.memory * factor),
            {name: int(amount * factor) for name, amount in self.scalars.items()},
        )

    def clamped(self) -> Resource:
        """A copy with every negative dimension raised to zero."""
        return Resource(
            max(0, self.milli_cpu),
            max(0, self.memory),
            {name: max(0, amount) for name, amount in self.scalars.items()},
        )

    def to_list(self) -> dict[str, str]:
        """Back to a ``ResourceList`` with human quantities (``2``, ``500m``, ``8Gi``)."""
        return {name: format_amount(name, amount) for name, amount in self.items()}

    def __eq__(self, other: object) -> bool:
        """Equal when every dimension is (zero scalars ignored)."""
        if not isinstance(other, Resource):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        """``Resource(cpu=2, memory=8Gi)``."""
        parts = ", ".join(f"{n}={v}" for n, v in self.to_list().items())
        return f"Resource({parts})"


def format_amount(name: str, amount: int) -> str:
    """An amount in ``name``'s integer unit as a short quantity string."""
    if name == MEMORY:
        for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount and amount % size == 0:
                return f"{amount // size}{suffix}"
        return str(amount)
    if amount % 1000 == 0:
        return str(amount // 1000)
    return f"{amount}m"


def format_short(name: str, amount: int) -> str:
    """An amount in ``name``'s own unit for people: ``8``, ``12.8``, ``22Gi``, ``21.5Gi``, ``500m``.

    For messages (``nvidia.com/gpu short by 8``), never for writing a quantity back
    (``format_amount`` is exact). Memory takes the largest binary unit it has at least one of,
    rounded up to a tenth (a shortfall is never understated); other scalars are whole units,
    a fraction written as a decimal rather than milli-units; CPU stays in cores or millicores.
    """
    if name == MEMORY:
        for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount >= size:
                if amount % size == 0:
                    return f"{amount // size}{suffix}"
                tenths = -(-amount * 10 // size)
                whole, tenth = divmod(tenths, 10)
                return f"{whole}.{tenth}{suffix}" if tenth else f"{whole}{suffix}"
        return str(amount)
    if name == CPU or amount % 1000 == 0:
        return format_amount(name, amount)
    return f"{amount / 1000:.3f}".rstrip("0")


def least_sum(requests: list[Resource], count: int) -> Resource:
    """Per dimension, the sum of the ``count`` smallest amounts among ``requests``.

    A lower bound on what any ``count`` of them need together, whichever are picked: the
    resource pre-filter uses it so it never prunes a place the gang could use.
    """
    total = Resource()
    if count <= 0 or not requests:
        return total
    if count >= len(requests):
        for request in requests:
            total.add(request)
        return total
    names = {name for request in requests for name in request.scalars}
    total.milli_cpu = sum(sorted(r.milli_cpu for r in requests)[:count])
    total.memory = sum(sorted(r.memory for r in requests)[:count])
    for name in names:
        total.scalars[name] = sum(sorted(r.scalars.get(name, 0) for r in requests)[:count])
    return total
