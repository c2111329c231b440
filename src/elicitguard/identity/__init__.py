"""Who is asking, and keeping their state theirs: the identity features.

* :mod:`~elicitguard.base.keys`: key material with ids and rotation (shared setups
  refuse a random key); :mod:`~elicitguard.identity.aead`: the AES-GCM primitive.
* :mod:`~elicitguard.identity.tokens`: bearer JWT verification and introspection;
  :mod:`~elicitguard.identity.principal`: the verified principal;
  :mod:`~elicitguard.identity.http_auth`: RFC 9728 challenges, metadata, ``RequireAuth``.
* :mod:`~elicitguard.identity.sealing`: ``requestState`` sealing;
  :mod:`~elicitguard.identity.binding`: URL-mode binding handles;
  :mod:`~elicitguard.identity.stores`: memory, SQLite and Redis state stores.
* :mod:`~elicitguard.identity.egress`: the egress guard (httpx transports);
  :mod:`~elicitguard.identity.vault`: third-party credentials kept from the client;
  :mod:`~elicitguard.identity.outbound`: the ``outbound_call`` items.
* :mod:`~elicitguard.identity.setup`: building all of it from a policy.
"""
