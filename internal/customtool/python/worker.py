"""massgen's custom tool worker: runs the Python functions of one agent's custom_tools.

massgen starts it as `python3 worker.py MANIFEST` and speaks JSON lines with it: one request
per line on stdin, one reply per line on stdout (see internal/customtool/doc.go). The protocol
owns the process's real stdout and stdin; what a tool prints, and what its child processes
write, goes to stderr, which massgen keeps for error messages.

MANIFEST is a JSON file: {"tools": [{"key", "path", "module", "function"}], "sys_path": [...]}.
Each key is the tool's name as configured; a tool is imported when first described or called.
"""

import asyncio
import enum
import importlib
import importlib.util
import inspect
import json
import math
import os
import re
import sys
import traceback
import typing

_WORKER_FILE = os.path.abspath(__file__)
_MARK = "\x1e"  # starts the end-of-call line on stderr


class ToolError(Exception):
    """A failure to report to massgen as it is, without a traceback location."""


# --- the protocol's pipes -------------------------------------------------------------------


def claim_stdio():
    """Keep private copies of stdin and stdout for the protocol, and point fds 0 and 1 elsewhere
    so that neither a print() nor a child process can read requests or corrupt replies."""
    proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = os.fdopen(1, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)
    sys.stdin = open(os.devnull, "r")
    return proto_in, proto_out


def finite(value):
    """value with NaN and infinities as strings: JSON has no way to carry them."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def to_json(value):
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    except ValueError:
        return json.dumps(finite(value), ensure_ascii=False, allow_nan=False, default=str)


# --- loading --------------------------------------------------------------------------------

# MassGen's built-in tool modules, searched in this order when an entry has no path
# (massgen/tool/_manager.py, _load_builtin_function).
_BUILTIN_MODULES = ["_basic", "_code_executors", "_file_handlers", "_multimedia_processors", "workflow_toolkits"]


def where(entry):
    return entry.get("path") or entry.get("module") or "MassGen's built-in tools"


def frame_in_tool(exc):
    """The innermost traceback frame outside this worker and importlib: where the tool failed."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        name = frame.filename
        if name != _WORKER_FILE and not name.startswith("<frozen"):
            return frame
    return None


def describe_exception(exc):
    if isinstance(exc, SyntaxError):
        text = (exc.text or "").strip()
        out = "SyntaxError: %s (%s, line %s)" % (exc.msg, exc.filename, exc.lineno)
        return out + (": " + text if text else "")
    out = "%s: %s" % (type(exc).__name__, exc)
    frame = frame_in_tool(exc)
    if frame is not None:
        out += " (%s, line %d, in %s)" % (frame.filename, frame.lineno, frame.name)
    return out


class Tools:
    def __init__(self, manifest):
        self.entries = {t["key"]: t for t in manifest.get("tools", [])}
        self.modules = {}  # file path -> module
        self.funcs = {}

    def module_from_file(self, path):
        if path in self.modules:
            return self.modules[path]
        if not os.path.isfile(path):
            raise ToolError("%s does not exist" % path)
        # Registered in sys.modules as MassGen does, under the file's stem unless that is taken:
        # dataclasses and pickle look classes up there.
        stem = os.path.splitext(os.path.basename(path))[0]
        name = stem if stem not in sys.modules else "massgen_custom_tool_%d_%s" % (len(self.modules), stem)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ToolError("%s cannot be imported as a Python file" % path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        self.modules[path] = module
        return module

    def candidates(self, entry):
        """The modules to look for the function in, as MassGen's loader tries them."""
        if entry.get("path"):
            return [self.module_from_file(entry["path"])]
        if entry.get("module"):
            name = entry["module"]
            for full in ("massgen.tool." + name, name):
                try:
                    return [importlib.import_module(full)]
                except ModuleNotFoundError as exc:
                    # Only the module itself missing means "try the next name"; a dependency
                    # it lacks is the error to report.
                    if exc.name and full != exc.name and not full.startswith(exc.name + "."):
                        raise
            raise ToolError("no module %s (nor massgen.tool.%s) can be imported" % (name, name))
        found = []
        for name in _BUILTIN_MODULES:
            try:
                found.append(importlib.import_module("massgen.tool." + name))
            except ImportError:
                continue
        found.append(importlib.import_module("massgen.tool"))
        return found

    def function(self, key):
        if key in self.funcs:
            return self.funcs[key]
        entry = self.entries.get(key)
        if entry is None:
            raise ToolError("no tool %r is configured" % key)
        fname = entry["function"]
        try:
            modules = self.candidates(entry)
        except ToolError as exc:
            raise ToolError("%s: %s" % (where(entry), exc))
        except BaseException as exc:
            raise ToolError("%s: importing it failed: %s" % (where(entry), describe_exception(exc)))
        for module in modules:
            func = getattr(module, fname, None)
            if func is not None:
                break
        else:
            if not entry.get("path") and not entry.get("module"):
                raise ToolError("`%s` is not one of MassGen's built-in tools here: they are found when massgen runs in a "
                                "MassGen checkout or where MassGen is installed (pip install massgen); or add path: with a .py "
                                "file that defines it" % fname)
            module = modules[0]
            own = sorted(n for n, v in vars(module).items()
                         if inspect.isfunction(v) and not n.startswith("_") and getattr(v, "__module__", None) == module.__name__)
            raise ToolError("%s has no function `%s`%s" % (where(entry), fname,
                                                           "; it defines: " + ", ".join(own) if own else ""))
        if not callable(func):
            raise ToolError("%s: `%s` is not a function" % (where(entry), fname))
        self.funcs[key] = func
        return func


# --- schemas --------------------------------------------------------------------------------

_GOOGLE_SECTIONS = {"args", "arguments", "parameters", "params", "raises", "exceptions", "except", "attributes",
                    "example", "examples", "returns", "yields"}
_PARAM_SECTIONS = {"args", "arguments", "parameters", "params"}
_NUMPY_SECTIONS = {"parameters", "params", "other parameters", "returns", "yields", "raises", "see also",
                   "notes", "examples", "attributes", "warns", "warnings", "references"}
_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(:.*)?$")
_REST_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")


def indent(line):
    return len(line) - len(line.lstrip())


def join_lines(first, rest):
    """A description: its first line and the lines below it, their common indent removed."""
    lines = list(rest)
    while lines and not lines[-1].strip():
        lines.pop()
    body = inspect.cleandoc("\n".join(["x"] + lines))[1:].lstrip("\n") if lines else ""
    return (first.strip() + ("\n" + body if body else "")).strip()


def numpy_header(lines, i):
    """Whether lines[i] is a NumPy section title: a known title over a line of dashes."""
    return (i + 1 < len(lines) and re.match(r"^\s*-{3,}\s*$", lines[i + 1]) is not None
            and lines[i].strip().lower() in _NUMPY_SECTIONS)


def parse_doc(doc):
    """The description and the parameters' descriptions of a Google, NumPy or reST docstring."""
    lines = doc.splitlines()
    params = {}
    cut = len(lines)
    i = 0
    while i < len(lines):
        raw = lines[i]
        text = raw.strip()
        low = text.rstrip(":").strip().lower()
        numpy = numpy_header(lines, i)
        google = text.endswith(":") and low in _GOOGLE_SECTIONS
        rest = _REST_PARAM.match(text) or text.startswith((":returns", ":return", ":raises", ":rtype"))
        if not (numpy or google or rest):
            i += 1
            continue
        cut = min(cut, i)
        if rest:
            m = _REST_PARAM.match(text)
            j = i + 1
            while j < len(lines) and lines[j].strip() and not lines[j].strip().startswith(":"):
                j += 1
            if m:
                params[m.group(1)] = join_lines(m.group(2), lines[i + 1:j])
            i = j
            continue
        base = indent(raw)
        j = i + (2 if numpy else 1)
        body = []
        # A Google section ends where the text comes back to the header's indent; a NumPy
        # section's entries sit at that indent, so it ends at the next NumPy header only.
        while j < len(lines):
            line = lines[j]
            if line.strip() and indent(line) <= base and (not numpy or numpy_header(lines, j)):
                break
            body.append(line)
            j += 1
        if low in _PARAM_SECTIONS:
            parse_entries(body, numpy, params)
        i = j
    head = lines[:cut]
    while head and not head[-1].strip():
        head.pop()
    while head and not head[0].strip():
        head.pop(0)
    description = ""
    if head:
        short, long = head[0].strip(), "\n".join(head[1:]).strip()
        description = short + ("\n\n" + long if long else "")
    return description, params


def parse_entries(body, numpy, params):
    nonblank = [l for l in body if l.strip()]
    if not nonblank:
        return
    level = min(indent(l) for l in nonblank)
    name, first, rest = None, "", []
    for line in body:
        if line.strip() and indent(line) == level:
            if name:
                params[name] = join_lines(first, rest)
            m = (_NUMPY_ENTRY if numpy else _ENTRY).match(line.strip())
            if m:
                name, first, rest = m.group(1), ("" if numpy else m.group(3)), []
            else:
                name = None
        elif name:
            rest.append(line)
    if name:
        params[name] = join_lines(first, rest)


_NONE = type(None)


def json_schema(tp):
    """A JSON schema for a type hint, as pydantic (which MassGen uses) would give, without
    titles; Optional[X] is X's schema."""
    if tp is inspect.Parameter.empty or tp is typing.Any or tp is object:
        return {}
    if isinstance(tp, str):  # an annotation that could not be resolved
        return {}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is _NONE:
        return {"type": "null"}
    if origin is typing.Union or type(tp).__name__ == "UnionType":
        rest = [a for a in args if a is not _NONE]
        if len(rest) == 1:
            return json_schema(rest[0])
        return {"anyOf": [json_schema(a) for a in rest]}
    if origin is typing.Literal:
        values = list(args)
        out = {"enum": values}
        kinds = {type(v) for v in values}
        if len(kinds) == 1:
            t = scalar_type(kinds.pop())
            if t:
                out["type"] = t
        return out
    if hasattr(typing, "Annotated") and origin is typing.Annotated:
        return json_schema(args[0])
    t = scalar_type(tp)
    if t:
        return {"type": t}
    container = origin or tp
    if container in (list, tuple, set, frozenset) or (inspect.isclass(container) and issubclass(container, (list, tuple, set, frozenset))):
        if container is tuple and len(args) > 1 and args[1] is not Ellipsis:
            return {"type": "array", "prefixItems": [json_schema(a) for a in args]}
        return {"type": "array", "items": json_schema(args[0]) if args else {}}
    if container is dict or (inspect.isclass(container) and issubclass(container, dict)):
        out = {"type": "object"}
        if len(args) == 2:
            out["additionalProperties"] = json_schema(args[1])
        return out
    if inspect.isclass(tp) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if hasattr(tp, "model_json_schema"):  # a pydantic model
        try:
            return strip_titles(tp.model_json_schema())
        except Exception:
            return {"type": "object"}
    return {}


def scalar_type(tp):
    if tp is bool:
        return "boolean"
    if tp is int:
        return "integer"
    if tp is float:
        return "number"
    if tp in (str, bytes):
        return "string"
    return ""


def strip_titles(obj):
    if isinstance(obj, dict):
        return {k: strip_titles(v) for k, v in obj.items() if k != "title"}
    if isinstance(obj, list):
        return [strip_titles(v) for v in obj]
    return obj


# Parameters massgen always sets itself, whether or not a tool declares them with @context_params.
_MASSGEN_PARAMS = {"agent_cwd", "agent_id"}


def hidden(func):
    """Parameters massgen sets itself (agent_cwd, agent_id and MassGen's @context_params): they
    are kept out of the schema, and the model's values for them never reach the tool."""
    return set(getattr(func, "__context_params__", set()) or set()) | _MASSGEN_PARAMS


def describe(key, func):
    sig = inspect.signature(func)
    try:
        hints = typing.get_type_hints(func)
    except Exception:
        hints = {}
    description, docs = parse_doc(inspect.getdoc(func) or "")
    props, required = {}, []
    skip = hidden(func)
    for name, p in sig.parameters.items():
        if name in ("self", "cls") or name in skip or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        schema = json_schema(hints.get(name, p.annotation))
        if docs.get(name):
            schema["description"] = docs[name]
        if p.default is p.empty:
            required.append(name)
        else:
            try:
                json.dumps(p.default, allow_nan=False)
                schema["default"] = p.default
            except (TypeError, ValueError):
                pass
        props[name] = schema
    params = {"type": "object", "properties": props}
    if required:
        params["required"] = required
    return {"name": key, "description": description, "parameters": params, "context_params": sorted(skip)}


# --- calls ----------------------------------------------------------------------------------


def blocks_of(value):
    """The content blocks of what a tool returned or yielded, and whether it is a log (shown
    while running, kept out of the result)."""
    if value is None:
        return [], False
    if hasattr(value, "output_blocks"):
        out = []
        for b in getattr(value, "output_blocks", None) or []:
            kind = getattr(b, "block_type", "text") or "text"
            data = getattr(b, "data", None)
            if data is None:
                data = getattr(b, "content", "")
            if kind in ("image", "audio"):
                data = "" if data is None else str(data)
                block = {"type": kind, "size": len(data)}
                if len(data) <= 1024 and (data.startswith(("http://", "https://", "file:")) or os.path.exists(data)):
                    block["ref"] = data
                out.append(block)
            else:
                out.append({"type": "text", "text": str(data)})
        return out, bool(getattr(value, "is_log", False))
    if isinstance(value, str):
        return [{"type": "text", "text": value}], False
    if isinstance(value, (dict, list, tuple, int, float, bool)):
        return [{"type": "text", "text": to_json(value)}], False
    return [{"type": "text", "text": str(value)}], False


def text_of(blocks):
    return "".join(b.get("text", "") for b in blocks if b.get("type") == "text")


class Worker:
    def __init__(self, manifest, out):
        self.tools = Tools(manifest)
        self.out = out
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)

    def send(self, msg):
        self.out.write(to_json(msg) + "\n")
        self.out.flush()

    def handle(self, line):
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("a request is a JSON object")
        except ValueError as exc:
            self.send({"id": None, "ok": False, "error": "unreadable request: %s" % exc})
            return
        rid = req.get("id")
        try:
            op = req.get("op")
            if op == "describe":
                keys = [req["function"]] if req.get("function") else list(self.tools.entries)
                result = {"tools": [describe(k, self.tools.function(k)) for k in keys]}
            elif op == "call":
                result = self.call(rid, req.get("function"), req.get("args"), req.get("context") or {})
            else:
                raise ToolError("unknown op %r: use describe or call" % op)
            reply = {"id": rid, "ok": True, "result": result}
        except ToolError as exc:
            reply = {"id": rid, "ok": False, "error": str(exc)}
        except (Exception, SystemExit) as exc:
            traceback.print_exc(file=sys.stderr)
            reply = {"id": rid, "ok": False, "error": describe_exception(exc)}
        # The mark tells massgen that everything the call wrote to stderr, its child processes
        # included, is in the pipe before it: that output belongs to this call.
        sys.stdout.flush()
        sys.stderr.write("%smassgen-end %s\n" % (_MARK, rid))
        sys.stderr.flush()
        self.send(reply)

    def call(self, rid, key, args, context):
        func = self.tools.function(key)
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise ToolError("the arguments must be a JSON object of parameter names to values")
        sig = inspect.signature(func)
        params = sig.parameters
        takes_any = any(p.kind == p.VAR_KEYWORD for p in params.values())
        skip = hidden(func)
        # massgen drops these from the model's arguments too; here as well, so that a value the
        # model chose (agent_cwd: /etc) can never stand in for the one massgen sets.
        args = {k: v for k, v in args.items() if k not in skip}
        shown = [n for n, p in params.items() if n not in skip and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        unknown = [k for k in args if k not in params or params[k].kind == inspect.Parameter.VAR_POSITIONAL]
        if unknown and not takes_any:
            raise ToolError("unknown parameter%s %s; %s takes: %s" % ("s" if len(unknown) > 1 else "", ", ".join(sorted(unknown)), key,
                                                                   ", ".join(shown) or "no parameters"))
        kwargs = dict(args)
        for name in skip:
            if name in context and (name in params or takes_any):
                kwargs[name] = context[name]
        missing = [n for n, p in params.items() if p.default is p.empty and n not in kwargs
                   and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and n not in ("self", "cls")]
        if missing:
            raise ToolError("missing required parameter%s: %s" % ("s" if len(missing) > 1 else "", ", ".join(missing)))
        value = func(**kwargs)
        if inspect.isawaitable(value):
            value = self.loop.run_until_complete(value)
        content = []

        def step(item):
            blocks, log = blocks_of(item)
            text = text_of(blocks)
            if text:
                self.send({"id": rid, "output": text})
            if not log:
                content.extend(blocks)

        if inspect.isasyncgen(value):
            async def drain():
                async for item in value:
                    step(item)

            self.loop.run_until_complete(drain())
        elif inspect.isgenerator(value):
            for item in value:
                step(item)
        else:
            content, _ = blocks_of(value)
        return {"content": content}


def main():
    proto_in, proto_out = claim_stdio()
    with open(sys.argv[1], encoding="utf-8") as f:
        manifest = json.load(f)
    # The shim (massgen/ beside this file) comes first, as sys.path[0]; these come last.
    for p in manifest.get("sys_path", []):
        if p and p not in sys.path:
            sys.path.append(p)
    worker = Worker(manifest, proto_out)
    while True:
        line = proto_in.readline()
        if not line:
            return
        if line.strip():
            worker.handle(line)


if __name__ == "__main__":
    main()
