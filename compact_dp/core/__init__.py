"""The decision core: pure functions from a scanned conversation and parameter values to
a decision.

Layers, each importing only those above it in this list:
``awkvalue`` (awk's values) · ``retention`` (r_t) · ``scan`` (bytes → token sizes and user
lines) · ``params`` (the parameter table) · ``quantities`` (Derived, Terms) · ``models``
(the models, steps 2–9) · ``search`` (the benefit curve and the best k) · ``decision``
(align, guard, turn-keep) · ``policy`` (the forced fallback).  Nothing here prints, reads
the environment or imports typer, rich or orjson.
"""
