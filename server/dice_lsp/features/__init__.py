"""One module per LSP concern; each exports `register(server)` wiring its handlers."""
