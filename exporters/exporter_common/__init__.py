"""Code both exporters share: HTTP serving, web config (TLS/basic auth), logging, config errors."""
