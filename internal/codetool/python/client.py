"""Calls massgen's tools from code: the client of the generated servers/ wrappers.

massgen runs each call itself, as it would for the model: the MCP server's credentials never
reach this process. It finds massgen through MASSGEN_TOOLS_ADDR and proves who it is with
MASSGEN_TOOLS_TOKEN, both set in every command massgen runs for this agent.
"""

import json
import os
import socket

__all__ = ["ToolError", "call_tool", "call_mcp_tool"]


class ToolError(Exception):
    """A tool call that failed: the message says why and what to change."""


def _connect():
    addr = os.environ.get("MASSGEN_TOOLS_ADDR", "")
    if addr.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr[len("unix:"):])
        return s
    if addr.startswith("tcp:"):
        host, _, port = addr[len("tcp:"):].rpartition(":")
        return socket.create_connection((host, int(port)))
    raise ToolError(
        "MASSGEN_TOOLS_ADDR is not set: run this code with execute_command, "
        "where massgen sets it (and MASSGEN_TOOLS_TOKEN)"
    )


def call_tool(name, arguments=None):
    """Run the tool called name (as offered to the model) with arguments (a dict).

    Returns the result: parsed when it is a JSON object or array, else its text.
    Raises ToolError when the call fails.
    """
    request = {
        "token": os.environ.get("MASSGEN_TOOLS_TOKEN", ""),
        "tool": name,
        "arguments": {k: v for k, v in (arguments or {}).items() if v is not None},
    }
    s = _connect()
    try:
        # The connection stays open both ways until the reply: closing it cancels the call.
        s.sendall(json.dumps(request).encode() + b"\n")
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                break
    finally:
        s.close()
    if not chunks:
        raise ToolError("massgen closed the connection without a reply")
    reply = json.loads(b"".join(chunks))
    if not reply.get("ok"):
        raise ToolError(reply.get("error") or "the call failed")
    text = reply.get("result", "")
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    return text


def call_mcp_tool(server, tool, arguments=None, name=None):
    """MassGen's name for call_tool: the tool of an MCP server."""
    return call_tool(name or "mcp__%s__%s" % (server, tool), arguments)
