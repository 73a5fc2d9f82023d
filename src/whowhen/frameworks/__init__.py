"""Real agent frameworks as systems: each adapter runs a framework's agents on a built-in
benchmark, its model calls through the gateway (`base`, `record`, one module per
framework)."""
