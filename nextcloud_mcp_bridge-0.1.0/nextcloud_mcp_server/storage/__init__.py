"""Secrets at rest: the encrypted SQLite store of grants, consent states and the audit trail."""
