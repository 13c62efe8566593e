"""The factor registry of the variant graph (docs/variants.md §5): each factor is a node, registered
the way a generation role is (docs/guides/generating.md, "adding a role"): one node function plus one
:func:`register_factor` line; ``wildtoolbench.graphs.variants`` wires every registered factor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wildtoolbench.bench.variants.build import run_factor
from wildtoolbench.bench.variants.common import MODEL_ROLES
from wildtoolbench.nodes.variants.explicit import explicit
from wildtoolbench.nodes.variants.paraphrase import paraphrase
from wildtoolbench.nodes.variants.state import VariantState
from wildtoolbench.nodes.variants.transitions import transitions

FactorNode = Callable[[VariantState], dict[str, Any]]


@dataclass(frozen=True)
class Factor:
    """A registered factor.

    Attributes:
        name: the factor's name (``--factors``) and its node's name.
        node: the node function (state -> update with ``results``).
        calls_model: whether it always needs a model (``paraphrase``); the others are mechanical unless
            one of their :attr:`roles` is given a model.
    """

    name: str
    node: FactorNode
    calls_model: bool = False

    @property
    def roles(self) -> tuple[str, ...]:
        """The model roles of this factor (``--model ROLE=SPEC``; :data:`MODEL_ROLES`, docs/variants.md §3.6)."""
        return tuple(role for role, factor in MODEL_ROLES.items() if factor == self.name)


_FACTORS: dict[str, Factor] = {}


def register_factor(factor: Factor) -> None:
    """Add ``factor`` to the variant graph (after the factors registered before it).

    Raises:
        ValueError: the name is taken.
    """
    if factor.name in _FACTORS:
        raise ValueError(f"factor {factor.name!r} is already registered")
    _FACTORS[factor.name] = factor


def registered_factors() -> tuple[Factor, ...]:
    """Every registered factor, in registration order."""
    return tuple(_FACTORS.values())


def mechanical_node(name: str) -> FactorNode:
    """The node of a mechanical factor: runs :func:`run_factor` when ``name`` is among the state's
    ``factors``, else returns no update (docs/variants.md §5)."""

    def node(state: VariantState) -> dict[str, Any]:
        if name not in state.get("factors", []):
            return {}
        result = run_factor(
            name,
            state["sessions"],
            levels=(state.get("levels") or {}).get(name),
            language=state.get("language", "en"),
            seed=int(state.get("seed", 0)),
        )
        return {"results": [result]}

    node.__name__ = name
    node.__doc__ = f"The ``{name}`` factor (docs/variants.md §3): its variants, pairs, and the tasks it skipped."
    return node


register_factor(Factor("explicit", explicit))
register_factor(Factor("transitions", transitions))
for _name in ("names", "distractors"):
    register_factor(Factor(_name, mechanical_node(_name)))
register_factor(Factor("paraphrase", paraphrase, calls_model=True))
