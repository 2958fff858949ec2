"""Small worked examples of the whole protocol, from model to compute curve."""
