"""``python -m ranklens ARGS`` is the ``ranklens`` console script (``python -m ranklens serve`` starts the monitor;
the monitor package itself imports no face, so it has no ``__main__`` of its own)."""

from ranklens.cli.entry import main

if __name__ == "__main__":
    main()
