"""Tool results as MassGen's massgen.tool._result defines them: the same classes, constructors
and fields, so that a tool file written for MassGen builds its results unchanged."""

from dataclasses import dataclass, field
from datetime import datetime
from typing import List, Optional


def _new_result_id() -> str:
    return datetime.now().strftime("%Y%m%d_%H%M%S_%f")


@dataclass
class ContentBlock:
    """One piece of a result: block_type says what data holds."""

    block_type: str
    data: str


@dataclass
class TextContent(ContentBlock):
    """Text for the model."""

    def __init__(self, data: str):
        super().__init__(block_type="text", data=data)


@dataclass
class ImageContent(ContentBlock):
    """An image (MassGen tools put base64 data here)."""

    def __init__(self, data: str):
        super().__init__(block_type="image", data=data)


@dataclass
class AudioContent(ContentBlock):
    """Audio (MassGen tools put base64 data here)."""

    def __init__(self, data: str):
        super().__init__(block_type="audio", data=data)


@dataclass
class ExecutionResult:
    """What a tool returns, or yields once per step when it streams."""

    output_blocks: List[ContentBlock]
    meta_info: Optional[dict] = None
    is_streaming: bool = False
    is_final: bool = True
    is_log: bool = False  # shown while the tool runs, kept out of the model's result
    was_interrupted: bool = False
    result_id: str = field(default_factory=_new_result_id)
