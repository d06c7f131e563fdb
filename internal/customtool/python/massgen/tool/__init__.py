"""The parts of MassGen's massgen.tool that custom tool files import."""

from pkgutil import extend_path

from ._decorators import context_params
from ._result import AudioContent, ContentBlock, ExecutionResult, ImageContent, TextContent

__path__ = extend_path(__path__, __name__)

__all__ = ["AudioContent", "ContentBlock", "ExecutionResult", "ImageContent", "TextContent", "context_params"]
