"""A custom tool in MassGen's format: massgen's result classes, type hints and an Args docstring.

massgen provides massgen.tool._result itself, so this file runs without MassGen installed.
"""

from massgen.tool._result import ExecutionResult, TextContent


def word_count(text: str, top: int = 3) -> ExecutionResult:
    """Count the words of a text and name the most frequent ones.

    Args:
        text: The text to count.
        top: How many of the most frequent words to name.
    """
    words = [w.strip(".,;:!?\"'()[]{}").lower() for w in text.split()]
    words = [w for w in words if w]
    counts = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    common = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: max(top, 0)]
    summary = ", ".join(f"{w} ({n})" for w, n in common)
    return ExecutionResult(output_blocks=[TextContent(data=f"{len(words)} words; most frequent: {summary}")])
