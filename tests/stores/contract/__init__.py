"""The store contract, a module per capability, run on every kind that has it."""
