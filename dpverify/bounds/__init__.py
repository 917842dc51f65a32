"""Regret bounds of private RL as sympy expressions: registry, rates, evaluation, comparison,
consistency checks, the explicit constants of paper 000, plots and the generated docs table."""
