"""Sudoku puzzles and the networks that solve them: the RRN, its equilibrium, learned graphs."""
