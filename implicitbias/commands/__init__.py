"""One module per CLI command; each defines ``register(subparsers)``."""
