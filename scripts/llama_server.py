"""llama-cpp-python's OpenAI-compatible server, accepting ``response_format: json_schema``.

    python scripts/llama_server.py [llama_cpp.server options...]

Run by ``scripts/calibrate_local.sh`` with the calibration server's Python (which has
``llama-cpp-python[server]``). The judges ask an ``openai`` model for structured output
with ``response_format={"type": "json_schema", "json_schema": {"schema": ...}}``, which
llama-cpp-python's server (0.3.x) rejects with a validation error: it knows only
``{"type": "json_object", "schema": ...}``, which constrains the reply to the same schema
with a grammar. This starts ``python -m llama_cpp.server`` unchanged, behind an ASGI
middleware that rewrites the first form into the second in chat-completion requests.
"""

from __future__ import annotations

import json
from typing import Any

from llama_cpp.server import __main__ as server_main

Scope = dict[str, Any]
Message = dict[str, Any]


def rewrite(body: bytes) -> bytes:
    """A chat-completion request body with a ``json_schema`` response format as ``json_object``."""
    try:
        request = json.loads(body)
    except ValueError:
        return body
    response_format = request.get("response_format") if isinstance(request, dict) else None
    if not isinstance(response_format, dict) or response_format.get("type") != "json_schema":
        return body
    schema = (response_format.get("json_schema") or {}).get("schema")
    request["response_format"] = {"type": "json_object"}
    if schema is not None:
        request["response_format"]["schema"] = schema
    return json.dumps(request).encode()


class JsonSchemaResponseFormat:
    """ASGI middleware applying ``rewrite`` to POST .../chat/completions request bodies."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if not (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and scope["path"].endswith("/chat/completions")
        ):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = rewrite(b"".join(chunks))
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app({**scope, "headers": headers}, replay, send)


def main() -> None:
    create_app = server_main.create_app
    server_main.create_app = lambda **kwargs: JsonSchemaResponseFormat(create_app(**kwargs))
    server_main.main()


if __name__ == "__main__":
    main()
