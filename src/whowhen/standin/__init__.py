"""The scripted stand-in model: responders over benchmark tasks, and the OpenAI-compatible
HTTP test server.

`responders` holds the deterministic rules the stand-in answers with (`framework_turns`
those for agents inside real frameworks); `server` (run as
`python -m whowhen.standin.server`) serves them over the OpenAI and Gemini HTTP APIs.
Importing this package registers `scripted/standin` with the model layer's scripted
provider, whose responders' revision (their source file's hash) joins the cache key.

Why a package of its own, above the benchmarks: the responders play benchmark tasks
(the agent role parses problems and writes tool calls), so they depend on benchmark
code, and the model layer must not. Code that makes model clients imports this package
(the registry `whowhen.registry` does, and so every stage that uses it) so
that `scripted/standin` is a known model wherever a config can name it.
"""

from __future__ import annotations

from whowhen.models.scripted_provider import register_responder
from whowhen.standin import framework_turns, responders
from whowhen.standin.responders import default_responder

__all__ = ["NAME", "default_responder", "responders"]

NAME = "standin"
"""The stand-in's model name: its model id is `scripted/standin`."""

register_responder(NAME, default_responder, (responders.__file__, framework_turns.__file__))
