"""External wrenches: the measured ones as the dynamics fext, the contact observer and isolation."""
