"""Recording: from an observed response to a store write, off the request path: the
recorder's facade, the intake queue, the writer thread and the pure rules it applies."""
