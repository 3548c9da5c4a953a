"""GitHub workflows as data, and the few GitHub expressions they use, evaluated as GitHub does."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"


def load(name: str) -> dict[str, Any]:
    document = yaml.safe_load((WORKFLOWS / name).read_text())
    # YAML 1.1 reads the key `on` as True.
    document["on"] = document.pop(True, document.get("on"))
    return document


def all_workflows() -> dict[str, dict[str, Any]]:
    return {path.name: load(path.name) for path in sorted(WORKFLOWS.glob("*.yml"))}


class Expression:
    """The few GitHub expressions the workflows use: contexts, 'strings', ==, !=, &&, ||, (),
    format(), fromJSON(), and the status functions (cancelled(), failure(), success(),
    always()), which read the context's `status` ("success", "failure" or "cancelled" for the
    job's ancestors). `&&` and `||` return operands, as GitHub's do."""

    TOKEN = re.compile(r"\s*(?:('[^']*')|(==|!=|&&|\|\||[(),!])|([A-Za-z_][A-Za-z0-9_.-]*))")

    def __init__(self, text: str, context: dict[str, Any]):
        self.tokens: list[tuple[str, str]] = []
        position = 0
        text = text.strip()
        while position < len(text):
            match = self.TOKEN.match(text, position)
            assert match and match.end() > position, f"cannot read {text[position:]!r}"
            string, operator, name = match.groups()
            self.tokens.append(("str", string[1:-1]) if string else ("op", operator) if operator else ("name", name))
            position = match.end()
        self.context = context

    def evaluate(self) -> Any:
        value = self._or()
        assert not self.tokens, f"unread tokens {self.tokens}"
        return value

    def _take(self, kind: str, text: str | None = None) -> bool:
        if self.tokens and self.tokens[0][0] == kind and (text is None or self.tokens[0][1] == text):
            self.tokens.pop(0)
            return True
        return False

    def _or(self) -> Any:
        value = self._and()
        while self._take("op", "||"):
            other = self._and()
            value = value if value else other
        return value

    def _and(self) -> Any:
        value = self._compare()
        while self._take("op", "&&"):
            other = self._compare()
            value = other if value else value
        return value

    def _compare(self) -> Any:
        value = self._unary()
        while self.tokens and self.tokens[0] in (("op", "=="), ("op", "!=")):
            operator = self.tokens.pop(0)[1]
            other = self._unary()
            value = (value == other) if operator == "==" else (value != other)
        return value

    def _unary(self) -> Any:
        if self._take("op", "!"):
            return not self._unary()
        if self._take("op", "("):
            value = self._or()
            assert self._take("op", ")")
            return value
        kind, text = self.tokens.pop(0)
        if kind == "str":
            return text
        if self.tokens and self.tokens[0] == ("op", "(") and kind == "name":
            self._take("op", "(")
            arguments = []
            if not self._take("op", ")"):
                arguments.append(self._or())
                while self._take("op", ","):
                    arguments.append(self._or())
                assert self._take("op", ")")
            return self._call(text, arguments)
        value = self.context
        for part in text.split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return value

    def _call(self, name: str, arguments: list[Any]) -> Any:
        status = self.context.get("status", "success")
        if name == "format":
            return re.sub(r"\{(\d+)\}", lambda m: str(arguments[1 + int(m.group(1))]), arguments[0])
        if name == "fromJSON":
            return json.loads(arguments[0])
        if name in ("success", "failure", "cancelled"):
            # Either the one status of every earlier job, or each function's value.
            return status[name] if isinstance(status, dict) else status == name
        if name == "always":
            return True
        raise AssertionError(f"no function {name}() in this evaluator")


def render(value: Any, context: dict[str, Any]) -> Any:
    """A workflow value with its ${{ }} expressions evaluated (a whole-expression string keeps
    the expression's type, as in GitHub)."""
    if isinstance(value, dict):
        return {key: render(item, context) for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, context) for item in value]
    if not isinstance(value, str) or "${{" not in value:
        return value
    whole = re.fullmatch(r"\s*\$\{\{(.*?)\}\}\s*", value, re.S)
    if whole:
        return Expression(whole.group(1), context).evaluate()
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(Expression(m.group(1), context).evaluate()), value)


def condition(text: str, context: dict[str, Any]) -> bool:
    """A job's `if:` (which may omit the ${{ }})."""
    inner = re.fullmatch(r"\s*\$\{\{(.*)\}\}\s*", text, re.S)
    return bool(Expression(inner.group(1) if inner else text, context).evaluate())


STATUS_FUNCTIONS = re.compile(r"\b(success|failure|cancelled|always)\(\)")


def job_results(
    workflow: dict[str, Any], context: dict[str, Any], failing: frozenset[str] | set[str] = frozenset()
) -> dict[str, str]:
    """Each job's result as GitHub schedules them: in `needs` order, a job runs when its `if`
    holds, where an `if` without a status function means `success() && ...` and success() is
    true only when every job before it (transitively) succeeded, so a skipped one skips it;
    failure() is true when one before it failed. Jobs in `failing` fail when they run."""
    jobs = workflow["jobs"]
    results: dict[str, str] = {}

    def ancestors(name: str) -> set[str]:
        found: set[str] = set()
        pending = [jobs[name].get("needs", [])]
        while pending:
            needs = pending.pop()
            for need in [needs] if isinstance(needs, str) else needs:
                if need not in found:
                    found.add(need)
                    pending.append(jobs[need].get("needs", []))
        return found

    def result(name: str) -> str:
        if name not in results:
            before = [result(other) for other in sorted(ancestors(name))]
            status = {
                "success": all(r == "success" for r in before),
                "failure": any(r == "failure" for r in before),
                "cancelled": False,
            }
            text = str(jobs[name].get("if", "success()"))
            inner = re.fullmatch(r"\s*\$\{\{(.*)\}\}\s*", text, re.S)
            text = inner.group(1) if inner else text
            if not STATUS_FUNCTIONS.search(text):
                text = f"success() && ({text})"
            runs = bool(Expression(text, {**context, "status": status}).evaluate())
            results[name] = ("failure" if name in failing else "success") if runs else "skipped"
        return results[name]

    for name in jobs:
        result(name)
    return results
