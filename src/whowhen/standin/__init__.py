"""The scripted stand-in model: responders over benchmark tasks, and the OpenAI-compatible
HTTP test server.

`responders` holds the deterministic rules the stand-in answers with (`framework_turns`
those for agents inside real frameworks); `server` (run as
`python -m whowhen.standin.server`) serves them over the OpenAI and Gemini HTTP APIs.
Importing this package registers `scripted/standin` with the model layer's scripted
provider, whose responders' revision (their source file's hash) joins the cache key.

Why a package of its own, above the benchmarks and the registry: the responders play
benchmark tasks (the agent role parses problems and writes tool calls, read from the
registry's tables), so they depend on benchmark code, and the model layer must not. The
scripted provider resolves `scripted/standin` to this package on its first lookup
(`scripted_provider.BUILTIN_RESPONDERS`), so no caller imports it for its side effect.
"""

from __future__ import annotations

from whowhen.models.scripted_provider import register_responder
from whowhen.standin import framework_turns, responders
from whowhen.standin.responders import default_responder

__all__ = ["NAME", "default_responder", "responders"]

NAME = "standin"
"""The stand-in's model name: its model id is `scripted/standin`."""

register_responder(NAME, default_responder, (responders.__file__, framework_turns.__file__))
