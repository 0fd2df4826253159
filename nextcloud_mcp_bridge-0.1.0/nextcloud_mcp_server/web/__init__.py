"""The HTTP front: limits and the host guard before anything else, MCP sessions per user (and
across replicas), health, plain JSON answers. Above auth, authz and tools; below the app."""
