"""Calibration: the profile of figures real sessions showed (``profile``) and how it is
fitted (``fit``); ``compact-dp calibrate`` and ``make calibrate`` run the fit."""
