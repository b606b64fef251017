"""The ``thunder`` subcommands other than LightningCLI's: one module per command, built on the library below."""
