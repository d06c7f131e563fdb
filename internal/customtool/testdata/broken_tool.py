from massgen.tool._result import ExecutionResult, TextContent


def broken(x: int) -> ExecutionResult:
    return ExecutionResult(output_blocks=[TextContent(data=str(x)])
