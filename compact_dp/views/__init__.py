"""How a decision is shown: the plain number, words, ``--json`` and ``--explain``.

``words`` (sentences and amounts) and ``record`` (the ``--json`` object) import only the
core; ``console`` builds rich consoles; ``explain`` draws the table; ``emit`` picks one of
them for a front end.  rich and orjson are imported only by the modes that use them.
"""
