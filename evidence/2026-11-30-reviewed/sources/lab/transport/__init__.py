"""Transports: the contract, the scripted double, and (for the live path) HTTP."""
