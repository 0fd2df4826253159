"""Who is calling and what they may do: scopes, token verification, consent, credentials."""
