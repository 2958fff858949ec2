"""The RASP compiler: passes that turn a program into a transformer, its weights set, not trained."""
