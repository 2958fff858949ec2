"""The RASP compiler: widths, values, layout, weights; passes run once each, in order."""
