"""Helpers in a folder of their own: not a neighbour of any scenario, so the lab does not instrument them."""
