"""Concrete audits of concrete privacy claims: the planted-bug zoo (and, later, agent audits)."""
