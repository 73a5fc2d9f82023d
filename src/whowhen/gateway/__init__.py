"""The model gateway: record, replay and inject into the model calls of any agent
framework that speaks the OpenAI Chat Completions API (see `server`, `session`,
`exchange`, `forward`)."""
