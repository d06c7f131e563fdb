// Package customtool runs an agent's custom_tools (features.md 1.4, 3.3): Python functions
// written for MassGen, and programs in any language, offered to the model as tools named
// custom_tool__<name> as MassGen names them.
//
// Python entries run in one worker process per agent: python3 and an embedded worker script
// (python/worker.py), with a stand-in for MassGen's package first on sys.path, so that tool
// files import massgen.tool._result (ExecutionResult, TextContent, ImageContent) unchanged
// without MassGen installed. The worker imports each file by path and builds each tool's
// schema from the function's signature, type hints and docstring (Google, NumPy or reST), as
// MassGen's ToolManager does; preset_args are hidden from the model and passed on every call;
// agent_cwd, agent_id and MassGen's @context_params are set by massgen on every call, hidden
// from the model, and dropped from its arguments (by massgen, and again by the worker), so a
// model cannot choose a tool's folder or identity. Functions may be sync or async, and may
// return an ExecutionResult, a string or any JSON value, or stream by yielding ExecutionResults
// (each is shown as the call's output; all but is_log ones make the result, as in MassGen).
//
// An entry with command: runs that program instead, one process per entry. Both speak the
// same protocol, JSON lines over the process's stdin and stdout:
//
//	-> {"id": 1, "op": "describe"}
//	<- {"id": 1, "ok": true, "result": {"tools": [{"name": "shout", "description": "...", "parameters": {JSON schema}, "context_params": ["agent_id"]}]}}
//	-> {"id": 2, "op": "call", "function": "shout", "args": {"who": "ada"}, "context": {"agent_id": "a", "agent_cwd": "/ws"}}
//	<- {"id": 2, "output": "progress, shown while the call runs"}   (any number, optional)
//	<- {"id": 2, "ok": true, "result": "HEY ada"}
//	<- {"id": 2, "ok": false, "error": "what went wrong"}            (instead, on failure)
//
// A result is a string, {"content": [{"type": "text", "text": ...}, {"type": "image", "size": N,
// "ref": path}]}, or any other JSON value (shown as JSON). Lines on stdout that are not JSON are
// ignored; stderr is kept for error messages and shown as the call's output. "context_params"
// (optional) names further parameters massgen sets; "args" never holds those, agent_cwd or
// agent_id: the program finds massgen's values in "context".
//
// Every process gets only an allow-listed environment (no API keys unless an entry's
// env_passthrough names them), runs in the agent's workspace when it has one, and runs under
// childproc.Confined, so that it and everything it starts end with the session, even when
// massgen is killed. A call is bounded by its entry's timeout (120 s by default); a call that
// times out, a process that crashes, and one that breaks the protocol are an error result for
// that call, and the next call starts a fresh process. Results reach the model as text, cut at
// OutputLimit; images and audio become a note, since tool results carry text only here.
package customtool
