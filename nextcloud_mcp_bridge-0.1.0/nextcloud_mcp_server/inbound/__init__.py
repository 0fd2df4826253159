"""What every room that answers HTTP shares, below them all: who is calling (the client's
address, forwarded-address trust), the redirect-URI policy, and the HTML page kit (pages and
security headers that auth and authz render)."""
