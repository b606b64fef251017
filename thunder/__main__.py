"""``python -m thunder`` runs the ``thunder`` command."""

from thunder.cli import main

main()
