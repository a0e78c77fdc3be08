"""Prices: the dated table of what providers charge, and how a request is billed with a
prompt cache (write premiums, TTLs, cold caches).  Imports only the core."""
