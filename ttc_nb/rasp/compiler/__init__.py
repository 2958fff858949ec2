"""The RASP compiler: passes that turn a program into a transformer, weights set, not trained."""
