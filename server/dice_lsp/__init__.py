"""dice-lsp: the DICE language server, a thin adapter from LSP to the `dice_engine` public API."""
