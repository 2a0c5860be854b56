"""Command-line tools built on the core and the node."""
