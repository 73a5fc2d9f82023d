"""Framework runs as child processes in their own environments (`frameworks.envs`).

The modules here are scripts run by a framework's own interpreter: they import only the
standard library, `protocol` beside them and the framework, never `whowhen`, whose
dependencies that environment does not have.
"""
