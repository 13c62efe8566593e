"""The nodes of the variant graph (docs/variants.md §5): one node per factor, registered in
:mod:`wildtoolbench.nodes.variants.registry`; the rules are the pure functions of ``wildtoolbench.bench.variants``."""
