"""The ranklens command line."""
