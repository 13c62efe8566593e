"""The internals of the public Python API of :mod:`wildtoolbench` (docs/guides/scripting.md): import the names from
``wildtoolbench`` itself; the modules here may change."""
