"""massgen's stand-in for MassGen's Python package, so that MassGen tool files import unchanged.

Only what custom tool files use is here: massgen.tool.ExecutionResult and its content blocks,
and the context_params decorator. The rest of MassGen, where it is installed or checked out
on sys.path, stays importable through the extended package path (massgen.tool._basic, ...),
without running its own __init__.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
