"""A static walk of the page's State classes: does any event handler hand a conversation
reference to something that does not check whose it is? (for
tests/security/test_owner_walk.py)

Every public method of a Reflex State is an event a raw websocket client can call with any
arguments, and every state var a tab holds may have been set by an earlier event, so both
are *untrusted*: the handler's arguments and the vars that name a conversation
(`CONVERSATION_VARS`, read on any object). Following values through assignments, and into
the state's own methods they are passed to, a call that receives an untrusted value must be
one of:
- a call with `user_id=`: a store, run or service function that treats another person's
  row as missing (each proves that in its own tests: tests/db, tests/runs, tests/services);
- the owner-checked lookup itself (`conversation_for`, `ChatState.owned_uuid`), whose result
  is trusted;
- harmless (`HARMLESS`: URLs, messages, logging, comparisons' helpers).
Anything else (a file read, a bridge call without the person) is a finding.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# State vars that hold a conversation's uuid (whatever object they are read on).
CONVERSATION_VARS = frozenset({"current_uuid", "share_uuid", "renaming_uuid", "_ws_uuid"})
# Arguments of an event that name a conversation or a row of one (a client sends anything).
CONVERSATION_PARAMS = frozenset({"session_uuid", "message_id", "queued_id", "share_id"})
# Calls whose result is an untrusted conversation reference (the URL's path).
UNTRUSTED_SOURCES = frozenset({"route_session_id"})
# Calls that may receive untrusted values: they read nothing of a conversation.
HARMLESS = frozenset(
    {
        "str", "int", "bool", "len", "isinstance", "dict", "list", "tuple", "set", "max", "min",
        "json.dumps", "rx.redirect", "rx.call_script", "routes.chat_url", "routes.export_url",
        "log.info", "log.warning", "log.exception", "log.debug", "log.error",
        "self.show_error", "self._set", "self._set_if_changed", "setattr", "getattr",
        "clear_composer", "uuid.uuid4",
        "ConversationNotFound",  # the error that says it is not found
        "notices",  # compares the person's own sidebar rows with the shown uuid
    }
)  # fmt: skip


# The lookups that check the owner: their results are trusted.
def _owner_check(name: str) -> bool:
    """`conversation_for(...)`, or a state's `owned_uuid()` (`self.`, `chat.` …)."""
    return name == "conversation_for" or name.endswith(".owned_uuid")


# Reads that are allowed on an untrusted uuid, each with why.
EXEMPT = {
    "WorkspaceState.workspace_available": (
        "whether a folder of that name exists (the Workspace button shows): one bit about a "
        "uuid the tab holds, which load_chat forgets unless it is the person's; no content"
    ),
}
# Methods of untrusted strings that give untrusted strings.
PASSTHROUGH_METHODS = frozenset({"strip", "lower", "upper", "get", "removeprefix", "split"})


@dataclass(frozen=True)
class Finding:
    where: str  # Class.method
    line: str  # the call's source

    def __str__(self) -> str:
        return f"{self.where}: {self.line}"


@dataclass
class Walk:
    findings: list[Finding] = field(default_factory=list)
    # Entry points whose walk met an untrusted value at all (the walk is not vacuous).
    touching: set[str] = field(default_factory=set)
    _seen: set[tuple[Any, frozenset[str]]] = field(default_factory=set)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    if isinstance(node, ast.Call) and _dotted(node.func) == "self.svc":
        return "svc"
    return ""


def _function_ast(fn: Callable) -> ast.FunctionDef | ast.AsyncFunctionDef:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    return node


class _Taint:
    def __init__(self, untrusted: set[str]) -> None:
        self.names = set(untrusted)

    def of(self, node: ast.AST | None) -> bool:
        """Whether the expression's value may be an untrusted conversation reference."""
        match node:
            case None | ast.Constant() | ast.Compare() | ast.Lambda():
                return False
            case ast.Name(id=name):
                return name in self.names
            case ast.Attribute(attr=attr, value=value):
                return attr in CONVERSATION_VARS or (attr not in ("id",) and self.of(value))
            case ast.Await(value=value):
                return self.of(value)
            case ast.Call(func=func, args=args):
                name = _dotted(func)
                if name in UNTRUSTED_SOURCES:
                    return True
                if _owner_check(name):
                    return False
                if name in ("str",) and args:
                    return self.of(args[0])
                if isinstance(func, ast.Attribute) and func.attr in PASSTHROUGH_METHODS:
                    return self.of(func.value)
                return False  # what a function returns is its own (checked where it is called)
            case _:
                return any(self.of(child) for child in ast.iter_child_nodes(node))

    def assign(self, target: ast.AST, tainted: bool) -> bool:
        """Mark the plain names `target` binds (`a`, `a, b`, `*a`); an attribute or item
        assigned (`self.x = ...`) binds no local name."""
        if not tainted:
            return False
        if isinstance(target, ast.Name):
            if target.id in self.names:
                return False
            self.names.add(target.id)
            return True
        if isinstance(target, ast.Starred):
            return self.assign(target.value, tainted)
        if isinstance(target, ast.Tuple | ast.List):
            return any([self.assign(element, tainted) for element in target.elts])
        return False


def _flow(body: ast.AST, taint: _Taint) -> None:
    """Untrusted names through assignments, to a fixed point (order-insensitive)."""
    changed = True
    while changed:
        changed = False
        for node in ast.walk(body):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    changed |= taint.assign(target, taint.of(node.value))
            elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
                changed |= taint.assign(node.target, taint.of(node.value))
            elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
                changed |= taint.assign(node.target, taint.of(node.iter))
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                changed |= taint.assign(node.optional_vars, taint.of(node.context_expr))


def _method(cls: type, name: str, package: str) -> Callable | None:
    found = inspect.getattr_static(cls, name, None)
    fn = getattr(found, "fn", found)  # an EventHandler's function
    if isinstance(fn, staticmethod | classmethod):
        fn = fn.__func__
    if inspect.isfunction(fn) and fn.__module__.startswith(package):
        return fn
    return None


def walk_function(
    cls: type, fn: Callable, untrusted: set[str], walk: Walk, entry: str, package: str
) -> None:
    key = (fn, frozenset(untrusted))
    if key in walk._seen:
        return
    walk._seen.add(key)
    node = _function_ast(fn)
    taint = _Taint(untrusted)
    _flow(node, taint)
    where = f"{cls.__name__}.{fn.__name__}"
    if where in EXEMPT:
        walk.touching.add(entry)
        return
    if taint.names or any(taint.of(n) for n in ast.walk(node) if isinstance(n, ast.Attribute)):
        walk.touching.add(entry)
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        given = [a for a in call.args if taint.of(a)]
        given_kw = [k for k in call.keywords if taint.of(k.value)]
        name = _dotted(call.func)
        if _owner_check(name):
            continue
        callee = None
        if name.startswith("self.") and name.count(".") == 1:
            callee = _method(cls, name.split(".", 1)[1], package)
        if callee is not None:  # the state's own method: walked with what it is given
            params = list(inspect.signature(callee).parameters)[1:]
            inner = {
                p for i, p in enumerate(params) if i < len(call.args) and taint.of(call.args[i])
            }
            inner |= {k.arg for k in given_kw if k.arg}
            walk_function(cls, callee, inner, walk, entry, package)
            continue
        if not given and not given_kw:
            continue
        if any(k.arg == "user_id" for k in call.keywords):
            continue  # owner-checked by the callee
        if name in HARMLESS:
            continue
        walk.findings.append(Finding(where, ast.unparse(call)))


def walk_states(classes: list[type], package: str = "agent_chat.") -> Walk:
    """Every event handler (all a client can call: every public method of a State) and
    computed var of each class, as far as its code is in `package`."""
    walk = Walk()
    for cls in classes:
        for name, handler in cls.event_handlers.items():
            fn = handler.fn
            if not fn.__module__.startswith(package):
                continue  # Reflex's own (setvar reaches only the explicit set_* handlers)
            params = set(list(inspect.signature(fn).parameters)[1:]) & CONVERSATION_PARAMS
            walk_function(cls, fn, params, walk, f"{cls.__name__}.{name}", package)
        for name, var in cls.computed_vars.items():
            fget = getattr(var, "_fget", None)
            if fget is not None and fget.__module__.startswith(package):
                walk_function(cls, fget, set(), walk, f"{cls.__name__}.{name}", package)
    return walk


def state_classes(root: type) -> Iterator[type]:
    for sub in root.__subclasses__():
        yield sub
        yield from state_classes(sub)
