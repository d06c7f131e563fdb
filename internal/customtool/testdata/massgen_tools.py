"""Custom tools written as MassGen's are, for the tests of internal/customtool: they import
MassGen's result classes and run without MassGen installed."""

import asyncio
import os
import sys
import time
from typing import Dict, List, Literal, Optional

from massgen.tool import context_params
from massgen.tool._result import ExecutionResult, ImageContent, TextContent


def add_numbers(a: int, b: float = 1.5, note: Optional[str] = None, api_base: str = "") -> ExecutionResult:
    """Add two numbers.

    The sum comes back as text.

    Args:
        a: The first number.
        b: The second number,
            which may be a fraction.
        note: Something to say with the sum.
        api_base: Where a real tool would send requests; set by preset_args.

    Returns:
        ExecutionResult: the sum.
    """
    text = f"{a} + {b} = {a + b}"
    if note:
        text += f" ({note})"
    if api_base:
        text += f" via {api_base}"
    return ExecutionResult(output_blocks=[TextContent(data=text)])


def kinds(tags: List[str], mode: Literal["fast", "slow"] = "fast", weights: Optional[Dict[str, float]] = None, flag: bool = False):
    """Echo what it was given.

    Parameters
    ----------
    tags : list of str
        Labels to echo.
    mode : str
        How to go.
    """
    return {"tags": tags, "mode": mode, "weights": weights, "flag": flag}


async def greet(name: str, times: int = 1) -> ExecutionResult:
    """Greet someone, after a pause.

    :param name: Who to greet.
    :param times: How many times.
    """
    await asyncio.sleep(0.01)
    return ExecutionResult(output_blocks=[TextContent(data=" ".join(["hello " + name] * times))])


async def count_up(n: int):
    """Count to n, one step at a time.

    Args:
        n: Where to stop.
    """
    for i in range(1, n + 1):
        await asyncio.sleep(0)
        yield ExecutionResult(output_blocks=[TextContent(data=f"step {i}. ")], is_streaming=True, is_final=i == n)
    yield ExecutionResult(output_blocks=[TextContent(data="(log only)")], is_log=True)


def fail(message: str) -> ExecutionResult:
    """Raise an error.

    Args:
        message: What the error says.
    """
    raise ValueError(message)


def hang(seconds: float = 3600) -> str:
    """Sleep far longer than any test waits."""
    time.sleep(seconds)
    return "woke up"


def noisy(text: str) -> str:
    """Print to stdout, from Python and from a child process, then answer."""
    print("noise from print")
    sys.stdout.flush()
    os.system("echo noise from a child process")
    return text.upper()


def read_env(name: str) -> str:
    """Return an environment variable, or <unset>."""
    return os.environ.get(name, "<unset>")


def picture() -> ExecutionResult:
    """Return a text block and an image block."""
    return ExecutionResult(output_blocks=[TextContent(data="a red dot"), ImageContent(data="iVBORw0KGgo" * 10)])


def where_am_i(agent_cwd: Optional[str] = None) -> str:
    """Say which folders the tool sees."""
    return f"agent_cwd={agent_cwd} cwd={os.getcwd()}"


@context_params("agent_id", "task_id")
def who_am_i(note: str = "", agent_id: str = "", agent_cwd: str = "", task_id: str = "unset") -> str:
    """Say which agent and folder massgen gave the tool."""
    return f"agent_id={agent_id} agent_cwd={agent_cwd} task_id={task_id} note={note}"


def crash() -> str:
    """End the worker process at once."""
    os._exit(3)


def huge(n: int = 300000) -> str:
    """Return n characters."""
    return "x" * n


def plain() -> None:
    """Return nothing."""
